//! The scripted server's own behaviour over real loopback HTTP: routing, recording,
//! rules added at run time, and stopping on drop.

use std::io::{Read, Write};
use std::net::TcpStream;

use serde_json::json;

use super::*;

/// Sends one raw HTTP/1.1 request and returns the whole response text.
fn raw(addr: SocketAddr, method: &str, path: &str, body: &str) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: test\r\nX-Probe: Yes\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut out = String::new();
    stream.read_to_string(&mut out).unwrap();
    out
}

fn chat_body(last_user: &str) -> String {
    json!({"model": "m", "messages": [{"role": "user", "content": last_user}]}).to_string()
}

#[test]
fn url_ends_in_v1() {
    let llm = ScriptedLlm::queue(vec![]).unwrap();
    assert_eq!(
        llm.url(),
        format!("http://127.0.0.1:{}/v1", llm.addr().port())
    );
}

#[test]
fn answers_chat_requests_and_records_them_with_headers() {
    let llm = ScriptedLlm::start(vec![Rule::always(Reply::text("hi"))]).unwrap();
    let response = raw(llm.addr(), "POST", CHAT_PATH, &chat_body("q"));
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(response.contains("application/json"), "{response}");
    let body = response.split("\r\n\r\n").nth(1).unwrap();
    let value: Value = serde_json::from_str(body).unwrap();
    assert_eq!(value["choices"][0]["message"]["content"], "hi");
    assert_eq!(value["model"], "m");
    let seen = llm.recorded();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].number, 1);
    assert_eq!(seen[0].header("x-probe"), Some("Yes"));
    assert_eq!(seen[0].last_user(), Some("q"));
    assert_eq!(
        llm.requests(),
        vec![serde_json::from_str::<Value>(&chat_body("q")).unwrap()]
    );
}

#[test]
fn other_paths_get_404_and_are_recorded_too() {
    let llm = ScriptedLlm::start(vec![Rule::always(Reply::text("hi"))]).unwrap();
    let response = raw(llm.addr(), "GET", "/v1/models?x=1", "");
    assert!(response.starts_with("HTTP/1.1 404"), "{response}");
    assert!(
        response.contains("no route GET /v1/models?x=1"),
        "{response}"
    );
    let response = raw(llm.addr(), "GET", CHAT_PATH, "");
    assert!(response.starts_with("HTTP/1.1 404"), "{response}");
    let seen = llm.recorded();
    assert_eq!(seen.len(), 2);
    assert_eq!(
        (seen[0].method.as_str(), seen[0].path.as_str()),
        ("GET", "/v1/models?x=1")
    );
}

#[test]
fn non_json_bodies_are_recorded_as_strings() {
    let llm = ScriptedLlm::start(vec![Rule::always(Reply::text("hi"))]).unwrap();
    raw(llm.addr(), "POST", CHAT_PATH, "not json");
    assert_eq!(llm.requests(), vec![json!("not json")]);
}

#[test]
fn queue_answers_in_order_then_418() {
    let llm = ScriptedLlm::queue(vec![Reply::text("one"), Reply::status(503, "two")]).unwrap();
    assert!(raw(llm.addr(), "POST", CHAT_PATH, &chat_body("a")).contains("\"one\""));
    assert!(raw(llm.addr(), "POST", CHAT_PATH, &chat_body("b")).starts_with("HTTP/1.1 503"));
    let third = raw(llm.addr(), "POST", CHAT_PATH, &chat_body("c"));
    assert!(
        third.starts_with(&format!("HTTP/1.1 {NO_RULE_STATUS}")),
        "{third}"
    );
    assert!(
        third.contains("no rule matched request #3; last message: c"),
        "{third}"
    );
}

#[test]
fn rules_added_later_are_tried_after_the_first() {
    let llm = ScriptedLlm::start(vec![Rule::new(
        When::last_user_contains("a"),
        Reply::text("A"),
    )])
    .unwrap();
    llm.add_rules(vec![Rule::always(Reply::text("B"))]);
    assert!(raw(llm.addr(), "POST", CHAT_PATH, &chat_body("a")).contains("\"A\""));
    assert!(raw(llm.addr(), "POST", CHAT_PATH, &chat_body("z")).contains("\"B\""));
}

#[test]
fn computed_replies_see_the_request() {
    let llm = ScriptedLlm::start(vec![Rule::always(Reply::func(|r| {
        Reply::text(format!(
            "#{} echo {}",
            r.number,
            r.last_user().unwrap_or("")
        ))
    }))])
    .unwrap();
    assert!(raw(llm.addr(), "POST", CHAT_PATH, &chat_body("ping")).contains("#1 echo ping"));
}

#[test]
fn status_bodies_keep_their_type() {
    let llm = ScriptedLlm::queue(vec![
        Reply::status(500, "{\"e\":1}"),
        Reply::status(500, "plain"),
    ])
    .unwrap();
    assert!(raw(llm.addr(), "POST", CHAT_PATH, "{}").contains("content-type: application/json"));
    assert!(raw(llm.addr(), "POST", CHAT_PATH, "{}").contains("content-type: text/plain"));
}

#[test]
fn drop_stops_the_server_even_with_a_delayed_reply_pending() {
    let (arrived, wait_arrival) = std::sync::mpsc::channel();
    let arrived = std::sync::Mutex::new(arrived);
    let seen = When::custom(move |_| {
        let _ = arrived.lock().unwrap().send(());
        true
    });
    let late = Reply::delayed(std::time::Duration::from_secs(600), Reply::text("never"));
    let llm = ScriptedLlm::start(vec![Rule::new(seen, late)]).unwrap();
    let addr = llm.addr();
    let mut pending = TcpStream::connect(addr).unwrap();
    let body = chat_body("x");
    write!(
        pending,
        "POST {CHAT_PATH} HTTP/1.1\r\nHost: t\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    wait_arrival.recv().unwrap();
    drop(llm);
    assert!(
        TcpStream::connect(addr).is_err(),
        "still listening after drop"
    );
}

/// Sends one HTTP/1.0 request (so the body comes unchunked, ended by the close) and
/// returns the head and the body.
fn raw10(addr: SocketAddr, body: &str) -> (String, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "POST {CHAT_PATH} HTTP/1.0\r\nHost: test\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut out = String::new();
    stream.read_to_string(&mut out).unwrap();
    let (head, body) = out.split_once("\r\n\r\n").unwrap();
    (head.to_owned(), body.to_owned())
}

fn stream_body(last_user: &str, include_usage: bool) -> String {
    let mut body = json!({"model": "m", "stream": true,
        "messages": [{"role": "user", "content": last_user}]});
    if include_usage {
        body["stream_options"] = json!({"include_usage": true});
    }
    body.to_string()
}

/// The `data:` payloads of an SSE body, in order; `[DONE]` kept as a string.
fn events(body: &str) -> Vec<Value> {
    assert!(body.ends_with("\n\n"), "{body:?}");
    body.split_terminator("\n\n")
        .map(|e| {
            let data = e.strip_prefix("data: ").unwrap_or_else(|| panic!("{e:?}"));
            serde_json::from_str(data).unwrap_or_else(|_| Value::String(data.to_owned()))
        })
        .collect()
}

#[test]
fn streamed_requests_get_openai_shaped_events_with_usage_when_asked() {
    let llm = ScriptedLlm::queue(vec![
        Reply::text("Hello  big world").with_reasoning("hm"),
        Reply::text("Hello"),
    ])
    .unwrap();
    let (head, body) = raw10(llm.addr(), &stream_body("four words here now", true));
    assert!(head.starts_with("HTTP/1.0 200"), "{head}");
    assert!(head.contains("content-type: text/event-stream"), "{head}");
    let ev = events(&body);
    let deltas: Vec<&Value> = ev[..ev.len() - 3]
        .iter()
        .map(|e| &e["choices"][0]["delta"])
        .collect();
    assert_eq!(
        deltas,
        [
            &json!({"role": "assistant", "content": ""}),
            &json!({"reasoning_content": "hm"}),
            &json!({"content": "Hello  "}),
            &json!({"content": "big "}),
            &json!({"content": "world"}),
        ]
    );
    assert!(
        ev[..ev.len() - 2]
            .iter()
            .all(|e| e["usage"].is_null() && e["object"] == "chat.completion.chunk")
    );
    assert_eq!(ev[ev.len() - 3]["choices"][0]["finish_reason"], "stop");
    assert_eq!(
        ev[ev.len() - 2]["usage"],
        json!({"prompt_tokens": 4, "completion_tokens": 4, "total_tokens": 8})
    );
    assert_eq!(ev[ev.len() - 2]["choices"], json!([]));
    assert_eq!(ev[ev.len() - 1], json!("[DONE]"));

    // Without include_usage: no usage chunk and no `usage` field.
    let (_, body) = raw10(llm.addr(), &stream_body("x", false));
    let ev = events(&body);
    assert_eq!(ev.len(), 4, "{body}");
    assert!(ev.iter().all(|e| e.get("usage").is_none()));
    assert_eq!(llm.disconnects(), 0);
}

#[test]
fn streams_end_as_scripted() {
    let llm = ScriptedLlm::queue(vec![
        Reply::text("a b c").error_after(1, "boom"),
        Reply::text("a b c")
            .chunks_of(2)
            .usage(9, 9)
            .finish_reason("length"),
        Reply::text("x").pieces(["p", "q"]),
    ])
    .unwrap();
    let (_, body) = raw10(llm.addr(), &stream_body("x", true));
    let ev = events(&body);
    assert_eq!(ev.len(), 3, "{body}");
    assert_eq!(ev[1]["choices"][0]["delta"]["content"], "a ");
    assert_eq!(
        ev[2],
        json!({"error": {"message": "boom", "type": "server_error"}})
    );

    let (_, body) = raw10(llm.addr(), &stream_body("x", true));
    let ev = events(&body);
    let contents: Vec<&Value> = ev[1..4]
        .iter()
        .map(|e| &e["choices"][0]["delta"]["content"])
        .collect();
    assert_eq!(contents, [&json!("a "), &json!("b "), &json!("c")]);
    assert_eq!(ev[4]["choices"][0]["finish_reason"], "length");
    assert_eq!(ev[5]["usage"]["total_tokens"], 18);

    let (_, body) = raw10(llm.addr(), &stream_body("x", false));
    let ev = events(&body);
    assert_eq!(ev[1]["choices"][0]["delta"]["content"], "p");
    assert_eq!(ev[2]["choices"][0]["delta"]["content"], "q");
}

#[test]
fn a_stream_reply_to_a_plain_request_is_one_completion() {
    let llm = ScriptedLlm::queue(vec![
        Reply::text("a b")
            .chunks_of(1)
            .every(std::time::Duration::from_secs(600)),
    ])
    .unwrap();
    let response = raw(llm.addr(), "POST", CHAT_PATH, &chat_body("q"));
    let body = response.split("\r\n\r\n").nth(1).unwrap();
    let value: Value = serde_json::from_str(body).unwrap();
    assert_eq!(value, completion("a b", &llm.recorded()[0]));
}

#[test]
fn words_chunking_keeps_whitespace_with_the_word_before() {
    let s = Streamed::new("");
    assert_eq!(
        s.split("  Hi there,\nyou "),
        ["  ", "Hi ", "there,\n", "you "]
    );
    assert_eq!(s.split(""), Vec::<String>::new());
    let s = Streamed {
        chunking: Chunking::Chars(2),
        ..Streamed::new("")
    };
    assert_eq!(s.split("привет"), ["пр", "ив", "ет"]);
}

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

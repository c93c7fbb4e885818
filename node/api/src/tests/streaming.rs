//! Streamed completions: framing, errors before and after the first byte,
//! keep-alive (on tokio's paused clock), cancellation.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Response, StatusCode};
use futures::StreamExt as _;

use super::fakes::*;

fn stream_body(user: &str, include_usage: bool, messages: &[(&str, &str)]) -> String {
    let mut body: serde_json::Value =
        serde_json::from_str(&chat_body(Some(user), true, messages)).unwrap();
    body["stream_options"] = serde_json::json!({"include_usage": include_usage});
    body.to_string()
}

async fn next_frame(
    body: &mut (impl futures::Stream<Item = Result<axum::body::Bytes, axum::Error>> + Unpin),
) -> String {
    let bytes = body.next().await.expect("a frame").expect("no body error");
    String::from_utf8(bytes.to_vec()).unwrap()
}

fn id_of(response: &str) -> (String, u64) {
    let first = response
        .lines()
        .next()
        .unwrap()
        .trim_start_matches("data: ");
    let chunk: serde_json::Value = serde_json::from_str(first).unwrap();
    (
        chunk["id"].as_str().unwrap().to_owned(),
        chunk["created"].as_u64().unwrap(),
    )
}

#[tokio::test]
async fn the_final_chunk_of_a_friends_answer_says_whose_model_wrote_it() {
    let (state, _) = state(Some(Script::EchoVia(ANNA.to_owned())));
    let body = stream_body("ann", false, &[("user", "hi")]);
    let response = send(&state, request("POST", "/v1/chat/completions", &body)).await;
    assert_eq!(response.status(), StatusCode::OK);
    let text = body_text(response).await;
    let last = text
        .split("\n\n")
        .filter_map(|frame| frame.strip_prefix("data: "))
        .filter(|data| *data != "[DONE]")
        .map(|data| serde_json::from_str::<serde_json::Value>(data).unwrap())
        .last()
        .unwrap();
    assert_eq!(last["choices"][0]["finish_reason"], "stop", "{text}");
    assert_eq!(
        last["choices"][0]["delta"]["porfiry"]["via"],
        serde_json::json!({"peer": ANNA, "name": "anna"}),
        "{text}"
    );
}

#[tokio::test]
async fn a_streamed_completion_is_byte_exact_sse_ending_in_done() {
    let (state, _) = state(Some(Script::Echo));
    let body = stream_body("ann", true, &[("user", "hi")]);
    let response = send(&state, request("POST", "/v1/chat/completions", &body)).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let text = body_text(response).await;
    let (id, created) = id_of(&text);
    let head = format!(
        r#"{{"id":"{id}","object":"chat.completion.chunk","created":{created},"model":"porfiry","choices":"#
    );
    let expected = format!(
        "data: {head}[{{\"index\":0,\"delta\":{{\"role\":\"assistant\",\"content\":\"\"}},\"finish_reason\":null}}]}}\n\n\
         data: {head}[{{\"index\":0,\"delta\":{{\"content\":\"echo: \"}},\"finish_reason\":null}}]}}\n\n\
         data: {head}[{{\"index\":0,\"delta\":{{\"content\":\"hi\"}},\"finish_reason\":null}}]}}\n\n\
         data: {head}[{{\"index\":0,\"delta\":{{\"porfiry\":{{\"events\":[{{\"type\":\"show_text\",\"text\":\"shown\"}}],\"tools\":[{{\"name\":\"show_text\",\"ok\":true}}]}}}},\"finish_reason\":\"stop\"}}]}}\n\n\
         data: {head}[],\"usage\":{{\"prompt_tokens\":5,\"completion_tokens\":2,\"total_tokens\":7}}}}\n\n\
         data: [DONE]\n\n"
    );
    assert_eq!(text, expected);
}

#[tokio::test]
async fn a_model_down_before_the_first_byte_is_an_http_502() {
    let (state, _) = state(Some(Script::FailAtOnce));
    let body = stream_body("ann", false, &[("user", "hi")]);
    let (status, json) = call(&state, request("POST", "/v1/chat/completions", &body)).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY);
    assert_eq!(json["error"]["code"], "upstream_model_error");
}

#[tokio::test]
async fn a_failure_after_the_first_byte_is_an_error_event_then_done() {
    let (state, _) = state(Some(Script::FailMidway));
    let body = stream_body("ann", true, &[("user", "hi")]);
    let response = send(&state, request("POST", "/v1/chat/completions", &body)).await;
    assert_eq!(response.status(), StatusCode::OK);
    let text = body_text(response).await;
    assert!(text.contains(r#""delta":{"content":"partial"}"#), "{text}");
    assert!(
        text.ends_with(
            "data: {\"error\":{\"message\":\"the model failed: connection reset\",\
             \"type\":\"server_error\",\"code\":\"upstream_model_error\"}}\n\ndata: [DONE]\n\n"
        ),
        "{text}"
    );
}

fn hang() -> (Script, Arc<tokio::sync::Notify>, Arc<tokio::sync::Notify>) {
    let gate = Arc::new(tokio::sync::Notify::new());
    let dropped = Arc::new(tokio::sync::Notify::new());
    let script = Script::Hang {
        gate: gate.clone(),
        dropped: dropped.clone(),
    };
    (script, gate, dropped)
}

async fn start(state: &crate::ApiState) -> Response<Body> {
    let body = stream_body("ann", false, &[("user", "hi")]);
    send(state, request("POST", "/v1/chat/completions", &body)).await
}

#[tokio::test]
async fn a_slow_model_gets_keepalive_comments_until_it_answers() {
    let (script, gate, _) = hang();
    let log = Log::default();
    // A short interval keeps the test quick; the framing is what is checked.
    let state = crate::ApiState::with_keepalive(
        Arc::new(FakeNode),
        Some(Arc::new(FakeAgent { script, log })),
        crate::ApiToken::from_secret(TOKEN),
        Arc::new(clock()),
        std::time::Duration::from_millis(5),
    );
    let response = start(&state).await;
    let mut body = response.into_body().into_data_stream();
    assert!(
        next_frame(&mut body)
            .await
            .contains(r#""role":"assistant""#)
    );
    assert!(
        next_frame(&mut body)
            .await
            .contains(r#""content":"partial""#)
    );
    // Nothing comes from the model: comments keep the stream open.
    assert_eq!(next_frame(&mut body).await, ": keep-alive\n\n");
    assert_eq!(next_frame(&mut body).await, ": keep-alive\n\n");
    gate.notify_one();
    let mut rest = String::new();
    while let Some(frame) = body.next().await {
        rest.push_str(std::str::from_utf8(&frame.unwrap()).unwrap());
    }
    let rest = rest.replace(": keep-alive\n\n", "");
    assert!(rest.contains(r#""finish_reason":"stop""#), "{rest}");
    assert!(rest.ends_with("data: [DONE]\n\n"), "{rest}");
}

#[tokio::test]
async fn a_client_that_hangs_up_drops_the_turn_and_frees_the_session() {
    let (script, _gate, dropped) = hang();
    let (state, log) = state(Some(script));
    let response = start(&state).await;
    let mut body = response.into_body().into_data_stream();
    next_frame(&mut body).await;
    assert!(next_frame(&mut body).await.contains("partial"));
    drop(body);
    dropped.notified().await; // the turn's future (and the model request in it) is gone
    let agent = state.agent().unwrap().clone();
    let slot = state.session("ann", agent.as_ref());
    let slot = slot.try_lock().expect("the session is free again");
    assert!(
        slot.unfinished,
        "the next request resyncs the cut turn away"
    );
    drop(slot);
    assert_eq!(*log.lock().unwrap(), ["new", "send hi"]);
}

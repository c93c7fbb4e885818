//! Auth, errors, the model list and plain completions with sessions.

use axum::body::Body;
use axum::http::{Request, StatusCode};

use super::fakes::*;
use crate::limits::MAX_BODY_BYTES;

#[tokio::test]
async fn requests_without_or_with_a_wrong_token_get_401_with_the_error_object() {
    let (state, _) = state(Some(Script::Echo));
    let bare = Request::get("/v1/models").body(Body::empty()).unwrap();
    let wrong = Request::get("/v1/models")
        .header("authorization", format!("Bearer {}", "f".repeat(64)))
        .body(Body::empty())
        .unwrap();
    let unknown_route = Request::get("/nope").body(Body::empty()).unwrap();
    for request in [bare, wrong, unknown_route] {
        let response = send(&state, request).await;
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(response.headers()["www-authenticate"], "Bearer");
        let json: serde_json::Value = serde_json::from_str(&body_text(response).await).unwrap();
        assert_eq!(json["error"]["code"], "invalid_api_key");
        assert_eq!(json["error"]["type"], "authentication_error");
    }
}

#[tokio::test]
async fn unknown_routes_and_wrong_methods_get_the_error_object() {
    let (state, _) = state(Some(Script::Echo));
    let (status, json) = call(&state, request("GET", "/v1/nothing", "")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(
        json["error"]["message"],
        "no such endpoint: GET /v1/nothing"
    );
    let (status, json) = call(&state, request("GET", "/v1/chat/completions", "")).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(json["error"]["code"], "method_not_allowed");
}

#[tokio::test]
async fn a_body_over_the_cap_gets_413_and_malformed_json_400() {
    let (state, log) = state(Some(Script::Echo));
    let huge = format!(
        r#"{{"messages":[{{"role":"user","content":"{}"}}]}}"#,
        "a".repeat(MAX_BODY_BYTES)
    );
    let (status, json) = call(&state, request("POST", "/v1/chat/completions", &huge)).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(json["error"]["code"], "body_too_large");
    let (status, json) = call(
        &state,
        request("POST", "/v1/chat/completions", "{\"messages\":"),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        json["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not a valid request"),
        "{json}"
    );
    let (status, json) = call(
        &state,
        request("POST", "/v1/chat/completions", r#"{"model":"x"}"#),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        json["error"]["message"]
            .as_str()
            .unwrap()
            .contains("messages"),
        "{json}"
    );
    let last_is_assistant = chat_body(None, false, &[("user", "a"), ("assistant", "b")]);
    let (status, _) = call(
        &state,
        request("POST", "/v1/chat/completions", &last_is_assistant),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let empty = chat_body(None, false, &[("user", "   ")]);
    let (status, _) = call(&state, request("POST", "/v1/chat/completions", &empty)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(log.lock().unwrap().is_empty(), "no session was touched");
}

#[tokio::test]
async fn without_a_model_chat_gets_503_saying_how_to_configure_one() {
    let (state, _) = state(None);
    let body = chat_body(None, false, &[("user", "hi")]);
    let (status, json) = call(&state, request("POST", "/v1/chat/completions", &body)).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(
        json["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--llm-url"),
        "{json}"
    );
    // The rest of the API works.
    let (status, _) = call(&state, request("GET", "/api/status", "")).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn the_model_list_names_the_agent() {
    let (state, _) = state(Some(Script::Echo));
    let response = send(&state, request("GET", "/v1/models", "")).await;
    assert_eq!(response.status(), StatusCode::OK);
    let created = state.started_secs();
    assert_eq!(
        body_text(response).await,
        format!(
            r#"{{"object":"list","data":[{{"id":"porfiry","object":"model","created":{created},"owned_by":"porfiry"}}]}}"#
        )
    );
}

#[tokio::test]
async fn a_plain_completion_carries_the_answer_the_extension_and_usage() {
    let (state, _) = state(Some(Script::Echo));
    let body = chat_body(Some("ann"), false, &[("system", "be nice"), ("user", "hi")]);
    let (status, json) = call(&state, request("POST", "/v1/chat/completions", &body)).await;
    assert_eq!(status, StatusCode::OK, "{json}");
    assert_eq!(json["object"], "chat.completion");
    assert_eq!(json["model"], "porfiry");
    assert!(json["id"].as_str().unwrap().starts_with("chatcmpl-"));
    let choice = &json["choices"][0];
    assert_eq!(choice["message"]["role"], "assistant");
    assert_eq!(choice["message"]["content"], "echo: hi");
    assert_eq!(choice["finish_reason"], "stop");
    assert_eq!(
        choice["message"]["porfiry"],
        serde_json::json!({"events":[{"type":"show_text","text":"shown"}],"tools":[{"name":"show_text","ok":true}]})
    );
    assert_eq!(
        json["usage"],
        serde_json::json!({"prompt_tokens":5,"completion_tokens":2,"total_tokens":7})
    );
}

#[tokio::test]
async fn a_friends_answer_says_whose_model_wrote_it() {
    let stranger = "12D3KooWJWoaqZhDaoEFshF7Rh1bpY9ohihFhzcW6d69Lr2NASuq";
    for (peer, name) in [(ANNA, "anna"), (stranger, "12D3KooWJWoa…")] {
        let (state, _) = state(Some(Script::EchoVia(peer.to_owned())));
        let body = chat_body(Some("ann"), false, &[("user", "hi")]);
        let (status, json) = call(&state, request("POST", "/v1/chat/completions", &body)).await;
        assert_eq!(status, StatusCode::OK, "{json}");
        assert_eq!(
            json["choices"][0]["message"]["porfiry"]["via"],
            serde_json::json!({"peer": peer, "name": name}),
            "{json}"
        );
    }
}

#[tokio::test]
async fn an_upstream_failure_is_502_with_the_cause() {
    let (state, _) = state(Some(Script::FailAtOnce));
    let body = chat_body(None, false, &[("user", "hi")]);
    let (status, json) = call(&state, request("POST", "/v1/chat/completions", &body)).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY);
    assert!(
        json["error"]["message"]
            .as_str()
            .unwrap()
            .contains("connection refused")
    );
}

#[tokio::test]
async fn a_continued_conversation_sends_only_the_new_message_and_an_edit_replaces_history() {
    let (state, log) = state(Some(Script::Echo));
    let first = chat_body(Some("ann"), false, &[("user", "one")]);
    call(&state, request("POST", "/v1/chat/completions", &first)).await;
    let second = chat_body(
        Some("ann"),
        false,
        &[("user", "one"), ("assistant", "echo: one"), ("user", "two")],
    );
    call(&state, request("POST", "/v1/chat/completions", &second)).await;
    assert_eq!(*log.lock().unwrap(), ["new", "send one", "send two"]);
    // The user edited their first message: the session takes the client's history.
    let edited = chat_body(
        Some("ann"),
        false,
        &[("user", "uno"), ("assistant", "echo: one"), ("user", "two")],
    );
    call(&state, request("POST", "/v1/chat/completions", &edited)).await;
    assert_eq!(log.lock().unwrap()[3..], ["replace 2", "send two"]);
    assert_eq!(state.session_count(), 1);
}

#[tokio::test]
async fn two_users_keep_separate_sessions_and_no_user_gets_one_from_the_conversation() {
    let (state, log) = state(Some(Script::Echo));
    let ann = chat_body(Some("ann"), false, &[("user", "enable media")]);
    call(&state, request("POST", "/v1/chat/completions", &ann)).await;
    let bob = chat_body(Some("bob"), false, &[("user", "hello")]);
    call(&state, request("POST", "/v1/chat/completions", &bob)).await;
    let agent = state.agent().unwrap().clone();
    let shown = |slot: &crate::turn::SessionSlot| {
        slot.shown
            .iter()
            .map(|t| t.text.clone())
            .collect::<Vec<_>>()
    };
    let ann_slot = state.session("ann", agent.as_ref());
    let bob_slot = state.session("bob", agent.as_ref());
    assert_eq!(
        shown(&*ann_slot.lock().await),
        ["enable media", "echo: enable media"]
    );
    assert_eq!(shown(&*bob_slot.lock().await), ["hello", "echo: hello"]);
    // The header wins over `user`.
    let mut by_header = request(
        "POST",
        "/v1/chat/completions",
        &chat_body(Some("bob"), false, &[("user", "x")]),
    );
    by_header
        .headers_mut()
        .insert("x-porfiry-session", "carol".parse().unwrap());
    call(&state, by_header).await;
    let anonymous = chat_body(None, false, &[("user", "hello")]);
    call(&state, request("POST", "/v1/chat/completions", &anonymous)).await;
    assert_eq!(
        state.session_count(),
        4,
        "ann, bob, carol, the conversation"
    );
    // The anonymous client resends its conversation: the same session goes on.
    let resent = chat_body(
        None,
        false,
        &[
            ("user", "hello"),
            ("assistant", "echo: hello"),
            ("user", "more"),
        ],
    );
    call(&state, request("POST", "/v1/chat/completions", &resent)).await;
    assert_eq!(state.session_count(), 4);
    let log = log.lock().unwrap();
    assert_eq!(log.iter().filter(|l| *l == "new").count(), 4);
    assert_eq!(
        log[log.len() - 1],
        "send more",
        "appended, not replaced: {log:?}"
    );
}

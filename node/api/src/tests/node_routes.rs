//! `/api/notes`, `/api/friends`, `/api/status` over the fake node.

use axum::http::StatusCode;

use super::fakes::*;

#[tokio::test]
async fn notes_are_listed_by_origin_and_posted_with_an_audience() {
    let (state, _) = state(None);
    let (status, json) = call(&state, request("GET", "/api/notes?origin=own&limit=5", "")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        json,
        serde_json::json!([{"text":"hi","origin":"own","limit":5,"newest":false,"audience":null}])
    );
    let (_, json) = call(&state, request("GET", "/api/notes?newest=true", "")).await;
    assert_eq!(json[0]["newest"], true);
    assert_eq!(json[0]["limit"], 50);
    let (status, _) = call(&state, request("GET", "/api/notes?limit=0", "")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _) = call(&state, request("GET", "/api/notes?limit=x", "")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, json) = call(&state, request("POST", "/api/notes", r#"{"text":"hello"}"#)).await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(json["audience"], "friends");
    let (status, json) = call(
        &state,
        request("POST", "/api/notes", r#"{"text":" ","audience":"public"}"#),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(json["error"]["message"], "the note is empty");
}

#[tokio::test]
async fn notes_are_filtered_by_audience_and_an_unknown_one_is_refused_saying_which_exist() {
    let (state, _) = state(None);
    for given in [
        "friends",
        "public",
        "private",
        "group:family",
        "club:chess",
        "club:chess@12D3KooWQiz72eyQExYNjKFgUEu7YqqgjPgqMuqXJvcY7PWQ96dW",
        "peer:anna",
    ] {
        let path = format!(
            "/api/notes?newest=true&audience={}",
            given.replace('@', "%40")
        );
        let (status, json) = call(&state, request("GET", &path, "")).await;
        assert_eq!(status, StatusCode::OK, "{given}: {json}");
        assert_eq!(json[0]["audience"], given, "passed on to the node as given");
    }
    for given in ["everyone", "club:", "group:", "peer:%20", ""] {
        let path = format!("/api/notes?audience={given}");
        let (status, json) = call(&state, request("GET", &path, "")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{given:?}: {json}");
        let message = json["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with("unknown audience filter") && message.contains("club:NAME"),
            "{message}"
        );
    }
}

#[tokio::test]
async fn a_reply_names_the_item_it_answers_and_a_bad_id_is_refused() {
    let (state, _) = state(None);
    let parent = "ab".repeat(32);
    let body = format!(r#"{{"text":"yes, seven","reply_to":"{parent}"}}"#);
    let (status, json) = call(&state, request("POST", "/api/notes", &body)).await;
    assert_eq!(status, StatusCode::CREATED, "{json}");
    assert_eq!(json["reply_to"], parent);
    let (_, json) = call(&state, request("POST", "/api/notes", r#"{"text":"plain"}"#)).await;
    assert_eq!(json["reply_to"], serde_json::Value::Null);
    for bad in ["xyz", "ab", "", &"g".repeat(64)] {
        let body = format!(r#"{{"text":"x","reply_to":"{bad}"}}"#);
        let (status, json) = call(&state, request("POST", "/api/notes", &body)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad:?}: {json}");
        let message = json["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with("bad reply_to") && message.contains("64 hex digits"),
            "{message}"
        );
    }
    let (status, _) = call(
        &state,
        request("POST", "/api/notes", r#"{"text":"x","reply_to":7}"#),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "not a string");
}

#[tokio::test]
async fn friends_are_added_listed_and_removed() {
    let (state, _) = state(None);
    let body =
        r#"{"peer":"12D3KooWx","addresses":["/ip4/127.0.0.1/tcp/4001"],"groups":["family"]}"#;
    let (status, json) = call(&state, request("POST", "/api/friends", body)).await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(json["groups"][0], "family");
    let (status, _) = call(&state, request("GET", "/api/friends", "")).await;
    assert_eq!(status, StatusCode::OK);
    let (status, json) = call(&state, request("DELETE", "/api/friends/12D3KooWx", "")).await;
    assert_eq!(
        (status, json),
        (StatusCode::NO_CONTENT, serde_json::Value::Null)
    );
    let (status, json) = call(&state, request("DELETE", "/api/friends/stranger", "")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(json["error"]["message"], "stranger is not a friend");
}

#[tokio::test]
async fn a_node_without_names_refuses_a_name_rather_than_drop_it() {
    let (state, _) = state(None);
    let body = r#"{"peer":"12D3KooWx","name":"anna"}"#;
    let (status, json) = call(&state, request("POST", "/api/friends", body)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        json["error"]["message"],
        "name is not supported by this node"
    );
}

#[tokio::test]
async fn status_adds_the_model_in_use_and_the_version() {
    let (state, _) = state(Some(Script::Echo));
    let (_, json) = call(&state, request("GET", "/api/status", "")).await;
    assert_eq!(
        json,
        serde_json::json!({"peer_id":"12D3KooWfake","model":"fake-model",
            "model_source": {"kind": "server", "detail": "http://127.0.0.1:9/v1"},
            "version": env!("CARGO_PKG_VERSION")})
    );
    let qr = send(&state, request("GET", "/api/peer-qr", "")).await;
    assert_eq!(qr.headers()["content-type"], "image/svg+xml");
    assert!(body_text(qr).await.contains("<svg"));
    let (state, _) = super::fakes::state(None);
    let (_, json) = call(&state, request("GET", "/api/status", "")).await;
    assert_eq!(json["model"], serde_json::Value::Null);
    assert_eq!(json["model_source"], serde_json::Value::Null);
}

//! A friend's models permission (`allow_models`, what `porfiry run
//! --share-models` serves by) through `POST /api/friends` and `PATCH
//! /api/friends/{peer}` on a real node, checked where the model-share
//! server reads it.

use std::sync::Arc;

use axum::http::StatusCode;

use super::fakes::*;
use crate::adapters::NodeAdapter;
use crate::{ApiState, ApiToken};
use porfiry_mesh::data_dir::DataDir;
use porfiry_mesh::net::{Keypair, PeerId, Profile};
use porfiry_mesh::node::{Node, NodeConfig, NodeHandle};

/// Whether the model-share server would let `peer` pull this node's models
/// (the same check its `DbPermissions` makes on every request).
async fn may_pull(node: &NodeHandle, peer: &str) -> bool {
    let peer: PeerId = peer.parse().unwrap();
    node.db()
        .read(move |s| porfiry_model_share::may_pull_models(s, &peer))
        .await
        .unwrap()
        .unwrap()
}

fn new_peer() -> String {
    Keypair::generate_ed25519()
        .public()
        .to_peer_id()
        .to_string()
}

/// The friend called `peer` in `GET /api/friends`.
async fn listed(state: &ApiState, peer: &str) -> serde_json::Value {
    let (status, friends) = call(state, request("GET", "/api/friends", "")).await;
    assert_eq!(status, StatusCode::OK, "{friends}");
    friends
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["peer_id"] == peer)
        .cloned()
        .unwrap_or_else(|| panic!("{peer} not in {friends}"))
}

#[tokio::test]
async fn the_models_permission_is_set_kept_and_shown_as_the_model_share_server_reads_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path().join("node"));
    let (node, join) = Node::spawn(NodeConfig::new(dir, Profile::Server, Vec::new())).unwrap();
    let state = ApiState::new(
        Arc::new(NodeAdapter::new(node.clone())),
        None,
        ApiToken::from_secret(TOKEN),
        Arc::new(clock()),
    );

    // A new friend added without the key starts without it.
    let anna = new_peer();
    let body = format!(r#"{{"peer":"{anna}","name":"anna"}}"#);
    let (status, added) = call(&state, request("POST", "/api/friends", &body)).await;
    assert_eq!(status, StatusCode::CREATED, "{added}");
    assert_eq!(added["allow_models"], false, "{added}");
    assert_eq!(listed(&state, &anna).await["allow_models"], false);
    assert!(!may_pull(&node, &anna).await);

    // PATCH grants it (by name), keeping the offload permission.
    let (status, changed) = call(
        &state,
        request("PATCH", "/api/friends/anna", r#"{"allow_models":true}"#),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{changed}");
    assert_eq!(changed["allow_models"], true, "{changed}");
    assert_eq!(changed["allow_offload"], false, "{changed}");
    assert_eq!(listed(&state, &anna).await["allow_models"], true);
    assert!(may_pull(&node, &anna).await);

    // Adding her again without the key keeps it.
    let body = format!(r#"{{"peer":"{anna}","allow_offload":true}}"#);
    let (status, again) = call(&state, request("POST", "/api/friends", &body)).await;
    assert_eq!(status, StatusCode::CREATED, "{again}");
    assert_eq!(again["allow_models"], true, "{again}");
    assert_eq!(again["allow_offload"], true, "{again}");
    assert_eq!(again["name"], "anna", "{again}");
    assert!(may_pull(&node, &anna).await);

    // PATCH takes it back, keeping the offload permission.
    let path = format!("/api/friends/{anna}");
    let (status, changed) =
        call(&state, request("PATCH", &path, r#"{"allow_models":false}"#)).await;
    assert_eq!(status, StatusCode::OK, "{changed}");
    assert_eq!(changed["allow_models"], false, "{changed}");
    assert_eq!(changed["allow_offload"], true, "{changed}");
    assert!(!may_pull(&node, &anna).await);

    // A new friend may be added with it, and only that friend gets it.
    let bob = new_peer();
    let body = format!(r#"{{"peer":"{bob}","allow_models":true}}"#);
    let (status, added) = call(&state, request("POST", "/api/friends", &body)).await;
    assert_eq!(status, StatusCode::CREATED, "{added}");
    assert_eq!(added["allow_models"], true, "{added}");
    assert_eq!(added["allow_offload"], false, "{added}");
    assert_eq!(listed(&state, &bob).await["allow_models"], true);
    assert!(may_pull(&node, &bob).await);
    assert!(!may_pull(&node, &anna).await);

    // An unknown friend is 404; nothing to change is 400 naming the key.
    let stranger = new_peer();
    let (status, json) = call(
        &state,
        request(
            "PATCH",
            &format!("/api/friends/{stranger}"),
            r#"{"allow_models":true}"#,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{json}");
    assert!(!may_pull(&node, &stranger).await);
    let (status, json) = call(&state, request("PATCH", &path, "{}")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{json}");
    let message = json["error"]["message"].as_str().unwrap();
    assert!(message.contains("allow_models"), "{json}");

    node.shutdown();
    join.await.unwrap();
}

#[tokio::test]
async fn a_node_without_the_models_permission_refuses_it_rather_than_ignore_it() {
    let (state, _) = state(None);
    let body = format!(r#"{{"peer":"{ANNA}","allow_models":true}}"#);
    let (status, json) = call(&state, request("POST", "/api/friends", &body)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{json}");
    let message = json["error"]["message"].as_str().unwrap();
    assert!(message.contains("allow_models"), "{json}");
    // Without the key the same node adds the friend.
    let body = format!(r#"{{"peer":"{ANNA}"}}"#);
    let (status, json) = call(&state, request("POST", "/api/friends", &body)).await;
    assert_eq!(status, StatusCode::CREATED, "{json}");
}

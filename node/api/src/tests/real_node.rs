//! The node endpoints over a real node (`Node::spawn`, SQLite on disk).

use std::sync::Arc;

use axum::http::StatusCode;

use super::fakes::*;
use crate::adapters::NodeAdapter;
use crate::{ApiState, ApiToken};
use porfiry_mesh::data_dir::DataDir;
use porfiry_mesh::net::Profile;
use porfiry_mesh::node::{Node, NodeConfig};

#[tokio::test]
async fn notes_friends_and_status_go_through_to_the_node() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path().join("node"));
    let (node, join) = Node::spawn(NodeConfig::new(dir, Profile::Phone, Vec::new())).unwrap();
    let state = ApiState::new(
        Arc::new(NodeAdapter::new(node.clone())),
        None,
        ApiToken::from_secret(TOKEN),
        Arc::new(clock()),
    );

    let (status, posted) = call(
        &state,
        request(
            "POST",
            "/api/notes",
            r#"{"text":"hello #api","audience":"private"}"#,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{posted}");
    assert_eq!(posted["audience"], "private");
    let (status, json) = call(
        &state,
        request(
            "POST",
            "/api/notes",
            r#"{"text":"x","audience":"everyone"}"#,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        json["error"]["message"]
            .as_str()
            .unwrap()
            .contains("everyone"),
        "{json}"
    );
    let (status, notes) = call(&state, request("GET", "/api/notes?origin=own", "")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(notes[0]["text"], "hello #api");
    let (status, _) = call(&state, request("GET", "/api/notes?origin=mars", "")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    let (status, json) = call(
        &state,
        request("POST", "/api/friends", r#"{"peer":"not-a-peer"}"#),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{json}");
    let stranger = "12D3KooWD3eckifWpRn9wQpMG9R9hX3sD158z7EqHWmweQAJU5SA";
    let (status, json) = call(
        &state,
        request("DELETE", &format!("/api/friends/{stranger}"), ""),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{json}");

    let (status, json) = call(&state, request("GET", "/api/status", "")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(json["peer_id"], node.peer_id());
    assert_eq!(json["model"], serde_json::Value::Null);

    node.shutdown();
    join.await.unwrap();
}

#[tokio::test]
async fn a_note_posted_to_a_club_by_its_short_name_is_for_that_club() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path().join("node"));
    let db = dir.db_path();
    let (node, join) = Node::spawn(NodeConfig::new(dir, Profile::Phone, Vec::new())).unwrap();
    let club: porfiry_protocol::ClubRef = format!("chess@{}", node.peer_id()).parse().unwrap();
    porfiry_storage::Store::open(&db)
        .unwrap()
        .create_club(&club, 1)
        .unwrap();
    let state = ApiState::new(
        Arc::new(NodeAdapter::new(node.clone())),
        None,
        ApiToken::from_secret(TOKEN),
        Arc::new(clock()),
    );
    let (status, posted) = call(
        &state,
        request(
            "POST",
            "/api/notes",
            r#"{"text":"blitz on Thursday","audience":"club:chess"}"#,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{posted}");
    assert_eq!(posted["audience"], format!("club:{club}"));
    // An unknown club is the caller's mistake, named as such.
    let (status, json) = call(
        &state,
        request("POST", "/api/notes", r#"{"text":"x","audience":"club:go"}"#),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{json}");
    assert!(
        json["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no club \"go\"")
    );
    node.shutdown();
    join.await.unwrap();
}

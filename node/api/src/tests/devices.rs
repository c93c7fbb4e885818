//! The devices endpoints over two real nodes on loopback: a code made with
//! `POST /api/devices` on one is presented with `POST /api/devices/join`
//! on the other; both list each other; a friend's invitation code and
//! garbage are 400s naming why; `DELETE /api/devices/{peer}` ends the link
//! (204), and again is a 404; the Mind view says which device wrote a
//! row.

use std::sync::Arc;

use axum::http::StatusCode;

use super::fakes::*;
use crate::adapters::NodeAdapter;
use crate::{ApiState, ApiToken};
use porfiry_mesh::data_dir::DataDir;
use porfiry_mesh::invite::InviteService;
use porfiry_mesh::net::Profile;
use porfiry_mesh::node::{Node, NodeConfig, NodeHandle};

fn state_for(node: &NodeHandle) -> ApiState {
    ApiState::new(
        Arc::new(NodeAdapter::new(node.clone())),
        None,
        ApiToken::from_secret(TOKEN),
        Arc::new(clock()),
    )
}

fn spawn(dir: DataDir) -> (NodeHandle, porfiry_mesh::NodeJoin) {
    let listen = vec!["/ip4/127.0.0.1/tcp/0".parse().unwrap()];
    Node::spawn(NodeConfig::new(dir, Profile::Server, listen)).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn devices_link_list_and_unlink_over_the_api() {
    let tmp = tempfile::tempdir().unwrap();
    let (server, server_join) = spawn(DataDir::new(tmp.path().join("server")));
    let (phone, phone_join) = spawn(DataDir::new(tmp.path().join("phone")));
    let invites = InviteService::start(&server).unwrap();
    // The code carries the addresses the server listens on.
    let mut listening = server.listening();
    listening.wait_for(|a| !a.is_empty()).await.unwrap();
    let (on_server, on_phone) = (state_for(&server), state_for(&phone));

    let (status, listed) = call(&on_phone, request("GET", "/api/devices", "")).await;
    assert_eq!((status, listed), (StatusCode::OK, serde_json::json!([])));

    let (status, friend_code) = call(&on_server, request("POST", "/api/invitations", "{}")).await;
    assert_eq!(status, StatusCode::CREATED);
    let body = serde_json::json!({ "code": friend_code["code"] }).to_string();
    let (status, refused) = call(&on_phone, request("POST", "/api/devices/join", &body)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("invites a friend"),
        "{refused}"
    );
    let (status, garbage) = call(
        &on_phone,
        request("POST", "/api/devices/join", r#"{"code":"porfiry:garbage"}"#),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{garbage}");

    let (status, made) = call(
        &on_server,
        request("POST", "/api/devices", r#"{"valid_for":"10m"}"#),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    assert_eq!(made["valid_for"], "10m");
    assert!(made["qr_svg"].as_str().unwrap().contains("<svg"));
    let (status, bad) = call(
        &on_server,
        request("POST", "/api/devices", r#"{"valid_for":"1y"}"#),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}");

    let body = serde_json::json!({ "code": made["code"] }).to_string();
    let (status, device) = call(&on_phone, request("POST", "/api/devices/join", &body)).await;
    assert_eq!(status, StatusCode::CREATED, "{device}");
    assert_eq!(device["peer"], server.peer_id());
    for (state, other) in [(&on_phone, server.peer_id()), (&on_server, phone.peer_id())] {
        let (status, listed) = call(state, request("GET", "/api/devices", "")).await;
        assert_eq!(status, StatusCode::OK);
        let listed = listed.as_array().unwrap();
        assert_eq!(listed.len(), 1, "{listed:?}");
        assert_eq!(listed[0]["peer"], other);
        for key in ["name", "linked_since_ms", "last_sync_ms", "behind"] {
            assert!(listed[0].get(key).is_some(), "{key} in {listed:?}");
        }
    }

    // A diary entry written on the server (by another process) shows on
    // the phone's Mind view as written there.
    let server_db = DataDir::new(tmp.path().join("server")).db_path();
    porfiry_storage::Store::open(&server_db)
        .unwrap()
        .add(
            &porfiry_storage::DiaryEntry {
                text: "from home".into(),
                priority: 0,
                pinned: false,
                tags: Vec::new(),
                llm_id: None,
            },
            1,
        )
        .unwrap();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(60);
    let mind = loop {
        let (_, mind) = call(&on_phone, request("GET", "/api/mind", "")).await;
        if mind["diary"].as_array().is_some_and(|d| !d.is_empty()) {
            break mind;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the entry never came: {mind}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    };
    let id = mind["diary"][0]["id"].to_string();
    assert_eq!(mind["diary"][0]["text"], "from home");
    assert_eq!(mind["written_on"]["diary"][&id], server.peer_id(), "{mind}");
    let (_, own) = call(&on_server, request("GET", "/api/mind", "")).await;
    assert_eq!(
        own["written_on"]["diary"],
        serde_json::json!({}),
        "written here: {own}"
    );

    let path = format!("/api/devices/{}", server.peer_id());
    let (status, _) = call(&on_phone, request("DELETE", &path, "")).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (_, listed) = call(&on_phone, request("GET", "/api/devices", "")).await;
    assert_eq!(listed, serde_json::json!([]));
    let (status, again) = call(&on_phone, request("DELETE", &path, "")).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{again}");

    invites.stop();
    for (node, join) in [(server, server_join), (phone, phone_join)] {
        node.shutdown();
        join.await.unwrap();
    }
}

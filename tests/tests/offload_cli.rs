//! End to end, real processes: the offload permission (`friends add
//! --allow-offload`, `friends offload PEER on|off`, `allow_offload` in
//! `POST /api/friends`), the offload flags of `porfiry run` checked before
//! anything starts, and a node's `LlmAddress` advertisement reaching a
//! friend, whose `porfiry llm list` shows the model with the node's peer id
//! and whether it is reachable now.

use std::process::Command;

use porfiry_tests::api_client::call;
use porfiry_tests::mesh_node::{MeshNode, wait_for};
use porfiry_tests::porfiry_bin::porfiry_bin;

/// The model URL of a node that only advertises: nothing calls it here.
const UNUSED_MODEL_URL: &str = "http://127.0.0.1:9/v1";

fn allow_offload(n: &MeshNode, peer: &str) -> bool {
    permission(n, peer, "allow_offload")
}

/// A boolean `key` of `peer`'s entry in `friends list --json`.
fn permission(n: &MeshNode, peer: &str, key: &str) -> bool {
    let v: serde_json::Value =
        serde_json::from_str(&n.cli_ok(&["friends", "list", "--json"])).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .find(|f| f["peer_id"] == peer)
        .unwrap_or_else(|| panic!("{peer} is not listed"))[key]
        .as_bool()
        .unwrap()
}

fn llm_list(n: &MeshNode) -> serde_json::Value {
    serde_json::from_str(&n.cli_ok(&["llm", "list", "--json"])).unwrap()
}

#[test]
fn bad_offload_flags_are_refused_before_a_node_is_made() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("node");
    let peer = MeshNode::init("P").peer_id.clone();
    for (args, says) in [
        (
            vec![
                "--llm-url",
                UNUSED_MODEL_URL,
                "--llm-model",
                "m",
                "--llm-peer",
                peer.as_str(),
            ],
            "pick one",
        ),
        (vec!["--offload"], "--llm-url"),
        (vec!["--llm-peer", "not-a-peer"], "--llm-peer"),
    ] {
        let out = Command::new(porfiry_bin())
            .arg("--data-dir")
            .arg(&dir)
            .args(["run", "--profile", "phone", "--no-api"])
            .args(&args)
            .env_remove("PORFIRY_LLM_URL")
            .env_remove("PORFIRY_LLM_MODEL")
            .env_remove("PORFIRY_LLM_PEER")
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?} started");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!dir.exists(), "{args:?} made a node");
    }
}

#[test]
fn the_offload_permission_is_set_on_add_toggled_and_kept_on_update() {
    let a = MeshNode::init("A");
    let b = MeshNode::init("B");
    let c = MeshNode::init("C");
    a.cli_ok(&["friends", "add", &b.peer_id, "--allow-offload"]);
    a.cli_ok(&["friends", "add", &c.peer_id]);
    assert!(allow_offload(&a, &b.peer_id));
    assert!(
        !allow_offload(&a, &c.peer_id),
        "a new friend starts without"
    );
    let out = a.cli_ok(&["friends", "offload", &b.peer_id, "off"]);
    assert!(out.contains("may not"), "{out}");
    assert!(!allow_offload(&a, &b.peer_id));
    a.cli_ok(&["friends", "offload", &b.peer_id, "on"]);
    // Updating the groups without the flag keeps the permission.
    a.cli_ok(&["friends", "add", &b.peer_id, "--group", "family"]);
    assert!(allow_offload(&a, &b.peer_id));
    let text = a.cli_ok(&["friends", "list"]);
    assert!(
        text.contains("offload: on") && text.contains("offload: off"),
        "{text}"
    );
    // The models permission is listed beside it, and set on its own.
    let models = |n: &MeshNode, peer: &str| permission(n, peer, "allow_models");
    assert!(!models(&a, &b.peer_id));
    a.cli_ok(&["friends", "models", &b.peer_id, "on"]);
    assert!(models(&a, &b.peer_id) && !models(&a, &c.peer_id));
    assert!(allow_offload(&a, &b.peer_id), "offload kept");
    let text = a.cli_ok(&["friends", "list"]);
    assert!(text.contains("offload: on  models: on"), "{text}");

    let stranger = MeshNode::init("S");
    let out = a.cli(&["friends", "offload", &stranger.peer_id, "on"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a friend"));
    let out = a.cli(&["friends", "offload", &b.peer_id, "maybe"]);
    assert!(!out.status.success(), "only on|off");
}

#[test]
fn allow_offload_through_the_api() {
    let mut a = MeshNode::init("A");
    let b = MeshNode::init("B");
    a.start(&["--profile", "phone", "--api", "127.0.0.1:0"]);
    let addr = a.api_address();
    let token = std::fs::read_to_string(a.dir().join("api-token")).unwrap();
    let token = token.trim();
    let body = serde_json::json!({"peer": b.peer_id, "allow_offload": true}).to_string();
    let added = call(addr, "POST", "/api/friends", Some(token), &body);
    assert_eq!(added.status, 201, "{}", added.body);
    assert_eq!(added.json()["allow_offload"], true);
    let body = serde_json::json!({"peer": b.peer_id, "allow_offload": "yes"}).to_string();
    let bad = call(addr, "POST", "/api/friends", Some(token), &body);
    assert_eq!(bad.status, 400, "{}", bad.body);
    let exit = a.terminate();
    assert!(exit.status.success(), "{}", exit.stderr);
    assert!(allow_offload(&a, &b.peer_id));
}

#[test]
fn an_offered_model_reaches_a_friend_and_shows_in_its_llm_list() {
    let mut a = MeshNode::init("A");
    let mut b = MeshNode::init("B");
    a.cli_ok(&["friends", "add", &b.peer_id, "--allow-offload"]);
    b.befriend(&a, false, &[]);
    // Without a daemon, nothing is known yet and reachability is unknown.
    let none = llm_list(&b);
    assert_eq!(none["friends"], serde_json::json!([]));
    assert_eq!(none["node_running"], false);

    let address = a.start_server_with(
        0,
        &[
            "--llm-url",
            UNUSED_MODEL_URL,
            "--llm-model",
            "qwen-test",
            "--offload",
            "--offload-capacity",
            "2",
        ],
    );
    b.cli_ok(&["friends", "add", &a.peer_id, &address, "--name", "gpu-box"]);
    b.start(&["--profile", "phone"]);

    let mut seen = serde_json::Value::Null;
    wait_for("B to learn A's model and reach A", || {
        seen = llm_list(&b);
        seen["friends"][0]["reachable"] == true
    });
    let f = &seen["friends"][0];
    assert_eq!(f["peer"], a.peer_id.as_str());
    assert_eq!(f["model"], "qwen-test");
    assert_eq!(f["concurrency"], 2);
    assert_eq!(f["name"], "gpu-box");
    assert_eq!(seen["node_running"], true);
    let text = b.cli_ok(&["llm", "list"]);
    assert!(
        text.contains(&format!("friend gpu-box ({})", a.peer_id))
            && text.contains("qwen-test")
            && text.contains("reachable: yes"),
        "{text}"
    );
    // Never the upstream URL.
    let b_rows = serde_json::to_string(&seen).unwrap();
    assert!(!b_rows.contains("127.0.0.1:9"), "{b_rows}");

    let exit = b.terminate();
    assert!(exit.status.success(), "{}", exit.stderr);
    let text = b.cli_ok(&["llm", "list"]);
    assert!(text.contains("unknown (node not running)"), "{text}");

    // A restarts without --offload: the advertisement is retracted.
    let exit = a.terminate();
    assert!(exit.status.success(), "{}", exit.stderr);
    let address = a.start_server_with(0, &[]);
    b.cli_ok(&["friends", "add", &a.peer_id, &address]);
    b.start(&["--profile", "phone"]);
    wait_for("B to forget A's model", || {
        llm_list(&b)["friends"] == serde_json::json!([])
    });
    for node in [&mut a, &mut b] {
        let exit = node.terminate();
        assert!(exit.status.success(), "{}", exit.stderr);
    }
}

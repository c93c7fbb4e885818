//! End to end: the `friends` and `notes` commands on real data dirs, with
//! no daemon running. Good calls do what they say; every bad call prints
//! one `porfiry: …` line, exits non-zero and leaves the database as it was.

use std::path::Path;
use std::process::{Command, Output};

use porfiry_tests::mesh_node::MeshNode;
use porfiry_tests::porfiry_bin::porfiry_bin;

/// `porfiry --data-dir <dir> <args>` for a dir that may hold no node.
fn porfiry_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(porfiry_bin())
        .arg("--data-dir")
        .arg(dir)
        .args(args)
        .env_remove("PORFIRY_DATA_DIR")
        .output()
        .unwrap()
}

/// What a node's database looks like from the outside.
fn snapshot(n: &MeshNode) -> (String, String, String) {
    (
        n.cli_ok(&["status", "--json"]),
        n.cli_ok(&["friends", "list", "--json"]),
        n.cli_ok(&["notes", "list", "--json"]),
    )
}

/// Runs a call that must fail; returns its one error line.
fn refused(n: &MeshNode, args: &[&str]) -> String {
    let before = snapshot(n);
    let out = n.cli(args);
    assert!(!out.status.success(), "{args:?} succeeded");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{args:?}: {err}");
    assert!(
        lines[0].starts_with("porfiry: ") || lines[0].starts_with("error: "),
        "{err}"
    );
    assert!(
        out.stdout.is_empty(),
        "{args:?} printed {:?}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(snapshot(n), before, "{args:?} changed the database");
    lines[0].to_owned()
}

#[test]
fn friends_add_list_update_remove() {
    let a = MeshNode::init("A");
    let b = MeshNode::init("B");
    let c = MeshNode::init("C");
    let addr = format!("/ip4/127.0.0.1/tcp/4001/p2p/{}", b.peer_id);
    let out = a.cli_ok(&[
        "friends", "add", &b.peer_id, &addr, "--group", "family", "--group", "club",
    ]);
    assert!(
        out.starts_with(&format!("added friend {}", b.peer_id)),
        "{out}"
    );
    a.cli_ok(&["friends", "add", &c.peer_id]);

    let v: serde_json::Value =
        serde_json::from_str(&a.cli_ok(&["friends", "list", "--json"])).unwrap();
    let list = v.as_array().unwrap();
    assert_eq!(list.len(), 2);
    let fb = list
        .iter()
        .find(|f| f["peer_id"] == b.peer_id.as_str())
        .unwrap();
    assert_eq!(fb["addresses"], serde_json::json!([addr]));
    assert_eq!(fb["groups"], serde_json::json!(["family", "club"]));
    assert_eq!(fb["status"], "unknown");
    let fc = list
        .iter()
        .find(|f| f["peer_id"] == c.peer_id.as_str())
        .unwrap();
    assert_eq!(fc["addresses"], serde_json::json!([]));
    let text = a.cli_ok(&["friends", "list"]);
    assert!(
        text.contains("(dials us)") && text.contains("family,club"),
        "{text}"
    );

    // Adding again replaces address and groups.
    let out = a.cli_ok(&["friends", "add", &b.peer_id, "/ip4/127.0.0.1/tcp/5001"]);
    assert!(out.starts_with("updated friend"), "{out}");
    let v: serde_json::Value =
        serde_json::from_str(&a.cli_ok(&["friends", "list", "--json"])).unwrap();
    let fb = v
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["peer_id"] == b.peer_id.as_str())
        .unwrap();
    assert_eq!(
        fb["addresses"],
        serde_json::json!(["/ip4/127.0.0.1/tcp/5001"])
    );
    assert_eq!(fb["groups"], serde_json::json!([]));

    a.cli_ok(&["friends", "remove", &c.peer_id]);
    let v: serde_json::Value =
        serde_json::from_str(&a.cli_ok(&["friends", "list", "--json"])).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1);
}

#[test]
fn bad_friend_calls_change_nothing() {
    let a = MeshNode::init("A");
    let b = MeshNode::init("B");
    a.cli_ok(&["friends", "add", &b.peer_id]);
    let e = refused(&a, &["friends", "add", "not-a-peer"]);
    assert!(e.contains("bad peer id \"not-a-peer\""), "{e}");
    // A valid multihash that is not an ed25519 node id.
    let e = refused(
        &a,
        &[
            "friends",
            "add",
            "QmYyQSo1c1Ym7orWxLYvCrM2EmxFTANf8wXmmE7DWjhx5N",
        ],
    );
    assert!(e.contains("ed25519"), "{e}");
    let e = refused(&a, &["friends", "add", &b.peer_id, "not/an/address"]);
    assert!(e.contains("bad address"), "{e}");
    let other = MeshNode::init("C");
    let wrong = format!("/ip4/127.0.0.1/tcp/1/p2p/{}", other.peer_id);
    let e = refused(&a, &["friends", "add", &b.peer_id, &wrong]);
    assert!(e.contains("names peer"), "{e}");
    let e = refused(
        &a,
        &["friends", "add", &other.peer_id, "--group", "Family!"],
    );
    assert!(e.contains("group name"), "{e}");
    let e = refused(
        &a,
        &[
            "friends",
            "add",
            &other.peer_id,
            "--group",
            "x",
            "--group",
            "x",
        ],
    );
    assert!(e.contains("twice"), "{e}");
    let e = refused(&a, &["friends", "add", &a.peer_id]);
    assert!(e.contains("own peer id"), "{e}");
    let e = refused(&a, &["friends", "remove", &other.peer_id]);
    assert!(e.contains("is not a friend"), "{e}");
    refused(&a, &["friends", "remove", "junk"]);
}

#[test]
fn notes_post_and_list() {
    let a = MeshNode::init("A");
    let out = a.cli_ok(&["notes", "post", "hello", "@bob", "#Rust"]);
    assert!(
        out.starts_with("posted note 1 to friends as item "),
        "default audience: {out}"
    );
    let out = a.cli_ok(&["notes", "post", "--audience", "private", "diary"]);
    assert_eq!(out.trim(), "saved private note 2");
    a.cli_ok(&[
        "notes",
        "post",
        "--audience",
        "group:family",
        "for the family",
    ]);
    a.cli_ok(&["notes", "post", "--audience", "public", "for all"]);

    let v: serde_json::Value =
        serde_json::from_str(&a.cli_ok(&["notes", "list", "--json"])).unwrap();
    let notes = v.as_array().unwrap();
    assert_eq!(notes.len(), 4);
    assert_eq!(notes[0]["text"], "hello @bob #Rust");
    assert_eq!(notes[0]["mentions"], serde_json::json!(["bob"]));
    assert_eq!(notes[0]["hashtags"], serde_json::json!(["rust"]));
    assert_eq!(notes[0]["audience"], "friends");
    assert_eq!(notes[0]["source"], "cli");
    assert!(notes[0]["item_id"].is_string());
    assert!(notes[1]["item_id"].is_null(), "private: no item");
    assert_eq!(notes[2]["audience"], "group:family");
    assert!(notes.iter().all(|n| n["origin_author"].is_null()));
    let text = a.cli_ok(&["notes", "list"]);
    assert!(text.contains("[private] mine: diary"), "{text}");
    let status: serde_json::Value = serde_json::from_str(&a.cli_ok(&["status", "--json"])).unwrap();
    assert_eq!(status["tables"]["items"], 3);
}

#[test]
fn bad_note_calls_change_nothing() {
    let a = MeshNode::init("A");
    a.cli_ok(&["notes", "post", "first"]);
    let e = refused(&a, &["notes", "post", "--audience", "everyone", "x"]);
    assert!(e.contains("bad audience \"everyone\""), "{e}");
    refused(&a, &["notes", "post", "--audience", "group:Bad Name", "x"]);
    refused(&a, &["notes", "post", "--audience", "group:", "x"]);
    let e = refused(&a, &["notes", "post", "   "]);
    assert!(e.contains("empty"), "{e}");
    let long = "x".repeat(40 * 1024);
    let e = refused(&a, &["notes", "post", "--audience", "public", &long]);
    assert!(e.contains("note.text"), "{e}");
    // The same text as a private note is fine: it never becomes an item.
    a.cli_ok(&["notes", "post", "--audience", "private", &long]);
}

#[test]
fn commands_on_a_dir_without_a_node_create_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let a = MeshNode::init("A");
    let missing = tmp.path().join("nobody");
    for args in [
        vec!["friends", "list"],
        vec!["friends", "add", a.peer_id.as_str()],
        vec!["notes", "post", "hi"],
        vec!["notes", "list"],
    ] {
        let out = porfiry_in(&missing, &args);
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("no node in"), "{args:?}: {err}");
        assert!(!missing.exists(), "{args:?} created the data dir");
    }
}

#[test]
fn bad_run_flags_are_refused_before_a_node_is_made() {
    let tmp = tempfile::tempdir().unwrap();
    let fresh = tmp.path().join("fresh");
    for (args, needle) in [
        (
            vec![
                "run",
                "--profile",
                "phone",
                "--listen",
                "/ip4/127.0.0.1/tcp/0",
            ],
            "phone",
        ),
        (vec!["run", "--listen", "tcp:80"], "bad listen address"),
    ] {
        let out = porfiry_in(&fresh, &args);
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!fresh.exists(), "{args:?} made a node");
    }
}

#[test]
fn a_second_daemon_on_one_data_dir_is_refused_and_the_first_keeps_running() {
    let mut a = MeshNode::init("A");
    a.start_server(0);
    let out = a.cli(&["run", "--listen", "/ip4/127.0.0.1/tcp/0"]);
    assert!(!out.status.success(), "a second daemon must not start");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("already") && err.contains("daemon.lock"),
        "{err}"
    );
    assert!(a.is_running(), "the first daemon is untouched");
    let exit = a.terminate();
    assert!(
        exit.status.success(),
        "first daemon stops cleanly: {}",
        exit.stderr
    );
}

//! End to end over the real `porfiry` binary: `sharing audience` shows the
//! know-how audience (the default, public, until set), sets it, reads it
//! back as text and JSON, refuses a bad value, a group no friend has and a
//! club this node is not in with one line that changes nothing, and works
//! while the daemon runs on the same data dir.

use porfiry_mesh::sharing::publish::KNOWHOW_AUDIENCE_KEY;
use porfiry_tests::mesh_node::MeshNode;
use serde_json::{Value, json};

fn shown(node: &MeshNode) -> Value {
    serde_json::from_str(&node.cli_ok(&["sharing", "audience", "--json"])).expect("JSON output")
}

/// The stored setting, as the database holds it.
fn stored(node: &MeshNode) -> Option<Value> {
    node.store()
        .config_value(KNOWHOW_AUDIENCE_KEY)
        .expect("config reads")
}

/// Runs a command that must fail; returns its stderr.
fn refused(node: &MeshNode, args: &[&str]) -> String {
    let out = node.cli(args);
    assert!(!out.status.success(), "{args:?} should fail");
    assert!(out.stdout.is_empty(), "{args:?} printed to stdout");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn the_know_how_audience_is_shown_set_and_read_back() {
    let a = MeshNode::init("A");
    assert_eq!(
        a.cli_ok(&["sharing", "audience"]).trim(),
        "know-how audience is public (the default)"
    );
    assert_eq!(
        shown(&a),
        json!({"knowhow_audience": "public", "default": true})
    );

    assert_eq!(
        a.cli_ok(&["sharing", "audience", "friends"]).trim(),
        "know-how audience is now friends"
    );
    assert_eq!(stored(&a), Some(json!("friends")));
    assert_eq!(
        a.cli_ok(&["sharing", "audience"]).trim(),
        "know-how audience is friends"
    );
    assert_eq!(
        shown(&a),
        json!({"knowhow_audience": "friends", "default": false})
    );

    // Setting with --json prints the new state.
    let set: Value =
        serde_json::from_str(&a.cli_ok(&["sharing", "audience", "public", "--json"])).unwrap();
    assert_eq!(set, json!({"knowhow_audience": "public", "default": false}));
}

#[test]
fn bad_values_are_refused_in_one_line_and_change_nothing() {
    let a = MeshNode::init("A");
    let b = MeshNode::init("B");
    a.cli_ok(&["sharing", "audience", "friends"]);

    let err = refused(&a, &["sharing", "audience", "everyone"]);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("\"everyone\"")
            && err.contains("public, friends, group:NAME, club:NAME or club:NAME@FOUNDER"),
        "{err}"
    );
    let err = refused(&a, &["sharing", "audience", "devices"]);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("group:NAME"), "{err}");

    // A group no friend is in, then one a friend is in.
    let err = refused(&a, &["sharing", "audience", "group:family"]);
    assert!(err.contains("no friend here is in group"), "{err}");
    // A club this node is not in (B's), and one it does not know.
    let club = format!("club:chess@{}", b.peer_id);
    let err = refused(&a, &["sharing", "audience", &club]);
    assert!(err.contains("not a member"), "{err}");
    let err = refused(&a, &["sharing", "audience", "club:chess"]);
    assert!(err.contains("no club \"chess\""), "{err}");

    assert_eq!(stored(&a), Some(json!("friends")), "nothing changed");
    assert_eq!(
        shown(&a),
        json!({"knowhow_audience": "friends", "default": false})
    );

    a.cli_ok(&["friends", "add", &b.peer_id, "--group", "family"]);
    a.cli_ok(&["sharing", "audience", "group:family"]);
    assert_eq!(stored(&a), Some(json!("group:family")));
    a.cli_ok(&["club", "create", "chess"]);
    a.cli_ok(&["sharing", "audience", "club:chess"]);
    let own_club = format!("club:chess@{}", a.peer_id);
    assert_eq!(stored(&a), Some(json!(own_club)), "stored as NAME@FOUNDER");
}

#[test]
fn it_works_while_the_daemon_runs() {
    let mut a = MeshNode::init("A");
    a.start_phone();
    a.cli_ok(&["sharing", "audience", "friends"]);
    assert_eq!(
        shown(&a),
        json!({"knowhow_audience": "friends", "default": false})
    );
    assert!(a.is_running(), "the daemon still runs");
    a.terminate();
    assert_eq!(stored(&a), Some(json!("friends")));
}

//! End to end: friends changed with the CLI while the daemon runs take
//! effect without a restart — a friend added is let in, a friend tagged
//! with a group starts getting that group's notes (including ones posted
//! before), a friend removed is disconnected and refused from then on.

use porfiry_tests::mesh_node::{MeshNode, wait_for};

#[test]
fn friend_changes_reach_a_running_daemon() {
    let mut x = MeshNode::init("X");
    let mut y = MeshNode::init("Y");
    x.start_server(0);
    let y_id = y.peer_id.clone();

    // Added while X runs.
    x.befriend(&y, false, &[]);
    x.wait_logged(&["friend allowed", &y_id]);
    y.befriend(&x, true, &[]);
    y.start_phone();
    x.wait_logged(&["friend connected", &y_id]);
    wait_for("X to record Y as online", || {
        let v: serde_json::Value =
            serde_json::from_str(&x.cli_ok(&["friends", "list", "--json"])).unwrap();
        v[0]["peer_id"] == y_id.as_str()
            && v[0]["status"] == "online"
            && v[0]["last_seen_ms"].is_u64()
    });

    // A club note does not reach Y until X tags Y with "club".
    x.post("group:club", "club meeting at 8");
    x.post("friends", "sentinel 1");
    wait_for("Y to get sentinel 1", || y.has_note(&x, "sentinel 1"));
    assert!(!y.has_note(&x, "club meeting at 8"));
    x.befriend(&y, false, &["club"]);
    wait_for("Y to get the club note after being tagged", || {
        y.has_note(&x, "club meeting at 8")
    });

    // Removed while X runs: the link drops and Y's redials are refused.
    let out = x.cli_ok(&["friends", "remove", &y_id]);
    assert!(out.contains("removed friend"), "{out}");
    x.wait_logged(&["friend removed", &y_id]);
    y.wait_logged(&["friend disconnected", &x.peer_id]);
    x.wait_logged(&[
        "refused a connection from a peer that is not a friend",
        &y_id,
    ]);
    x.post("public", "after the removal");
    y.post("public", "Y talks to no one");
    assert_eq!(x.cli_ok(&["friends", "list"]).trim(), "no friends yet");
    assert!(!y.has_note(&x, "after the removal"));
    assert!(x.notes_from(&y).is_empty());
    assert!(x.is_running() && y.is_running());
}

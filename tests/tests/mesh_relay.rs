//! End to end over real `porfiry run` processes on loopback: a server
//! started with `--no-listen` (H) reserves a slot at its relaying friend R
//! (`porfiry run --relay`) by itself; a phone P that knows H only by its
//! circuit address through R reaches it, a friends-only note from H arrives
//! at P, and `status` on P shows H as `relayed`. A stranger X cannot use R:
//! R refuses its connection, so it gets no slot and no circuit. A phone
//! that knows H only by its peer id reaches it through R by itself; its
//! `status --json` names R as the relay (`via`) and says why a friend at a
//! dead address is unreachable (`why`: `refused`).
//!
//! On loopback everyone reaches everyone, so H and the peer-id-only phone
//! run with `--no-hole-punching`: the port a node that listens nowhere
//! binds to dial from (for hole punching behind NATs) would be reachable
//! here, and the test is about a node that cannot be dialled.
//!
//! ```text
//!   H (--no-listen) ──► R (--relay) ◄── P (phone)
//!                        ▲                └─ dials H at R/p2p-circuit/p2p/H
//!                        └── X (stranger to R, H and P)
//! ```

use porfiry_tests::mesh_node::{MeshNode, wait_for};

#[test]
fn a_hidden_server_is_reached_through_a_relaying_friend_and_a_stranger_is_not() {
    let mut r = MeshNode::init("R");
    let mut h = MeshNode::init("H");
    let mut p = MeshNode::init("P");
    let mut x = MeshNode::init("X");
    r.befriend(&h, false, &[]);
    r.befriend(&p, false, &[]);
    let r_addr = r.start_server_with(0, &["--relay"]);

    h.befriend(&r, true, &[]);
    h.befriend(&p, false, &[]);
    h.start(&["--no-listen", "--no-hole-punching"]);
    h.wait_logged(&["relay slot reserved", &r.peer_id]);
    let circuit = format!("{r_addr}/p2p-circuit/p2p/{}", h.peer_id);
    wait_for("H to print its circuit address", || {
        h.stdout_lines()
            .iter()
            .any(|l| l.starts_with("listening on ") && l.contains("/p2p-circuit"))
    });

    p.befriend(&r, true, &[]);
    p.cli_ok(&["friends", "add", &h.peer_id, &circuit, "--name", "home"]);
    p.start_phone();
    p.wait_logged(&["friend connected", &h.peer_id]);

    h.post("friends", "from the hidden server");
    wait_for("P to get H's friends-only note", || {
        p.has_note(&h, "from the hidden server")
    });

    let status: serde_json::Value =
        serde_json::from_str(&p.cli_ok(&["status", "--json"])).expect("status json");
    let friends = status["friends"].as_array().expect("friends");
    let home = friends
        .iter()
        .find(|f| f["peer_id"] == h.peer_id.as_str())
        .expect("H in P's status");
    assert_eq!(home["link"], "relayed", "{home}");
    assert_eq!(home["via"], r.peer_id.as_str(), "{home}");
    assert!(home.get("why").is_none(), "{home}");
    assert!(home["link_since_ms"].as_u64().is_some(), "{home}");
    let relay = friends
        .iter()
        .find(|f| f["peer_id"] == r.peer_id.as_str())
        .expect("R in P's status");
    assert_eq!(relay["link"], "direct", "{relay}");
    assert!(relay.get("via").is_none(), "{relay}");
    let text = p.cli_ok(&["status"]);
    assert!(
        text.contains("home") && text.contains("link: relayed via "),
        "{text}"
    );

    // The stranger trusts R and H, but neither knows it.
    x.befriend(&r, true, &[]);
    x.cli_ok(&["friends", "add", &h.peer_id, &circuit]);
    x.start_phone();
    r.wait_logged(&["not a friend", &x.peer_id]);
    x.wait_logged(&["friend unreachable", &h.peer_id]);
    x.post("friends", "from the stranger");
    h.post("friends", "after the stranger tried");
    wait_for("P to get H's later note", || {
        p.has_note(&h, "after the stranger tried")
    });
    assert!(!h.logged(&[&x.peer_id]), "H never heard of X");
    assert!(x.notes_from(&h).is_empty(), "X got nothing from H");
    assert!(h.notes_from(&x).is_empty(), "H got nothing from X");

    for n in [&mut x, &mut p, &mut h, &mut r] {
        n.terminate();
    }
    // With no daemon running, nobody is connected.
    let status: serde_json::Value =
        serde_json::from_str(&p.cli_ok(&["status", "--json"])).expect("status json");
    assert!(
        status["friends"]
            .as_array()
            .expect("friends")
            .iter()
            .all(|f| f["link"] == "not connected"),
        "{status}"
    );
}

/// Issue 26, "through friends": the phone knows the hidden server only by
/// its peer id — no circuit address typed in, none in an invitation. Its
/// relaying friend R is a path: the phone dials H through R by itself, and
/// notes flow both ways.
#[test]
fn a_friend_known_only_by_its_peer_id_is_reached_through_a_relaying_friend() {
    let mut r = MeshNode::init("R");
    let mut h = MeshNode::init("H");
    let mut p = MeshNode::init("P");
    r.befriend(&h, false, &[]);
    r.befriend(&p, false, &[]);
    r.start_server_with(0, &["--relay"]);
    h.befriend(&r, true, &[]);
    h.befriend(&p, false, &[]);
    h.start(&["--no-listen", "--no-hole-punching"]);
    h.wait_logged(&["relay slot reserved", &r.peer_id]);

    p.befriend(&r, true, &[]);
    p.befriend(&h, false, &[]);
    // A friend at a loopback port nothing listens on: refused at once.
    let gone = MeshNode::init("D");
    let dead_port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let dead = format!("/ip4/127.0.0.1/tcp/{dead_port}");
    p.cli_ok(&["friends", "add", &gone.peer_id, &dead, "--name", "gone"]);
    p.start(&["--profile", "phone", "--no-hole-punching"]);
    p.wait_logged(&["friend connected", &h.peer_id]);
    h.post("friends", "from the server behind the router");
    wait_for("P to get H's note", || {
        p.has_note(&h, "from the server behind the router")
    });
    p.post("friends", "from the phone");
    wait_for("H to get P's note", || h.has_note(&p, "from the phone"));
    let status: serde_json::Value =
        serde_json::from_str(&p.cli_ok(&["status", "--json"])).expect("status json");
    let home = status["friends"]
        .as_array()
        .expect("friends")
        .iter()
        .find(|f| f["peer_id"] == h.peer_id.as_str())
        .cloned()
        .expect("H in P's status");
    assert_eq!(home["link"], "relayed", "{home}");
    assert_eq!(
        home["via"],
        r.peer_id.as_str(),
        "the relay P found by itself: {home}"
    );
    wait_for("P's status to say why D is unreachable", || {
        p.friend_status(&gone.peer_id)["why"] == "refused"
    });
    let dead_friend = p.friend_status(&gone.peer_id);
    assert_eq!(dead_friend["link"], "not connected", "{dead_friend}");
    assert!(dead_friend.get("via").is_none(), "{dead_friend}");
    let text = p.cli_ok(&["status"]);
    assert!(text.contains("link: not connected (refused)"), "{text}");
    for n in [&mut p, &mut h, &mut r] {
        n.terminate();
    }
}

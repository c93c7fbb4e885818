//! End to end over real `porfiry run` processes on loopback: one-line
//! invitations (issue 12). `invite` on A prints a code; `join CODE` on B
//! presents its secret over `/porfiry/invite/1` to A's daemon, which admits
//! B as a guest for that protocol only and then makes it a friend. Wrong,
//! used and expired codes are refused with nothing stored, and a stranger
//! let in as a guest while an invitation is open cannot replicate.

use std::time::{Duration, SystemTime};

use porfiry_mesh::invite::InviteCode;
use porfiry_tests::mesh_node::{MeshNode, wait_for};

/// Runs `invite` with `args`; returns the code line.
fn invite(node: &MeshNode, args: &[&str]) -> String {
    let mut all = vec!["invite"];
    all.extend_from_slice(args);
    let out = node.cli_ok(&all);
    let code = out.lines().next().unwrap().to_owned();
    assert!(code.starts_with("porfiry:"), "{out}");
    code
}

/// Runs `join` expecting a refusal; returns its error line.
fn join_refused(node: &MeshNode, code: &str) -> String {
    let out = node.cli(&["join", code]);
    assert!(!out.status.success(), "join succeeded");
    assert!(out.stdout.is_empty());
    String::from_utf8_lossy(&out.stderr).trim().to_owned()
}

fn friend_ids(node: &MeshNode) -> Vec<String> {
    node.store()
        .friends()
        .unwrap()
        .into_iter()
        .map(|f| f.row.peer_id)
        .collect()
}

#[test]
fn invite_then_join_makes_both_friends_and_a_group_note_arrives() {
    let mut a = MeshNode::init("A");
    let mut b = MeshNode::init("B");
    a.start_server_recording_addresses();
    let out = a.cli_ok(&["invite", "--name", "bob", "--group", "fam"]);
    let code = out.lines().next().unwrap();
    assert!(code.starts_with("porfiry:"), "{out}");
    assert!(out.contains('█') || out.contains('▀'), "a QR code: {out}");
    let decoded = InviteCode::decode(code).unwrap();
    assert_eq!(decoded.peer.to_string(), a.peer_id);
    // Only the hash is stored.
    let stored = a.store().open_invitations(0).unwrap();
    assert_eq!(stored.len(), 1);
    assert_ne!(&stored[0].secret_hash[..16], &decoded.secret[..]);

    let joined = b.cli_ok(&["join", code, "--name", "anna"]);
    assert!(joined.contains("friends now"), "{joined}");

    let fb = a.store().friend(&b.peer_id).unwrap().row;
    assert_eq!(fb.name, "bob");
    assert_eq!(fb.groups, vec!["fam".to_owned()]);
    let fa = b.store().friend(&a.peer_id).unwrap().row;
    assert_eq!(fa.name, "anna");
    assert!(!fa.addresses.is_empty());
    a.wait_logged(&["invitation redeemed", &b.peer_id]);
    assert!(a.store().open_invitations(0).unwrap().is_empty(), "used up");

    // B's daemon dials A as a friend; a note to the invite's group arrives.
    b.start_phone();
    a.wait_logged(&["friend connected", &b.peer_id]);
    a.post("group:fam", "G: welcome to the family");
    wait_for("B to get the group note", || {
        b.has_note(&a, "G: welcome to the family")
    });
}

#[test]
fn wrong_used_and_expired_codes_are_refused_and_store_nothing() {
    let mut a = MeshNode::init("A");
    let c = MeshNode::init("C");
    let d = MeshNode::init("D");
    a.start_server_recording_addresses();
    let used = invite(&a, &["--name", "carol"]);
    c.cli_ok(&["join", &used]);
    // Kept open through the test, so the door stays open for D's attempts.
    let open = invite(&a, &[]);
    let made = SystemTime::now();
    let expired = invite(&a, &["--valid-for", "1s"]);

    let err = join_refused(&d, &used);
    assert!(err.contains("used already"), "{err}");

    let mut wrong = InviteCode::decode(&open).unwrap();
    wrong.secret[0] ^= 1;
    let err = join_refused(&d, &wrong.encode().unwrap());
    assert!(err.contains("code is wrong"), "{err}");

    wait_for("the short invitation to expire", || {
        made.elapsed().unwrap() > Duration::from_millis(1_500)
    });
    let err = join_refused(&d, &expired);
    assert!(err.contains("expired"), "{err}");

    let err = join_refused(&d, "porfiry:not-a-code");
    assert!(err.contains("not base58"), "{err}");

    // Nothing stored on either side; the open invitation is still open.
    assert_eq!(friend_ids(&a), vec![c.peer_id.clone()]);
    assert!(friend_ids(&d).is_empty());
    let still_open = a.store().open_invitations(0).unwrap();
    // Unused both: the open one and the expired one (listed as of time 0).
    assert_eq!(still_open.len(), 2);
    a.wait_logged(&["invitation refused", &d.peer_id]);
}

#[test]
fn a_stranger_let_in_while_an_invitation_is_open_cannot_replicate() {
    let mut a = MeshNode::init("A");
    let mut s = MeshNode::init("S");
    a.start_server_recording_addresses();
    invite(&a, &[]);
    a.wait_logged(&["invitation door", "open=true"]);
    // S considers A a friend and dials it; A does not know S.
    s.befriend(&a, true, &[]);
    s.post("public", "S: let me in");
    let items_before = a.shared_item_count();
    s.start_server(0);
    a.wait_logged(&["stranger connected as an invitation guest", &s.peer_id]);
    a.wait_logged(&["did not become a friend in time", &s.peer_id]);
    assert!(!a.has_note(&s, "S: let me in"));
    assert_eq!(
        a.shared_item_count(),
        items_before,
        "nothing replicated from the guest"
    );
    assert!(friend_ids(&a).is_empty());
    assert!(!a.logged(&["friend connected", &s.peer_id]));
}

#[test]
fn invite_refuses_bad_flags_and_a_node_without_addresses_storing_nothing() {
    let a = MeshNode::init("A");
    let refused = |args: &[&str]| {
        let out = a.cli(args);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(out.stdout.is_empty());
        String::from_utf8_lossy(&out.stderr).trim().to_owned()
    };
    // Never ran, so no recorded address.
    let err = refused(&["invite"]);
    assert!(err.contains("no address to put in the code"), "{err}");
    let err = refused(&[
        "invite",
        "--address",
        "/ip4/127.0.0.1/tcp/1",
        "--valid-for",
        "2w",
    ]);
    assert!(err.contains("--valid-for"), "{err}");
    let err = refused(&[
        "invite",
        "--address",
        "/ip4/127.0.0.1/tcp/1",
        "--group",
        "Bad Group",
    ]);
    assert!(err.contains("group name"), "{err}");
    let err = refused(&["invite", "--address", "not-an-address"]);
    assert!(err.contains("bad address"), "{err}");
    assert!(a.store().open_invitations(0).unwrap().is_empty());
    // With an address given, no daemon is needed to make one.
    let out = a.cli_ok(&["invite", "--address", "/ip4/127.0.0.1/tcp/1", "--no-qr"]);
    assert_eq!(out.lines().count(), 2, "{out}");
    let code = InviteCode::decode(out.lines().next().unwrap()).unwrap();
    assert_eq!(code.addresses[0].to_string(), "/ip4/127.0.0.1/tcp/1");
    assert_eq!(a.store().open_invitations(0).unwrap().len(), 1);
    // A node cannot join its own invitation.
    let err = refused(&["join", out.lines().next().unwrap()]);
    assert!(err.contains("made by this node"), "{err}");
    // Nobody answers at that address: join gives up, storing nothing.
    let b = MeshNode::init("B");
    let out = b.cli(&["join", out.lines().next().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("could not reach the inviter"), "{err}");
    assert!(friend_ids(&b).is_empty());
}

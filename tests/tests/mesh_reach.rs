//! End to end over real `porfiry run` processes on loopback: a node tells
//! its friends where it can be reached (a signed `reachable_at` item,
//! friends only, one hop), and a friend that moved is dialled where it is
//! now.
//!
//! A listens at one port and B knows it there. A moves (it restarts on
//! another port, as a phone does when it switches network) and dials B;
//! B learns A's new address from A's item, and the old item leaves B's
//! file. Then B restarts, still holding the stale address it was given:
//! it dials A at the address A told it first (the stale one after it), and
//! the link comes back with no failed dial. The item never reaches C, a friend of B
//! only, and A's own item never goes back to A.
//!
//! ```text
//!   A (moves: port 1 → port 2) ◄──► B ◄──► C (B's friend, not A's)
//! ```

use std::time::Instant;

use porfiry_mesh::sharing::reach::Announced;
use porfiry_protocol::ItemKind;
use porfiry_tests::mesh_node::{MeshNode, wait_for};

/// What `author` told `node` it can be reached at, from `node`'s file.
fn told(node: &MeshNode, author: &MeshNode) -> Vec<String> {
    Announced::load(&node.store(), &node.peer_id)
        .expect("items read")
        .of(&author.peer_id)
        .iter()
        .map(|a| a.to_string())
        .collect()
}

/// How many `reachable_at` items by `author` `node` holds.
fn items_by(node: &MeshNode, author: &MeshNode) -> usize {
    node.store()
        .items_of_kind(ItemKind::ReachableAt)
        .expect("items read")
        .iter()
        .filter(|i| i.record.author == author.peer_id)
        .count()
}

/// `address` without its `/p2p/…` tail: what a node tells of itself.
fn bare(address: &str) -> String {
    address
        .rsplit_once("/p2p/")
        .map(|(a, _)| a.to_owned())
        .unwrap_or_else(|| address.to_owned())
}

#[test]
fn a_friend_that_moved_is_dialled_where_it_said_it_is() {
    let mut a = MeshNode::init("A");
    let mut b = MeshNode::init("B");
    let mut c = MeshNode::init("C");
    a.start_server(0);
    let a_first = a.address.clone().expect("A listens");
    b.befriend(&a, true, &[]);
    b.befriend(&c, false, &[]);
    b.start_server(0);
    c.befriend(&b, true, &[]);
    c.start_server(0);
    a.befriend(&b, true, &[]);
    wait_for("B to hold A's first addresses", || {
        told(&b, &a) == [bare(&a_first)]
    });

    // A moves to another port and dials B; B learns where it is now.
    a.terminate();
    let moved = Instant::now();
    a.start_server(0);
    let a_second = a.address.clone().expect("A listens again");
    assert_ne!(bare(&a_first), bare(&a_second), "the move changed the port");
    wait_for("B to learn A's new address", || {
        told(&b, &a) == [bare(&a_second)]
    });
    let learned = moved.elapsed();
    assert_eq!(items_by(&b, &a), 1, "the old item left B's file");
    // And `status` says so.
    let entry = b.friend_status(&a.peer_id);
    assert_eq!(
        entry["told_addresses"],
        serde_json::json!([bare(&a_second)])
    );
    assert!(
        b.cli_ok(&["status"])
            .contains(&format!("reachable at: {}", bare(&a_second)))
    );
    println!("B learned A's new address {learned:?} after A restarted on it");

    // B restarts, still given A's old address: it dials A where A said it
    // is first, and the link comes back with no failed dial of the old one.
    b.terminate();
    let b_address = bare(b.address.as_deref().expect("B listened"));
    let port: u16 = b_address
        .rsplit('/')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("B's port");
    let restarted = Instant::now();
    b.start_server(port);
    b.wait_logged(&[
        "friend added",
        &a.peer_id,
        &format!("addresses=[{}, {}", bare(&a_second), a_first),
    ]);
    b.wait_logged(&["friend connected", &a.peer_id]);
    println!(
        "B was linked to A again {:?} after B restarted",
        restarted.elapsed()
    );
    assert_eq!(
        b.logged_count(&["friend unreachable", &a.peer_id]),
        0,
        "a dial of A failed: {}",
        b.stderr()
    );

    // Friends only, one hop: C (B's friend, not A's) never holds it, and
    // A holds none of its own from B.
    c.post("friends", "C is here");
    wait_for("B to get C's note (so C and B are in sync)", || {
        b.has_note(&c, "C is here")
    });
    assert_eq!(items_by(&c, &a), 0, "A's addresses reached C");
    assert!(told(&c, &a).is_empty());
}

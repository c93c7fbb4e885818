//! What periodic catch-up costs between friends already in sync: both sides
//! reconcile the same set, so a resync is fingerprints, not id lists, even
//! where one side holds items the other can never get from it (no hop
//! left). And what it learned is forgotten when it stops being true: no
//! item is kept from a friend, none arrives twice.

mod engine_support;

use engine_support::*;
use porfiry_protocol::engine::RESYNC_INTERVAL_MS;
use porfiry_protocol::{Audience, ItemId};

const T0: u64 = 1_700_000_000_000;
const ITEMS: u64 = 200;

/// Sync bytes (both kinds) delivered so far.
fn sync_bytes(net: &Net) -> u64 {
    ["sync-query", "sync-reply"]
        .iter()
        .map(|k| net.bytes_by_kind.get(k).copied().unwrap_or(0))
        .sum()
}

/// A line 0 – 1 – 2; node 0 publishes `ITEMS` public notes that travel one
/// hop, so node 1 holds them with none left and node 2 never gets them,
/// and as many that travel three, which all three hold.
fn line_with_edge_items() -> (Net, Vec<ItemId>) {
    let mut net = Net::new(3, T0, |c| c);
    net.befriend(0, 1, 20);
    net.befriend(1, 2, 20);
    net.connect_all();
    let mut ids = Vec::new();
    for i in 0..ITEMS {
        let key = net.nodes[0].key.clone();
        let x = note(&key, T0 + 2 * i, Audience::Public, 1, &format!("one {i}"));
        ids.push(x.id());
        net.publish(0, x);
        let far = note(&key, T0 + 2 * i + 1, Audience::Public, 3, "three");
        net.publish(0, far);
    }
    net.advance(5_000);
    for id in &ids {
        assert!(net.nodes[1].store.contains_key(id), "node 1 lacks {id}");
        assert!(
            !net.nodes[2].store.contains_key(id),
            "{id} went past its hops"
        );
    }
    (net, ids)
}

#[test]
fn friends_in_sync_resync_with_fingerprints_even_across_a_hop_limit() {
    let (mut net, _) = line_with_edge_items();
    // The first round of sessions learns what node 2 cannot have.
    net.advance(RESYNC_INTERVAL_MS);
    let replies = |net: &Net| net.bytes_by_kind.get("sync-reply").copied().unwrap_or(0);
    let before = replies(&net);
    let queries = sync_bytes(&net) - before;
    let items_before = net.bytes_by_kind.get("items").copied().unwrap_or(0);
    net.advance(6 * RESYNC_INTERVAL_MS);
    let answered = replies(&net) - before;
    // Every session opens with sixteen fingerprints; a friend holding the
    // same set answers with one byte. Had node 1 kept
    // the 200 items node 2 lacks in its sets, every session on that link
    // would answer with id lists (kilobytes).
    assert!(sync_bytes(&net) - before > queries, "resyncs ran");
    assert!(
        answered < 400,
        "replies between friends in sync took {answered} B"
    );
    assert_eq!(
        net.bytes_by_kind.get("items").copied().unwrap_or(0),
        items_before,
        "friends in sync sent items"
    );
}

#[test]
fn a_friend_that_gains_the_items_elsewhere_gets_no_second_copy() {
    let (mut net, ids) = line_with_edge_items();
    net.advance(RESYNC_INTERVAL_MS);
    // Node 2 befriends the author: it gets every item from it, once, and
    // the resyncs that follow send node 2 nothing more.
    net.befriend(0, 2, 20);
    net.connect(0, 2);
    net.advance(3 * RESYNC_INTERVAL_MS);
    for id in &ids {
        assert!(net.nodes[2].store.contains_key(id), "node 2 lacks {id}");
        assert_eq!(net.copies.get(&(2, *id)), Some(&1), "{id} came twice");
        assert_eq!(net.copies.get(&(1, *id)), Some(&1), "{id} came back to 1");
    }
}

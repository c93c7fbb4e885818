//! Hop repair after catch-up: reconciliation compares ids, so a node that
//! got a public item along a longer path (a better `have` was lost, or the
//! short link was down) must still have its hop count raised, so that the
//! item reaches its full radius. Driven through the in-test network (real
//! codec, fake clock).
//!
//! The graph of the first two tests: author 0 has friends 1 and 2; 2–3,
//! 1–4, 3–4, 4–5. Node 5 is 3 links from 0 (0–1–4–5), so it is entitled to
//! a public item with max_hops 3, but only through 4 holding it with 1 hop
//! left, which only 1's copy can give.

mod engine_support;

use engine_support::*;
use porfiry_protocol::engine::RESYNC_INTERVAL_MS;
use porfiry_protocol::{Audience, ItemId};

fn six_nodes() -> Net {
    let mut net = Net::new(6, T0, |c| c);
    for (a, b) in [(0, 1), (0, 2), (2, 3), (1, 4), (3, 4), (4, 5)] {
        net.befriend(a, b, 20);
    }
    net
}

fn publish_note(net: &mut Net, hops: u8) -> ItemId {
    let x = note(
        &net.nodes[0].key.clone(),
        net.now,
        Audience::Public,
        hops,
        "far",
    );
    let id = x.id();
    net.publish(0, x);
    id
}

fn hops_at(net: &Net, node: usize, id: &ItemId) -> Option<u8> {
    net.nodes[node].store.get(id).map(|(_, h)| *h)
}

#[test]
fn a_lost_announcement_is_repaired_at_the_next_resync() {
    let mut net = six_nodes();
    net.lose_haves_until.insert((1, 4), T0 + 30_000);
    net.connect_all();
    net.advance(1_000);
    let id = publish_note(&mut net, 3);
    net.advance(20_000);
    assert_eq!(hops_at(&net, 4, &id), Some(0), "4 took 3's copy, 0 hops");
    assert!(!net.nodes[5].store.contains_key(&id), "so 5 lacks it");

    net.advance(RESYNC_INTERVAL_MS);
    assert_eq!(hops_at(&net, 4, &id), Some(1), "1's offer raised 4's copy");
    assert_eq!(net.holders(&id), net.entitled(0, &Audience::Public, 3));
    assert_eq!(net.copies.get(&(5, id)), Some(&1));
    assert_eq!(net.copies.get(&(4, id)), Some(&1), "no second payload to 4");
}

#[test]
fn a_lost_check_is_announced_again_at_the_session_after() {
    let mut net = six_nodes();
    // The push's `have` and the first session's check are both lost.
    net.lose_haves_until
        .insert((1, 4), T0 + RESYNC_INTERVAL_MS + 30_000);
    net.connect_all();
    net.advance(1_000);
    let id = publish_note(&mut net, 3);
    net.advance(RESYNC_INTERVAL_MS + 30_000);
    assert_eq!(hops_at(&net, 4, &id), Some(0), "the first check was lost");
    net.advance(3 * RESYNC_INTERVAL_MS);
    assert_eq!(hops_at(&net, 4, &id), Some(1), "the second try raised it");
    assert_eq!(net.holders(&id), net.entitled(0, &Audience::Public, 3));
}

#[test]
fn an_offer_is_checked_twice_at_most_then_resyncs_announce_nothing() {
    let mut net = six_nodes();
    net.lose_haves_until.insert((1, 4), T0 + 30_000);
    net.connect_all();
    net.advance(1_000);
    publish_note(&mut net, 3);
    // The check, then its second try (raising is not answered).
    net.advance(20_000 + 4 * RESYNC_INTERVAL_MS);
    let haves = net.bytes_by_kind.get("have").copied().unwrap_or(0);
    let payload = net.payload_bytes;
    net.advance(8 * RESYNC_INTERVAL_MS);
    assert_eq!(
        net.bytes_by_kind.get("have").copied().unwrap_or(0),
        haves,
        "later resyncs of equal sets re-announce nothing"
    );
    assert_eq!(net.payload_bytes, payload);
}

#[test]
fn a_link_that_was_down_checks_every_shared_item_when_it_returns() {
    let mut net = six_nodes();
    net.connect_all();
    net.disconnect(1, 4);
    net.advance(1_000);
    let ids: Vec<ItemId> = (0..3)
        .map(|_| {
            let id = publish_note(&mut net, 3);
            net.advance(1);
            id
        })
        .collect();
    net.advance(20_000);
    for id in &ids {
        assert_eq!(hops_at(&net, 4, id), Some(0));
        assert!(!net.nodes[5].store.contains_key(id));
    }
    net.connect(1, 4);
    // Well before the next resync: the reconnect's own session does it.
    net.advance(10_000);
    for id in &ids {
        assert_eq!(hops_at(&net, 4, id), Some(1));
        assert_eq!(net.copies.get(&(5, *id)), Some(&1));
        assert_eq!(net.copies.get(&(4, *id)), Some(&1));
    }
}

#[test]
fn the_check_never_carries_an_item_beyond_its_radius() {
    // max_hops 2: 4 (2 links from 0) is entitled with 0 hops left, 5 is not.
    // 1's `have` to 4 is lost and 3 holds the item with none to give, so 4
    // gets it from 1's catch-up at the resync; nothing reaches 5.
    let mut net = six_nodes();
    net.lose_haves_until.insert((1, 4), T0 + 30_000);
    net.connect_all();
    net.advance(1_000);
    let id = publish_note(&mut net, 2);
    net.advance(20_000);
    assert!(!net.nodes[4].store.contains_key(&id));
    net.advance(3 * RESYNC_INTERVAL_MS);
    assert_eq!(hops_at(&net, 4, &id), Some(0));
    assert_eq!(net.holders(&id), net.entitled(0, &Audience::Public, 2));
    assert_eq!(net.copies.get(&(5, id)), None, "5 is beyond the radius");
    assert_eq!(net.copies.get(&(4, id)), Some(&1));
}

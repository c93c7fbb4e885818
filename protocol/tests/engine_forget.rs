//! `Engine::forget`: items the driver's storage deleted on its own (the
//! memory's pruning) leave the engine at once. A forgotten item is no
//! longer held, a catch-up never sends it, a `want` for it gets nothing,
//! and the sync set a session opens with is the one an engine that never
//! held the item builds: the same opening frame, fingerprints and all.

mod engine_support;

use engine_support::*;
use porfiry_protocol::engine::{Engine, Inbound, Input};
use porfiry_protocol::wire::WireMessage;
use porfiry_protocol::{Audience, ItemRecord, VerifiedItem};

/// Three public notes by node 0, a millisecond apart.
fn three() -> [VerifiedItem; 3] {
    [0u64, 1, 2].map(|i| note(&key(0), T0 + i, Audience::Public, 3, &format!("note {i}")))
}

fn engine_of(items: &[&VerifiedItem]) -> Engine {
    let records: Vec<ItemRecord> = items.iter().map(|it| ItemRecord::of(it, 3, None)).collect();
    Engine::new(config(&peer(0)), records)
}

/// What `e` sends friend 1 when it connects: the session's opening.
fn opening(e: &mut Engine) -> Vec<WireMessage> {
    let out = connect(e, 1, &[]);
    sent_to(&out, &peer(1)).into_iter().cloned().collect()
}

#[test]
fn a_forgotten_item_leaves_the_sync_set_as_if_it_was_never_held() {
    let [x, y, z] = three();
    let mut forgot = engine_of(&[&x, &y, &z]);
    assert_eq!(forgot.forget(&[y.id()]), 1);
    assert_eq!(forgot.forget(&[y.id()]), 0, "not held any more");
    assert!(!forgot.holds(&y.id()));
    assert!(forgot.holds(&x.id()) && forgot.holds(&z.id()));
    assert_eq!(forgot.item_count(), 2);
    assert!(!forgot.is_withdrawn(&y.id()), "nothing is remembered of it");

    let mut never = engine_of(&[&x, &z]);
    let (a, b) = (opening(&mut forgot), opening(&mut never));
    assert!(
        a.iter().any(|m| matches!(m, WireMessage::SyncQuery { .. })),
        "a session opens: {a:?}"
    );
    assert_eq!(a, b, "the same set, the same fingerprints");
    let mut kept = engine_of(&[&x, &y, &z]);
    assert_ne!(opening(&mut kept), b, "the item counts while it is held");

    // A friend that asks for it by id gets nothing.
    let out = forgot.handle(
        T0,
        Input::Received {
            peer: peer(1),
            message: Inbound::Want(vec![y.id(), x.id()]),
        },
    );
    assert_eq!(items_sent_to(&out, &peer(1)), vec![x.id()]);
}

#[test]
fn a_catch_up_after_forgetting_never_sends_the_item() {
    let [x, y, z] = three();
    let mut net = Net::new(2, T0, |c| c);
    net.befriend(0, 1, 10);
    net.seed(0, [&x, &y, &z].map(|it| ((*it).clone(), 3, None)).to_vec());
    net.seed(
        1,
        vec![(x.clone(), 2, Some(peer(0))), (z.clone(), 2, Some(peer(0)))],
    );
    // Node 0's store keeps its copy here, so only the engine's listing
    // could send it.
    assert_eq!(net.nodes[0].engine.forget(&[y.id()]), 1);
    net.connect_all();
    net.advance(5_000);
    assert!(!net.nodes[1].store.contains_key(&y.id()));
    assert_eq!(net.payload_bytes, 0, "the sets match: nothing is sent");
}

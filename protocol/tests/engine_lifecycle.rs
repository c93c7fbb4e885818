//! Items leaving the engine: retractions and replacements remove their
//! target and are remembered (before or after the target arrives, across a
//! restart), nobody withdraws another author's item, and expired items drop
//! on receipt, on publish and on the timer. Also seeding from storage.

mod engine_support;

use engine_support::*;
use porfiry_protocol::engine::{DeleteReason, Engine, Event, Inbound, Input, Output, RejectReason};
use porfiry_protocol::wire::WireItem;
use porfiry_protocol::wire::WireMessage;
use porfiry_protocol::{Audience, ItemId, ItemRecord, VerifiedItem};

const T0: u64 = 1_700_000_000_000;

fn engine(n: usize) -> Engine {
    let mut e = Engine::new(config(&peer(n)), vec![]);
    for f in 1..=3 {
        if f != n {
            e.handle(
                T0,
                Input::PeerConnected {
                    peer: peer(f),
                    groups: vec![],
                },
            );
        }
    }
    e
}

fn items_from(e: &mut Engine, now: u64, from: usize, item: &VerifiedItem) -> Vec<Output> {
    let msg = WireMessage::Items {
        session: None,
        items: vec![WireItem {
            hops: 3,
            envelope: item.envelope_bytes().to_vec(),
        }],
    };
    e.handle(
        now,
        Input::Received {
            peer: peer(from),
            message: over_wire(&msg, now),
        },
    )
}

fn deleted(outputs: &[Output]) -> Vec<(ItemId, DeleteReason)> {
    outputs
        .iter()
        .filter_map(|o| {
            if let Output::Delete { id, reason } = o {
                Some((*id, reason.clone()))
            } else {
                None
            }
        })
        .collect()
}

fn rejected(outputs: &[Output]) -> Vec<RejectReason> {
    outputs
        .iter()
        .filter_map(|o| match o {
            Output::Event(Event::Rejected { reason, .. }) => Some(reason.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_retraction_removes_its_target_and_the_target_is_refused_later() {
    let mut b = engine(0);
    let x = note(&key(1), T0, Audience::Public, 3, "regret");
    items_from(&mut b, T0, 1, &x);
    let r = retraction(&key(1), T0 + 10, x.id(), Audience::Public, 3);
    let out = items_from(&mut b, T0 + 10, 1, &r);
    assert_eq!(
        stored(&out),
        vec![r.id()],
        "the retraction itself is kept and replicated"
    );
    assert_eq!(
        deleted(&out),
        vec![(x.id(), DeleteReason::Retracted { by: r.id() })]
    );
    assert!(out.iter().any(|o| matches!(o, Output::Event(Event::Withdrawn { target, by }) if *target == x.id() && *by == r.id())));
    assert!(!b.holds(&x.id()) && b.is_withdrawn(&x.id()));
    let out = items_from(&mut b, T0 + 20, 2, &x);
    assert!(stored(&out).is_empty());
    assert_eq!(rejected(&out), vec![RejectReason::Withdrawn]);
}

#[test]
fn a_retraction_that_arrives_first_still_refuses_its_target() {
    let mut b = engine(0);
    let x = note(&key(1), T0, Audience::Public, 3, "late");
    let r = retraction(&key(1), T0 + 10, x.id(), Audience::Public, 3);
    let out = items_from(&mut b, T0 + 10, 2, &r);
    assert!(deleted(&out).is_empty());
    let out = items_from(&mut b, T0 + 20, 1, &x);
    assert_eq!(rejected(&out), vec![RejectReason::Withdrawn]);
    assert!(!b.holds(&x.id()));
}

#[test]
fn nobody_withdraws_another_authors_item() {
    let mut b = engine(0);
    let x = note(&key(1), T0, Audience::Public, 3, "mine, says one");
    items_from(&mut b, T0, 1, &x);
    let forged = retraction(&key(2), T0 + 10, x.id(), Audience::Public, 3);
    let out = items_from(&mut b, T0 + 10, 2, &forged);
    assert!(deleted(&out).is_empty());
    assert!(b.holds(&x.id()));
    // ... nor refuses it later because of that.
    let mut c = engine(0);
    items_from(&mut c, T0 + 10, 2, &forged);
    assert_eq!(stored(&items_from(&mut c, T0 + 20, 1, &x)), vec![x.id()]);
}

#[test]
fn a_replacement_removes_the_old_version() {
    let mut b = engine(0);
    let old = note(&key(1), T0, Audience::Public, 3, "v1");
    items_from(&mut b, T0, 1, &old);
    let new = note_with(
        &key(1),
        T0 + 5,
        Audience::Public,
        3,
        None,
        Some(old.id()),
        "v2",
    );
    let out = items_from(&mut b, T0 + 5, 1, &new);
    assert_eq!(stored(&out), vec![new.id()]);
    assert_eq!(
        deleted(&out),
        vec![(old.id(), DeleteReason::Replaced { by: new.id() })]
    );
    assert_eq!(
        rejected(&items_from(&mut b, T0 + 6, 2, &old)),
        vec![RejectReason::Withdrawn]
    );
}

#[test]
fn our_own_retraction_applies_locally_and_is_pushed() {
    let mut a = engine(0);
    let x = note(&key(0), T0, Audience::Public, 3, "oops");
    a.handle(T0, Input::Publish { item: x.clone() });
    let r = retraction(&key(0), T0 + 1, x.id(), Audience::Public, 3);
    let out = a.handle(T0 + 1, Input::Publish { item: r.clone() });
    assert_eq!(
        deleted(&out),
        vec![(x.id(), DeleteReason::Retracted { by: r.id() })]
    );
    let out = a.handle(T0 + 1000, Input::Tick);
    assert_eq!(
        items_sent_to(&out, &peer(1)),
        vec![r.id()],
        "the retracted note never leaves; the retraction does"
    );
    let again = a.handle(T0 + 1001, Input::Publish { item: x });
    assert_eq!(rejected(&again), vec![RejectReason::Withdrawn]);
}

#[test]
fn expired_items_are_refused_on_receipt_and_on_publish() {
    let mut b = engine(0);
    let x = note_with(
        &key(1),
        T0,
        Audience::Public,
        3,
        Some(T0 + 1000),
        None,
        "brief",
    );
    let inbound = Inbound::Items {
        session: None,
        items: vec![porfiry_protocol::engine::ReceivedItem {
            hops: 3,
            item: x.clone(),
        }],
        invalid: vec![],
        unreadable: vec![],
    };
    let out = b.handle(
        T0 + 1000,
        Input::Received {
            peer: peer(1),
            message: inbound,
        },
    );
    assert_eq!(rejected(&out), vec![RejectReason::Expired]);
    let mine = note_with(
        &key(0),
        T0,
        Audience::Public,
        3,
        Some(T0 + 1000),
        None,
        "too late",
    );
    assert_eq!(
        rejected(&b.handle(T0 + 1000, Input::Publish { item: mine })),
        vec![RejectReason::Expired]
    );
}

#[test]
fn held_items_drop_when_they_expire() {
    let mut b = engine(0);
    let x = note_with(
        &key(1),
        T0,
        Audience::Public,
        3,
        Some(T0 + 1000),
        None,
        "brief",
    );
    let out = items_from(&mut b, T0, 1, &x);
    assert!(b.holds(&x.id()));
    assert!(out.iter().any(|o| matches!(o, Output::WakeAt { .. })));
    assert_eq!(b.next_wake(), Some(T0 + 100), "the push batch comes first");
    b.handle(T0 + 100, Input::Tick);
    assert_eq!(b.next_wake(), Some(T0 + 1000), "then the expiry");
    assert!(deleted(&b.handle(T0 + 999, Input::Tick)).is_empty());
    let out = b.handle(T0 + 1000, Input::Tick);
    assert_eq!(deleted(&out), vec![(x.id(), DeleteReason::Expired)]);
    assert!(
        out.iter()
            .any(|o| matches!(o, Output::Event(Event::Expired { id }) if *id == x.id()))
    );
    assert!(!b.holds(&x.id()));
}

#[test]
fn seeding_from_storage_rebuilds_tombstones_and_drops_what_expired_while_down() {
    let x = note(
        &key(1),
        T0,
        Audience::Public,
        3,
        "withdrawn before the restart",
    );
    let r = retraction(&key(1), T0 + 1, x.id(), Audience::Public, 3);
    let brief = note_with(
        &key(1),
        T0,
        Audience::Public,
        3,
        Some(T0 + 50),
        None,
        "expired while down",
    );
    let kept = note(&key(2), T0, Audience::Friends, 1, "kept");
    let records = vec![
        ItemRecord::of(&x, 2, Some(peer(1))),
        ItemRecord::of(&r, 2, Some(peer(1))),
        ItemRecord::of(&brief, 2, Some(peer(1))),
        ItemRecord::of(&kept, 0, Some(peer(2))),
    ];
    assert_eq!(records[1].retracts, Some(x.id()));
    let mut b = Engine::new(config(&peer(0)), records);
    assert!(
        !b.holds(&x.id()),
        "a stored retraction's target is not held"
    );
    assert!(b.is_withdrawn(&x.id()));
    assert_eq!(b.item_count(), 3);
    let out = b.handle(T0 + 100, Input::Tick);
    assert_eq!(deleted(&out), vec![(brief.id(), DeleteReason::Expired)]);
    assert!(b.holds(&kept.id()) && b.holds(&r.id()));
    b.handle(
        T0 + 100,
        Input::PeerConnected {
            peer: peer(1),
            groups: vec![],
        },
    );
    let out = items_from(&mut b, T0 + 200, 1, &x);
    assert_eq!(rejected(&out), vec![RejectReason::Withdrawn]);
}

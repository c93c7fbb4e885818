//! The pull side of live push and hop counts, driving single engines by
//! hand with a fake clock: one announcer asked at a time with timeout and
//! re-ask, best offered hops, raising hops and counter-announces, what a
//! friend may pull, disconnects, announces to authors, and the want cap.

mod engine_support;

use engine_support::*;
use porfiry_protocol::engine::{
    Engine, Event, Inbound, Input, Output, PUSH_BATCH_DELAY_MS, WANT_TIMEOUT_MS,
};
use porfiry_protocol::wire::{Announce, WireItem, WireMessage};
use porfiry_protocol::{Audience, ItemId};

#[test]
fn announced_items_are_pulled_from_one_friend_and_reasked_after_a_timeout() {
    let mut a = engine(0);
    for f in 1..=3 {
        connect(&mut a, f, &[]);
    }
    let x = note(&key(4), T0, Audience::Public, 4, "pulled");
    let out = have_from(&mut a, T0, 1, x.id(), 3);
    assert_eq!(wants_to(&out, 1), vec![x.id()]);
    let out = have_from(&mut a, T0 + 1, 2, x.id(), 3);
    assert!(wants_to(&out, 2).is_empty(), "one ask at a time");
    assert!(wants_to(&a.handle(T0 + WANT_TIMEOUT_MS - 1, Input::Tick), 2).is_empty());
    let out = a.handle(T0 + WANT_TIMEOUT_MS, Input::Tick);
    assert_eq!(
        wants_to(&out, 2),
        vec![x.id()],
        "after the timeout the next announcer is asked"
    );
    let out = items_from(&mut a, T0 + WANT_TIMEOUT_MS + 10, 2, 3, &x);
    assert_eq!(stored(&out), vec![x.id()]);
    // Received: no want is left to time out, and the relay push skips both
    // announcers (even 1, which was too slow) and goes to 3 only.
    let out = a.handle(T0 + 3 * WANT_TIMEOUT_MS, Input::Tick);
    assert!(
        events(&out)
            .iter()
            .all(|e| !matches!(e, Event::WantGaveUp { .. }))
    );
    assert!(wants_to(&out, 1).is_empty() && wants_to(&out, 3).is_empty());
    assert_eq!(
        haves_to(&out, 3),
        vec![Announce {
            id: x.id(),
            hops: 2
        }]
    );
    assert!(haves_to(&out, 1).is_empty() && haves_to(&out, 2).is_empty());
}

#[test]
fn the_push_skips_friends_that_announced_the_item() {
    let mut a = engine(0);
    for f in 1..=3 {
        connect(&mut a, f, &[]);
    }
    let x = note(&key(4), T0, Audience::Public, 4, "known");
    have_from(&mut a, T0, 1, x.id(), 3);
    have_from(&mut a, T0, 2, x.id(), 3);
    items_from(&mut a, T0 + 10, 1, 3, &x);
    let out = a.handle(T0 + 10 + PUSH_BATCH_DELAY_MS, Input::Tick);
    assert!(haves_to(&out, 1).is_empty());
    assert!(
        haves_to(&out, 2).is_empty(),
        "2 announced it with as many hops as we could give"
    );
    assert_eq!(
        haves_to(&out, 3),
        vec![Announce {
            id: x.id(),
            hops: 2
        }]
    );
}

#[test]
fn a_wanted_item_takes_the_best_hops_offered() {
    let mut a = engine(0);
    connect(&mut a, 1, &[]);
    connect(&mut a, 2, &[]);
    let x = note(&key(4), T0, Audience::Public, 5, "far");
    have_from(&mut a, T0, 1, x.id(), 1);
    have_from(&mut a, T0, 2, x.id(), 4);
    let out = items_from(&mut a, T0 + 10, 1, 1, &x);
    assert_eq!(stored(&out), vec![x.id()]);
    assert_eq!(
        a.hops_left(&x.id()),
        Some(3),
        "2 offered four hops, so ours has three"
    );
    assert!(out.iter().any(
        |o| matches!(o, Output::Store { hops_left: 3, received_from: Some(p), .. } if *p == peer(2))
    ));
}

#[test]
fn a_better_announce_raises_hops_and_a_worse_one_gets_a_counter_announce() {
    let mut a = engine(0);
    connect(&mut a, 1, &[]);
    connect(&mut a, 2, &[]);
    connect(&mut a, 3, &[]);
    let x = note(&key(4), T0, Audience::Public, 6, "raise");
    items_from(&mut a, T0, 1, 2, &x);
    assert_eq!(a.hops_left(&x.id()), Some(1));
    let out = have_from(&mut a, T0 + 1, 2, x.id(), 5);
    assert_eq!(a.hops_left(&x.id()), Some(4));
    assert!(
        out.iter()
            .any(|o| matches!(o, Output::UpdateRoute { hops_left: 4, .. }))
    );
    assert!(events(&out).contains(&&Event::HopsRaised {
        id: x.id(),
        hops_left: 4,
        from: peer(2)
    }));
    // 3 announces it with 1 hop left; ours can give it 3: tell it.
    let out = have_from(&mut a, T0 + 2, 3, x.id(), 1);
    assert_eq!(
        haves_to(&out, 3),
        vec![Announce {
            id: x.id(),
            hops: 4
        }]
    );
    // A worse announce changes nothing.
    let out = have_from(&mut a, T0 + 3, 1, x.id(), 3);
    assert_eq!(a.hops_left(&x.id()), Some(4));
    assert!(!out.iter().any(|o| matches!(o, Output::UpdateRoute { .. })));
}

#[test]
fn a_friend_may_pull_only_what_may_send_admits() {
    let mut a = engine(0);
    connect(&mut a, 1, &[]);
    connect(&mut a, 2, &[]);
    let public = note(&key(1), T0, Audience::Public, 3, "public from one");
    let friends = note(&key(1), T0, Audience::Friends, 1, "one's friends");
    items_from(&mut a, T0, 1, 3, &public);
    items_from(&mut a, T0, 1, 1, &friends);
    let ids = vec![public.id(), friends.id(), ItemId([7; 32])];
    let out = a.handle(
        T0 + 1,
        Input::Received {
            peer: peer(2),
            message: Inbound::Want(ids.clone()),
        },
    );
    assert_eq!(items_sent_to(&out, &peer(2)), vec![public.id()]);
    assert!(events(&out).contains(&&Event::WantRefused {
        peer: peer(2),
        count: 2
    }));
    let out = a.handle(
        T0 + 1,
        Input::Received {
            peer: peer(1),
            message: Inbound::Want(ids),
        },
    );
    assert!(
        items_sent_to(&out, &peer(1)).is_empty(),
        "never back to the author"
    );
}

#[test]
fn a_disconnected_friends_asks_go_to_another_announcer() {
    let mut a = engine(0);
    connect(&mut a, 1, &[]);
    connect(&mut a, 2, &[]);
    let x = note(&key(4), T0, Audience::Public, 4, "moved");
    have_from(&mut a, T0, 1, x.id(), 3);
    have_from(&mut a, T0, 2, x.id(), 3);
    let out = a.handle(T0 + 5, Input::PeerDisconnected { peer: peer(1) });
    assert_eq!(wants_to(&out, 2), vec![x.id()]);
    let out = a.handle(T0 + 6, Input::PeerDisconnected { peer: peer(2) });
    assert!(events(&out).contains(&&Event::WantGaveUp { id: x.id() }));
}

#[test]
fn a_connecting_author_hears_of_its_items_we_hold_with_too_few_hops() {
    let mut a = engine(0);
    connect(&mut a, 2, &[]);
    // 1's item reached us through 2 with 1 hop left; 1 would give us 3.
    let x = note(&key(1), T0, Audience::Public, 4, "long way round");
    items_from(&mut a, T0, 2, 2, &x);
    let direct = note(&key(1), T0 + 1, Audience::Public, 4, "came straight");
    items_from(&mut a, T0, 2, 5, &direct);
    assert_eq!(a.hops_left(&direct.id()), Some(4));
    let out = connect(&mut a, 1, &[]);
    assert_eq!(
        haves_to(&out, 1),
        vec![Announce {
            id: x.id(),
            hops: 1
        }],
        "only the short copy is announced"
    );
    // The author's counter-announce raises our copy.
    let out = have_from(&mut a, T0 + 10, 1, x.id(), 4);
    assert_eq!(a.hops_left(&x.id()), Some(3));
    assert!(
        out.iter()
            .any(|o| matches!(o, Output::UpdateRoute { hops_left: 3, .. }))
    );
}

#[test]
fn items_got_by_catch_up_are_announced_to_their_author_and_even_without_hops() {
    let mut a = engine(0);
    for f in 1..=3 {
        connect(&mut a, f, &[]);
    }
    let x = note(&key(1), T0, Audience::Public, 3, "caught up");
    let msg = WireMessage::Items {
        session: Some(4),
        items: vec![WireItem {
            hops: 1,
            envelope: x.envelope_bytes().to_vec(),
        }],
    };
    a.handle(
        T0,
        Input::Received {
            peer: peer(2),
            message: over_wire(&msg, T0),
        },
    );
    assert_eq!(a.hops_left(&x.id()), Some(0));
    let out = a.handle(T0 + PUSH_BATCH_DELAY_MS, Input::Tick);
    assert_eq!(
        haves_to(&out, 1),
        vec![Announce {
            id: x.id(),
            hops: 0
        }],
        "to the author, who may give more"
    );
    assert_eq!(
        haves_to(&out, 3),
        vec![Announce {
            id: x.id(),
            hops: 0
        }]
    );
    assert!(haves_to(&out, 2).is_empty(), "not to the sender");
    // The same item received live with no hops left is not announced.
    let mut b = engine(0);
    for f in 1..=3 {
        connect(&mut b, f, &[]);
    }
    items_from(&mut b, T0, 2, 1, &x);
    let out = b.handle(T0 + PUSH_BATCH_DELAY_MS, Input::Tick);
    assert!(haves_to(&out, 1).is_empty() && haves_to(&out, 3).is_empty());
}

#[test]
fn a_flood_of_announces_is_capped() {
    let mut cfg = config(&peer(0));
    cfg.max_wanted = 3;
    let mut a = Engine::new(cfg, vec![]);
    connect(&mut a, 1, &[]);
    let announces: Vec<Announce> = (0..5u8)
        .map(|i| Announce {
            id: ItemId([i; 32]),
            hops: 2,
        })
        .collect();
    let out = a.handle(
        T0,
        Input::Received {
            peer: peer(1),
            message: Inbound::Have(announces.clone()),
        },
    );
    assert_eq!(
        wants_to(&out, 1),
        vec![ItemId([0; 32]), ItemId([1; 32]), ItemId([2; 32])]
    );
    // Announcing a wanted item again is fine; new ones still wait for room.
    let out = a.handle(
        T0 + 1,
        Input::Received {
            peer: peer(1),
            message: Inbound::Have(announces),
        },
    );
    assert!(wants_to(&out, 1).is_empty());
}

//! One test per live-push rule of the engine, driving single engines by
//! hand with a fake clock: batch delay, eager push of our own items, lazy
//! announce of relayed ones, no echo, hop limits, dedup, the one-hop
//! audiences, strangers and bad envelopes. Pulling is in engine_pull.rs.

mod engine_support;

use engine_support::*;
use porfiry_protocol::engine::{
    Engine, EngineConfig, Event, Inbound, Input, Output, PUSH_BATCH_DELAY_MS, PUSH_BATCH_FULL,
    ReceivedItem, RejectReason,
};
use porfiry_protocol::wire::{Announce, WireItem, WireMessage};
use porfiry_protocol::{Audience, ItemId};

#[test]
fn own_items_wait_the_batch_delay_then_go_eagerly_to_every_friend() {
    let mut a = engine(0);
    connect(&mut a, 1, &[]);
    connect(&mut a, 2, &[]);
    let x = note(&key(0), T0, Audience::Public, 3, "hello");
    let out = a.handle(T0, Input::Publish { item: x.clone() });
    assert_eq!(stored(&out), vec![x.id()]);
    assert!(
        items_sent_to(&out, &peer(1)).is_empty(),
        "nothing leaves before the batch delay"
    );
    assert!(
        out.iter()
            .any(|o| matches!(o, Output::WakeAt { at_ms } if *at_ms == T0 + PUSH_BATCH_DELAY_MS))
    );

    let y = note(&key(0), T0 + 60, Audience::Public, 3, "second, same batch");
    a.handle(T0 + 60, Input::Publish { item: y.clone() });
    assert!(
        items_sent_to(
            &a.handle(T0 + PUSH_BATCH_DELAY_MS - 1, Input::Tick),
            &peer(1)
        )
        .is_empty()
    );

    let out = a.handle(T0 + PUSH_BATCH_DELAY_MS, Input::Tick);
    for f in [1, 2] {
        assert_eq!(
            items_sent_to(&out, &peer(f)),
            vec![x.id(), y.id()],
            "one batch to friend {f}"
        );
        let hops: Vec<u8> = out
            .iter()
            .filter_map(|o| match o {
                Output::SendItems {
                    peer: p,
                    items,
                    session: None,
                } if *p == peer(f) => Some(items[0].hops),
                _ => None,
            })
            .collect();
        assert_eq!(hops, vec![3], "our own items leave with max_hops");
    }
    assert!(
        a.handle(T0 + 2 * PUSH_BATCH_DELAY_MS, Input::Tick)
            .iter()
            .all(|o| !matches!(o, Output::SendItems { .. }))
    );
}

#[test]
fn a_full_batch_leaves_at_once_and_the_rest_waits_the_delay() {
    let full = 5;
    let mut a = Engine::new(
        EngineConfig {
            push_batch_full: full,
            ..config(&peer(0))
        },
        Vec::<porfiry_protocol::ItemRecord>::new(),
    );
    connect(&mut a, 1, &[]);
    let notes: Vec<_> = (0..full + 2)
        .map(|i| note(&key(0), T0, Audience::Public, 3, &format!("bulk {i}")))
        .collect();
    let mut sent = Vec::new();
    for (i, x) in notes.iter().enumerate() {
        let out = a.handle(T0, Input::Publish { item: x.clone() });
        let now = items_sent_to(&out, &peer(1));
        if i + 1 == full {
            assert_eq!(now.len(), full, "the item that fills the batch sends it");
        } else {
            assert!(now.is_empty(), "item {i} waits");
        }
        sent.extend(now);
    }
    let out = a.handle(T0 + PUSH_BATCH_DELAY_MS, Input::Tick);
    sent.extend(items_sent_to(&out, &peer(1)));
    let all: Vec<ItemId> = notes.iter().map(|x| x.id()).collect();
    assert_eq!(
        sent, all,
        "each once, in order; the last two after the delay"
    );
    assert_eq!(PUSH_BATCH_FULL, porfiry_protocol::wire::MAX_IDS_PER_MESSAGE);
}

#[test]
fn a_bulk_import_of_a_full_batch_leaves_at_once_with_the_default_settings() {
    // The size a user meets: a pasted archive of thousands of notes.
    let mut a = engine(0);
    connect(&mut a, 1, &[]);
    let key = key(0);
    let mut sent = 0;
    for i in 0..PUSH_BATCH_FULL + 3 {
        let x = note(&key, T0, Audience::Public, 3, &format!("imported {i}"));
        let out = a.handle(T0, Input::Publish { item: x });
        let now = items_sent_to(&out, &peer(1)).len();
        if i + 1 == PUSH_BATCH_FULL {
            assert_eq!(now, PUSH_BATCH_FULL, "the 4,096th note sends the batch");
        } else {
            assert_eq!(now, 0, "note {i} waits");
        }
        sent += now;
    }
    let out = a.handle(T0 + PUSH_BATCH_DELAY_MS, Input::Tick);
    sent += items_sent_to(&out, &peer(1)).len();
    assert_eq!(sent, PUSH_BATCH_FULL + 3, "the rest after the delay");
}

#[test]
fn flush_push_sends_the_queued_batch_at_once_and_nothing_when_none_is_queued() {
    let mut a = engine(0);
    connect(&mut a, 1, &[]);
    let out = a.handle(T0, Input::FlushPush);
    assert!(
        out.iter().all(|o| !matches!(o, Output::SendItems { .. })),
        "nothing queued, nothing sent"
    );
    let notes: Vec<_> = (0..3)
        .map(|i| note(&key(0), T0, Audience::Public, 3, &format!("run {i}")))
        .collect();
    for x in &notes {
        let out = a.handle(T0, Input::Publish { item: x.clone() });
        assert!(items_sent_to(&out, &peer(1)).is_empty(), "waits the delay");
    }
    let out = a.handle(T0 + 1, Input::FlushPush);
    let all: Vec<ItemId> = notes.iter().map(|x| x.id()).collect();
    assert_eq!(items_sent_to(&out, &peer(1)), all, "the run leaves at once");
    let later = a.handle(T0 + PUSH_BATCH_DELAY_MS, Input::Tick);
    assert!(
        items_sent_to(&later, &peer(1)).is_empty(),
        "and not again when the delay would have ended"
    );
}

#[test]
fn relayed_items_are_announced_never_back_to_sender_or_author() {
    let mut a = engine(0);
    for f in 1..=3 {
        connect(&mut a, f, &[]);
    }
    // Written by 1, received from 1: announced to 2 and 3 only.
    let x = note(&key(1), T0, Audience::Public, 3, "from one");
    let out = items_from(&mut a, T0, 1, 3, &x);
    assert_eq!(stored(&out), vec![x.id()]);
    assert_eq!(a.hops_left(&x.id()), Some(2));
    // Written by 3, received from 1: announced to 2 only.
    let y = note(&key(3), T0, Audience::Public, 3, "from three via one");
    items_from(&mut a, T0, 1, 2, &y);
    let out = a.handle(T0 + PUSH_BATCH_DELAY_MS, Input::Tick);
    assert!(
        items_sent_to(&out, &peer(2)).is_empty(),
        "relayed items are announced, not pushed"
    );
    assert_eq!(
        haves_to(&out, 2),
        vec![
            Announce {
                id: x.id(),
                hops: 2
            },
            Announce {
                id: y.id(),
                hops: 1
            }
        ]
    );
    assert_eq!(
        haves_to(&out, 3),
        vec![Announce {
            id: x.id(),
            hops: 2
        }]
    );
    assert!(haves_to(&out, 1).is_empty(), "never back to the sender");
}

#[test]
fn hops_left_is_min_of_received_minus_one_and_max_hops() {
    let mut a = engine(0);
    connect(&mut a, 1, &[]);
    connect(&mut a, 2, &[]);
    let x = note(&key(1), T0, Audience::Public, 2, "max two");
    items_from(&mut a, T0, 1, 7, &x);
    assert_eq!(
        a.hops_left(&x.id()),
        Some(2),
        "capped by the author's max_hops"
    );

    let last = note(&key(1), T0 + 1, Audience::Public, 5, "last hop");
    items_from(&mut a, T0, 1, 1, &last);
    assert_eq!(a.hops_left(&last.id()), Some(0));
    let out = a.handle(T0 + PUSH_BATCH_DELAY_MS, Input::Tick);
    assert!(
        !haves_to(&out, 2).iter().any(|h| h.id == last.id()),
        "an item out of hops stays here"
    );

    let zero = note(&key(1), T0 + 2, Audience::Public, 5, "sender had none left");
    let out = items_from(&mut a, T0, 1, 0, &zero);
    assert!(stored(&out).is_empty());
    assert!(events(&out).iter().any(|e| matches!(
        e,
        Event::Rejected {
            reason: RejectReason::NoHopsLeft,
            ..
        }
    )));

    let out = have_from(&mut a, T0, 1, ItemId([9; 32]), 0);
    assert!(
        wants_to(&out, 1).is_empty(),
        "an announce with no hops left is not pulled"
    );
}

#[test]
fn duplicates_are_dropped_by_id() {
    let mut a = engine(0);
    connect(&mut a, 1, &[]);
    connect(&mut a, 2, &[]);
    let x = note(&key(3), T0, Audience::Public, 4, "twice");
    assert_eq!(stored(&items_from(&mut a, T0, 1, 3, &x)), vec![x.id()]);
    let out = items_from(&mut a, T0 + 5, 2, 3, &x);
    assert!(stored(&out).is_empty());
    assert!(events(&out).contains(&&Event::Duplicate {
        id: x.id(),
        from: Some(peer(2))
    }));
    assert_eq!(a.item_count(), 1);
    let out = a.handle(
        T0 + 5,
        Input::Publish {
            item: note(&key(0), T0, Audience::Public, 1, "mine"),
        },
    );
    let mine = stored(&out)[0];
    let again = a.handle(
        T0 + 6,
        Input::Publish {
            item: note(&key(0), T0, Audience::Public, 1, "mine"),
        },
    );
    assert!(events(&again).contains(&&Event::Duplicate {
        id: mine,
        from: None
    }));
}

#[test]
fn friends_and_group_items_travel_one_hop_from_their_author_only() {
    let mut a = engine(0);
    connect(&mut a, 1, &["family"]);
    connect(&mut a, 2, &[]);
    let f = note(&key(0), T0, Audience::Friends, 1, "friends");
    let g = note(&key(0), T0, Audience::Group("family".into()), 1, "family");
    a.handle(T0, Input::Publish { item: f.clone() });
    a.handle(T0, Input::Publish { item: g.clone() });
    let out = a.handle(T0 + PUSH_BATCH_DELAY_MS, Input::Tick);
    assert_eq!(items_sent_to(&out, &peer(1)), vec![f.id(), g.id()]);
    assert_eq!(
        items_sent_to(&out, &peer(2)),
        vec![f.id()],
        "2 is not in the group"
    );

    // A friend never relays them, even with hops to spare.
    let mut b = engine(1);
    connect(&mut b, 0, &[]);
    connect(&mut b, 3, &["family"]);
    let wide = note(&key(0), T0, Audience::Group("family".into()), 4, "wide");
    let out = items_from(&mut b, T0, 0, 4, &wide);
    assert_eq!(stored(&out), vec![wide.id()]);
    let out = b.handle(T0 + PUSH_BATCH_DELAY_MS, Input::Tick);
    assert!(haves_to(&out, 3).is_empty() && items_sent_to(&out, &peer(3)).is_empty());
    // ... and refuses one relayed by a non-author.
    let relayed = note(&key(3), T0, Audience::Friends, 1, "three's");
    let out = items_from(&mut b, T0, 0, 1, &relayed);
    assert!(stored(&out).is_empty());
    assert!(events(&out).iter().any(|e| matches!(
        e,
        Event::Rejected {
            reason: RejectReason::NotFromAuthor,
            ..
        }
    )));
}

#[test]
fn a_direct_message_goes_to_its_addressee_only_and_stops_there() {
    let mut a = engine(0);
    connect(&mut a, 1, &["family"]);
    connect(&mut a, 2, &["family"]);
    let dm = note(&key(0), T0, Audience::Peer(peer(1)), 1, "for one only");
    assert_eq!(
        stored(&a.handle(T0, Input::Publish { item: dm.clone() })),
        vec![dm.id()]
    );
    let out = a.handle(T0 + PUSH_BATCH_DELAY_MS, Input::Tick);
    assert_eq!(items_sent_to(&out, &peer(1)), vec![dm.id()]);
    assert!(items_sent_to(&out, &peer(2)).is_empty() && haves_to(&out, 2).is_empty());
    // 2 cannot pull it either, even knowing its id.
    let out = a.handle(
        T0 + 200,
        Input::Received {
            peer: peer(2),
            message: Inbound::Want(vec![dm.id()]),
        },
    );
    assert!(items_sent_to(&out, &peer(2)).is_empty());
    assert!(events(&out).contains(&&Event::WantRefused {
        peer: peer(2),
        count: 1
    }));

    // The addressee keeps it and passes it to nobody, hops or not.
    let mut b = engine(1);
    connect(&mut b, 0, &[]);
    connect(&mut b, 3, &[]);
    let wide = note(&key(0), T0, Audience::Peer(peer(1)), 4, "wide");
    assert_eq!(
        stored(&items_from(&mut b, T0, 0, 4, &wide)),
        vec![wide.id()]
    );
    let out = b.handle(T0 + PUSH_BATCH_DELAY_MS, Input::Tick);
    assert!(haves_to(&out, 3).is_empty() && items_sent_to(&out, &peer(3)).is_empty());

    // Anyone else refuses it, from its author or relayed, and stores nothing.
    let mut c = engine(2);
    connect(&mut c, 0, &[]);
    connect(&mut c, 1, &[]);
    for (from, reason) in [
        (0, RejectReason::NotAddressedToUs),
        (1, RejectReason::NotAddressedToUs),
    ] {
        let out = items_from(&mut c, T0, from, 1, &dm);
        assert!(stored(&out).is_empty(), "from {from}");
        assert!(
            events(&out).iter().any(|e| matches!(
                e,
                Event::Rejected { reason: r, id: Some(id), .. } if *r == reason && *id == dm.id()
            )),
            "from {from}"
        );
    }
    assert_eq!(c.item_count(), 0);
    // A message for 2 relayed by 1 is refused as not from its author.
    let to_two = note(&key(0), T0, Audience::Peer(peer(2)), 1, "for two");
    let out = items_from(&mut c, T0, 1, 1, &to_two);
    assert!(stored(&out).is_empty());
    assert!(events(&out).iter().any(|e| matches!(
        e,
        Event::Rejected {
            reason: RejectReason::NotFromAuthor,
            ..
        }
    )));
    assert_eq!(
        stored(&items_from(&mut c, T0, 0, 1, &to_two)),
        vec![to_two.id()]
    );
}

#[test]
fn messages_from_strangers_and_foreign_publishes_are_refused() {
    let mut a = engine(0);
    let x = note(&key(1), T0, Audience::Public, 3, "stranger");
    let out = items_from(&mut a, T0, 1, 3, &x);
    assert!(stored(&out).is_empty());
    assert!(events(&out).contains(&&Event::UnknownPeer { peer: peer(1) }));
    let out = a.handle(T0, Input::Publish { item: x.clone() });
    assert!(stored(&out).is_empty());
    assert!(events(&out).iter().any(|e| matches!(
        e,
        Event::Rejected {
            reason: RejectReason::NotOurs,
            ..
        }
    )));
    connect(&mut a, 1, &[]);
    let own = note(&key(0), T0, Audience::Public, 3, "mine, offered back");
    let out = items_from(&mut a, T0, 1, 3, &own);
    assert!(events(&out).iter().any(|e| matches!(
        e,
        Event::Rejected {
            reason: RejectReason::OwnItem,
            ..
        }
    )));
}

#[test]
fn envelopes_that_fail_the_edge_checks_are_reported_not_stored() {
    let mut a = engine(0);
    connect(&mut a, 1, &[]);
    let x = note(&key(1), T0, Audience::Public, 3, "tamper with me");
    let mut bad = x.envelope_bytes().to_vec();
    let at = bad.len() - 70; // inside the payload, before the signature
    bad[at] ^= 1;
    let msg = WireMessage::Items {
        session: None,
        items: vec![WireItem {
            hops: 3,
            envelope: bad,
        }],
    };
    let out = a.handle(
        T0,
        Input::Received {
            peer: peer(1),
            message: over_wire(&msg, T0),
        },
    );
    assert!(stored(&out).is_empty());
    assert!(events(&out).iter().any(|e| matches!(
        e,
        Event::Rejected {
            reason: RejectReason::Invalid(_),
            id: None,
            ..
        }
    )));
    // A hand-built inbound with a good item is accepted (the driver's edge
    // is the only verifier; the engine trusts `VerifiedItem`).
    let ok = Inbound::Items {
        session: None,
        items: vec![ReceivedItem {
            hops: 3,
            item: x.clone(),
        }],
        invalid: vec![],
        unreadable: vec![],
    };
    assert_eq!(
        stored(&a.handle(
            T0,
            Input::Received {
                peer: peer(1),
                message: ok
            }
        )),
        vec![x.id()]
    );
}

#[test]
fn connecting_again_updates_a_friends_groups_and_reconciles() {
    let mut a = engine(0);
    connect(&mut a, 1, &[]);
    let g = note(
        &key(0),
        T0,
        Audience::Group("family".into()),
        1,
        "family only",
    );
    a.handle(T0, Input::Publish { item: g.clone() });
    let out = a.handle(T0 + PUSH_BATCH_DELAY_MS, Input::Tick);
    assert!(
        items_sent_to(&out, &peer(1)).is_empty(),
        "not in the group yet"
    );
    let out = a.handle(
        T0 + 200,
        Input::PeerConnected {
            peer: peer(1),
            groups: vec!["family".into()],
        },
    );
    let query = sent_to(&out, &peer(1))
        .into_iter()
        .any(|m| matches!(m, WireMessage::SyncQuery { .. }));
    assert!(
        query,
        "a catch-up session starts at once for the new groups"
    );
    let g2 = note(
        &key(0),
        T0 + 300,
        Audience::Group("family".into()),
        1,
        "now in",
    );
    a.handle(T0 + 300, Input::Publish { item: g2.clone() });
    let out = a.handle(T0 + 300 + PUSH_BATCH_DELAY_MS, Input::Tick);
    assert_eq!(items_sent_to(&out, &peer(1)), vec![g2.id()]);
}

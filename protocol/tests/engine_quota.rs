//! Quotas (`engine/quota.rs`): an author past its budget is refused at the
//! edge (not stored, not relayed, counted), other authors are untouched,
//! friends and club fellows get the larger budget, strangers' public items
//! are kept within the retention bound (oldest out, never a friend's), and
//! the counts survive a restart from storage.

mod engine_support;

use engine_support::*;
use porfiry_protocol::engine::{
    DeleteReason, Engine, EngineConfig, Event, Output, Quotas, RejectReason,
};
use porfiry_protocol::{Audience, ItemRecord, VerifiedItem};

/// Friends 1 and 2 are connected to node 0; 7 and 8 are strangers whose
/// public notes reach node 0 through friend 1.
fn node(quotas: Quotas) -> Engine {
    let mut e = Engine::new(
        EngineConfig {
            quotas,
            ..config(&peer(0))
        },
        vec![],
    );
    connect(&mut e, 1, &[]);
    connect(&mut e, 2, &[]);
    e
}

fn small() -> Quotas {
    Quotas {
        friend_items: 10,
        friend_bytes: 1 << 20,
        stranger_items: 3,
        stranger_bytes: 1 << 20,
        strangers_kept: 100,
        stranger_items_per_link_minute: 1_000,
    }
}

fn public(author: usize, i: u64) -> VerifiedItem {
    note(
        &key(author),
        T0 + i,
        Audience::Public,
        5,
        &format!("n{author}-{i}"),
    )
}

fn rejections(out: &[Output]) -> Vec<RejectReason> {
    events(out)
        .into_iter()
        .filter_map(|e| match e {
            Event::Rejected { reason, .. } => Some(reason.clone()),
            _ => None,
        })
        .collect()
}

fn evicted(out: &[Output]) -> Vec<porfiry_protocol::ItemId> {
    out.iter()
        .filter_map(|o| match o {
            Output::Delete {
                id,
                reason: DeleteReason::Evicted,
            } => Some(*id),
            _ => None,
        })
        .collect()
}

#[test]
fn a_stranger_past_its_budget_is_refused_not_stored_not_relayed_and_counted() {
    let mut e = node(small());
    for i in 0..3 {
        let out = items_from(&mut e, T0 + i, 1, 4, &public(7, i));
        assert_eq!(stored(&out).len(), 1, "within budget: item {i}");
    }
    let x = public(7, 3);
    let out = items_from(&mut e, T0 + 3, 1, 4, &x);
    assert!(stored(&out).is_empty());
    assert_eq!(rejections(&out), vec![RejectReason::OverQuota]);
    assert!(!e.holds(&x.id()));
    // Nothing of it leaves for friend 2, now or at the next push.
    let later = e.handle(T0 + 60_000, porfiry_protocol::engine::Input::FlushPush);
    assert!(!items_sent_to(&later, &peer(2)).contains(&x.id()));
    assert!(haves_to(&later, 2).iter().all(|a| a.id != x.id()));

    let refused = e.refused();
    assert_eq!(refused.len(), 1);
    assert_eq!(refused[0].author, peer(7));
    assert_eq!(refused[0].items, 1);
    assert_eq!(refused[0].bytes, x.envelope_bytes().len() as u64);
    assert_eq!(refused[0].last_ms, T0 + 3);
    assert_eq!(e.usage(&peer(7)).items, 3);
}

#[test]
fn other_authors_keep_flowing_while_one_is_over_budget() {
    let mut e = node(small());
    for i in 0..20 {
        items_from(&mut e, T0 + i, 1, 4, &public(7, i));
    }
    assert_eq!(e.usage(&peer(7)).items, 3);
    assert_eq!(e.refused()[0].items, 17);
    // Another stranger has a budget of its own, and friends the larger one.
    for i in 0..3 {
        assert_eq!(
            stored(&items_from(&mut e, T0 + i, 1, 4, &public(8, i))).len(),
            1
        );
    }
    for i in 0..10 {
        let own = note(&key(2), T0 + i, Audience::Friends, 1, &format!("f{i}"));
        assert_eq!(stored(&items_from(&mut e, T0 + i, 2, 1, &own)).len(), 1);
    }
    let eleventh = note(&key(2), T0 + 10, Audience::Friends, 1, "f10");
    let out = items_from(&mut e, T0 + 10, 2, 1, &eleventh);
    assert_eq!(rejections(&out), vec![RejectReason::OverQuota]);
}

#[test]
fn a_budget_in_bytes_binds_too() {
    let one = public(7, 0).envelope_bytes().len() as u64;
    let mut e = node(Quotas {
        stranger_bytes: one * 2 + one / 2,
        ..small()
    });
    assert_eq!(
        stored(&items_from(&mut e, T0, 1, 4, &public(7, 0))).len(),
        1
    );
    assert_eq!(
        stored(&items_from(&mut e, T0, 1, 4, &public(7, 1))).len(),
        1
    );
    let out = items_from(&mut e, T0, 1, 4, &public(7, 2));
    assert_eq!(rejections(&out), vec![RejectReason::OverQuota]);
}

#[test]
fn a_friend_who_is_not_connected_still_gets_the_friend_budget() {
    let mut e = node(small());
    e.set_trusted([peer(5)]);
    for i in 0..10 {
        let out = items_from(&mut e, T0 + i, 1, 4, &public(5, i));
        assert_eq!(stored(&out).len(), 1, "item {i}");
    }
    assert!(e.refused().is_empty());
    assert_eq!(
        e.strangers_held(),
        0,
        "a friend's items are never a stranger's"
    );
}

#[test]
fn strangers_items_are_kept_within_the_bound_oldest_first_never_a_friends() {
    let mut e = node(Quotas {
        strangers_kept: 4,
        ..small()
    });
    // A friend's public items come first and are older than all.
    for i in 0..3 {
        items_from(
            &mut e,
            T0 + i,
            1,
            4,
            &note(
                &key(1),
                T0 - 1_000 + i,
                Audience::Public,
                4,
                &format!("f{i}"),
            ),
        );
    }
    let a: Vec<_> = (0..3).map(|i| public(7, 10 + i)).collect();
    let b: Vec<_> = (0..3).map(|i| public(8, 20 + i)).collect();
    let mut gone = Vec::new();
    for x in a.iter().chain(&b) {
        gone.extend(evicted(&items_from(&mut e, T0 + 100, 1, 4, x)));
    }
    assert_eq!(
        gone,
        vec![a[0].id(), a[1].id()],
        "the two oldest strangers' items"
    );
    assert_eq!(e.strangers_held(), 4);
    assert!(!e.holds(&a[0].id()) && !e.holds(&a[1].id()));
    assert!(e.holds(&a[2].id()) && b.iter().all(|x| e.holds(&x.id())));
    assert_eq!(e.usage(&peer(1)).items, 3, "the friend's items all stay");
    assert_eq!(
        e.usage(&peer(7)).items,
        1,
        "an eviction frees its author's budget"
    );
}

#[test]
fn an_expired_or_withdrawn_strangers_item_leaves_the_shelf() {
    let mut e = node(small());
    let x = note_with(
        &key(7),
        T0,
        Audience::Public,
        4,
        Some(T0 + 50),
        None,
        "soon gone",
    );
    items_from(&mut e, T0, 1, 4, &x);
    let y = public(7, 1);
    items_from(&mut e, T0, 1, 4, &y);
    assert_eq!(e.strangers_held(), 2);
    e.handle(T0 + 100, porfiry_protocol::engine::Input::Tick);
    assert_eq!(e.strangers_held(), 1);
    let r = retraction(&key(7), T0 + 200, y.id(), Audience::Public, 4);
    items_from(&mut e, T0 + 200, 1, 4, &r);
    assert!(!e.holds(&y.id()));
    assert_eq!(e.strangers_held(), 1, "only the retraction itself is held");
    assert_eq!(e.usage(&peer(7)).items, 1);
}

#[test]
fn usage_and_the_shelf_are_rebuilt_from_storage() {
    let items: Vec<VerifiedItem> = (0..3).map(|i| public(7, i)).collect();
    let records = items.iter().map(|x| ItemRecord::of(x, 3, Some(peer(1))));
    let mut e = Engine::new(
        EngineConfig {
            quotas: small(),
            ..config(&peer(0))
        },
        records,
    );
    assert_eq!(e.usage(&peer(7)).items, 3);
    e.set_trusted([peer(1), peer(2)]);
    assert_eq!(e.strangers_held(), 3);
    connect(&mut e, 1, &[]);
    let out = items_from(&mut e, T0 + 5, 1, 4, &public(7, 5));
    assert_eq!(rejections(&out), vec![RejectReason::OverQuota]);
}

#[test]
fn a_declined_item_is_neither_wanted_again_nor_sent_again_by_catch_up() {
    use engine_support::Net;
    use porfiry_protocol::engine::RESYNC_INTERVAL_MS;
    // 0 has a stranger budget of 5; 1 is its friend; 2, a friend of 1 only,
    // is a stranger to 0 and publishes 20 public notes. 0 goes offline and
    // comes back, and resyncs for hours: each refused note reached it once.
    let mut net = Net::new(3, T0, |c| {
        if c.local_peer == peer(0) {
            EngineConfig {
                quotas: Quotas {
                    stranger_items: 5,
                    ..Quotas::default()
                },
                ..c
            }
        } else {
            c
        }
    });
    net.befriend(0, 1, 20);
    net.befriend(1, 2, 20);
    net.connect_all();
    let key2 = net.nodes[2].key.clone();
    let notes: Vec<VerifiedItem> = (0..20)
        .map(|i| note(&key2, T0 + i, Audience::Public, 5, &format!("s{i}")))
        .collect();
    for x in &notes {
        net.publish(2, x.clone());
    }
    net.advance(5_000);
    let held = |net: &Net| {
        notes
            .iter()
            .filter(|x| net.nodes[0].engine.holds(&x.id()))
            .count()
    };
    assert_eq!(held(&net), 5);
    assert_eq!(net.nodes[0].engine.refused()[0].items, 15);
    net.go_offline(0);
    net.advance(1_000);
    net.go_online(0);
    net.advance(6 * RESYNC_INTERVAL_MS);
    assert_eq!(held(&net), 5);
    for x in &notes {
        assert_eq!(
            net.copies.get(&(0, x.id())),
            Some(&1),
            "{} arrived once",
            x.id()
        );
    }
    assert_eq!(
        net.nodes[0].engine.refused()[0].items,
        15,
        "never offered again"
    );

    // 2 becomes 0's friend: what was declined may come now.
    net.nodes[0].engine.set_trusted([peer(1), peer(2)]);
    net.befriend(0, 2, 20);
    net.connect(0, 2);
    net.advance(2 * RESYNC_INTERVAL_MS);
    assert_eq!(held(&net), 20);
}

#[test]
fn a_link_brings_strangers_items_at_its_rate_and_the_rest_come_later() {
    let mut e = node(Quotas {
        friend_items: 1_000,
        stranger_items: 1_000,
        stranger_items_per_link_minute: 60,
        ..small()
    });
    // 100 items of two strangers relayed by friend 1 at once: a minute's
    // worth is taken, the rest refused for now and not remembered.
    let items: Vec<_> = (0..100).map(|i| public(7 + (i % 2) as usize, i)).collect();
    let mut refused = 0;
    for x in &items {
        let out = items_from(&mut e, T0, 1, 4, x);
        refused += rejections(&out)
            .iter()
            .filter(|r| **r == RejectReason::LinkRate)
            .count();
    }
    assert_eq!(refused, 40);
    assert!(e.refused().is_empty(), "a slow link is no author's fault");
    // Friend 2's link has its own allowance; a friend's own items none.
    assert_eq!(
        stored(&items_from(&mut e, T0, 2, 4, &public(9, 0))).len(),
        1
    );
    for i in 0..100 {
        let own = note(&key(1), T0 + i, Audience::Public, 4, &format!("own {i}"));
        assert_eq!(stored(&items_from(&mut e, T0, 1, 4, &own)).len(), 1);
    }
    // A minute later the refused ones are taken when offered again.
    let waiting: Vec<_> = items.iter().filter(|x| !e.holds(&x.id())).collect();
    let later: usize = waiting
        .into_iter()
        .map(|x| stored(&items_from(&mut e, T0 + 60_000, 1, 4, x)).len())
        .sum();
    assert_eq!(later, 40);
}

//! The replicated items table, tombstones, and the one "may this friend
//! receive it" query.

use porfiry_protocol::devices::DeviceBook;
use porfiry_protocol::{Audience, ClubBook, FriendView, ItemId, ItemKind, ItemRecord, may_send};
use porfiry_storage::{StorageError, StoredItem, limits::MAX_ITEMS_PER_BATCH};
use proptest::prelude::*;

use crate::temp_store;

// Real node ids (keys from seeds 1, 2, 3 and 4), so that direct messages
// (`peer:ID`, which must name a real id) can be stored too.
const ME: &str = "12D3KooWK99VoVxNE7XzyBwXEzW7xhK7Gpv85r9F3V3fyKSUKPH5";
const BOB: &str = "12D3KooWJWoaqZhDaoEFshF7Rh1bpY9ohihFhzcW6d69Lr2NASuq";
const CAROL: &str = "12D3KooWRndVhVZPCiQwHBBBdg769GyrPUW13zxwqQyf9r3ANaba";
const DAVE: &str = "12D3KooWPT98FXMfDQYavZm66EeVjTqP9Nnehn1gyaydqV8L8BQw";

fn id(n: u8) -> ItemId {
    ItemId([n; 32])
}

fn item(n: u8, author: &str, audience: Audience) -> StoredItem {
    StoredItem {
        record: ItemRecord {
            id: id(n),
            author: author.into(),
            kind: ItemKind::Note,
            audience,
            created_ms: 1_000 + u64::from(n),
            expires_ms: None,
            received_from: (author != ME).then(|| author.to_owned()),
            max_hops: 4,
            hops_left: 3,
            retracts: None,
            replaces: None,
            club_target: None,
            club_removal: false,
            envelope_bytes: 3,
        },
        payload: vec![n, 0xCB, 0x0F],
        signature: vec![n; 64],
    }
}

fn retraction(n: u8, author: &str, target: u8) -> StoredItem {
    {
        let mut r = item(n, author, Audience::Public);
        r.record.kind = ItemKind::Retraction;
        r.record.retracts = Some(id(target));
        r
    }
}

#[test]
fn a_direct_message_is_for_its_addressee_only() {
    let (_dir, store) = temp_store();
    let dm = item(1, ME, Audience::Peer(BOB.into()));
    store.insert_items(std::slice::from_ref(&dm)).unwrap();
    assert_eq!(store.get_item(&dm.record.id).unwrap(), Some(dm.clone()));
    let for_bob = store
        .items_for_friend(ME, BOB, &[], &ClubBook::new(), &DeviceBook::new(ME), 0)
        .unwrap();
    assert_eq!(for_bob, std::slice::from_ref(&dm));
    assert!(
        store
            .items_for_friend(ME, CAROL, &[], &ClubBook::new(), &DeviceBook::new(ME), 0)
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .item_keys_for_friend(
                ME,
                CAROL,
                &["family".into()],
                &ClubBook::new(),
                &DeviceBook::new(ME),
                0
            )
            .unwrap()
            .is_empty()
    );
}

#[test]
fn insert_is_idempotent_on_id() {
    let (_dir, store) = temp_store();
    let a = item(1, ME, Audience::Public);
    let b = item(2, BOB, Audience::Friends);
    assert_eq!(
        store
            .insert_items(&[a.clone(), b.clone(), a.clone()])
            .unwrap(),
        2
    );
    assert_eq!(
        store.insert_items(std::slice::from_ref(&a)).unwrap(),
        0,
        "same item again: no error, no row"
    );
    let mut other_path = b.clone();
    other_path.record.received_from = Some(CAROL.into());
    assert_eq!(store.insert_items(&[other_path]).unwrap(), 0);
    assert_eq!(store.item_count().unwrap(), 2);
    assert_eq!(store.get_item(&a.record.id).unwrap(), Some(a.clone()));
    assert_eq!(
        store.get_item(&b.record.id).unwrap(),
        Some(b.clone()),
        "first copy kept"
    );
    assert!(store.has_item(&a.record.id).unwrap());
    assert_eq!(store.get_item(&id(9)).unwrap(), None);
    assert_eq!(
        store.item_records().unwrap(),
        [a.record.clone(), b.record.clone()]
    );
    let streamed = store
        .with_item_records(|rows| rows.collect::<Vec<_>>())
        .unwrap();
    assert_eq!(
        streamed,
        [a.record, b.record],
        "the same rows, one at a time"
    );
}

#[test]
fn stored_records_are_what_seeds_the_engine() {
    let (_dir, store) = temp_store();
    let r = {
        let mut r = item(1, BOB, Audience::Public);
        r.record.replaces = Some(id(9));
        r.record.expires_ms = Some(5_000);
        r
    };
    store
        .insert_items(&[r.clone(), retraction(2, BOB, 7)])
        .unwrap();
    let engine = store.item_records().unwrap();
    assert_eq!(engine.len(), 2);
    let e = &engine[0];
    assert_eq!(
        (e.id, e.author.as_str(), &e.audience),
        (r.record.id, BOB, &r.record.audience)
    );
    assert_eq!(
        (e.created_ms, e.expires_ms, e.max_hops, e.hops_left),
        (1_001, Some(5_000), 4, 3)
    );
    assert_eq!(
        (e.received_from.as_deref(), e.retracts, e.replaces),
        (Some(BOB), None, Some(id(9)))
    );
    assert_eq!(engine[1].retracts, Some(id(7)));
    assert_eq!(
        (e.envelope_bytes, engine[1].envelope_bytes),
        (3, 3),
        "each record carries its envelope's size"
    );
}

#[test]
fn streamed_records_come_oldest_first_and_say_how_many_are_left() {
    let (_dir, store) = temp_store();
    // Ids and creation times in opposite orders.
    let items: Vec<StoredItem> = (1..=3)
        .map(|n| {
            let mut r = item(n, ME, Audience::Public);
            r.record.created_ms = 10_000 - u64::from(n);
            r
        })
        .collect();
    store.insert_items(&items).unwrap();
    let (hints, ids) = store
        .with_item_records(|rows| {
            let mut hints = vec![rows.size_hint()];
            let mut ids = Vec::new();
            while let Some(r) = rows.next() {
                ids.push(r.id);
                hints.push(rows.size_hint());
            }
            (hints, ids)
        })
        .unwrap();
    assert_eq!(ids, [id(3), id(2), id(1)], "by time, not by id");
    assert_eq!(
        hints,
        [(3, Some(3)), (2, Some(2)), (1, Some(1)), (0, Some(0))]
    );
}

#[test]
fn a_bad_record_refuses_the_whole_batch() {
    let (_dir, store) = temp_store();
    let good = item(1, ME, Audience::Public);
    let cases = vec![
        {
            let mut r = item(2, ME, Audience::Public);
            r.record.author = "".into();
            r
        },
        {
            let mut r = item(2, BOB, Audience::Public);
            r.record.received_from = Some("with space".into());
            r
        },
        {
            let mut r = item(2, ME, Audience::Public);
            r.payload = vec![];
            r
        },
        {
            let mut r = item(2, ME, Audience::Public);
            r.record.created_ms = u64::MAX;
            r
        },
        {
            // The engine cuts catch-up chunks by this size: it must be true.
            let mut r = item(2, ME, Audience::Public);
            r.record.envelope_bytes += 1;
            r
        },
        {
            let mut r = item(2, ME, Audience::Public);
            r.record.hops_left = 5;
            r
        },
        {
            let mut r = item(2, ME, Audience::Public);
            r.record.retracts = Some(id(1));
            r
        },
        {
            let mut r = retraction(2, ME, 1);
            r.record.retracts = None;
            r
        },
    ];
    for bad in cases {
        let r = store.insert_items(&[good.clone(), bad.clone()]);
        assert!(
            matches!(r, Err(StorageError::Invalid { .. })),
            "{bad:?} gave {r:?}"
        );
    }
    let bad_peer = item(3, ME, Audience::Peer("12D3KooWBob".into()));
    match store.insert_items(&[bad_peer]) {
        Err(StorageError::Invalid { reason, .. }) => {
            assert!(reason.contains("bad peer id"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    let bad_group = {
        let mut r = item(3, ME, Audience::Public);
        r.record.audience = Audience::Group("Not Valid".into());
        r
    };
    match store.insert_items(&[good.clone(), good.clone(), bad_group]) {
        Err(StorageError::Invalid { what, reason }) => {
            assert!(what.starts_with("item #2 (0303"), "{what}");
            assert!(reason.contains("Not Valid"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(store.item_count().unwrap(), 0);
    let too_many = vec![good; MAX_ITEMS_PER_BATCH + 1];
    assert!(store.insert_items(&too_many).is_err());
}

#[test]
fn retracted_items_are_deleted_and_never_accepted_again() {
    let (_dir, store) = temp_store();
    let a = item(1, BOB, Audience::Public);
    store.insert_items(std::slice::from_ref(&a)).unwrap();
    assert!(store.retract(&a.record.id, BOB, 5).unwrap());
    assert!(!store.has_item(&a.record.id).unwrap());
    assert!(store.is_retracted(&a.record.id, BOB).unwrap());
    assert_eq!(
        store
            .insert_items(&[a.clone(), item(2, BOB, Audience::Public)])
            .unwrap(),
        1
    );
    assert!(!store.has_item(&a.record.id).unwrap());
    // Retracting something never seen still blocks it later; twice is fine.
    assert!(!store.retract(&id(7), BOB, 6).unwrap());
    assert!(!store.retract(&id(7), BOB, 7).unwrap());
    assert_eq!(
        store
            .insert_items(&[item(7, BOB, Audience::Public)])
            .unwrap(),
        0
    );
    assert!(store.retract(&id(8), "", 8).is_err());
}

#[test]
fn only_the_author_can_withdraw_an_item() {
    let (_dir, store) = temp_store();
    store
        .insert_items(&[item(1, BOB, Audience::Public)])
        .unwrap();
    assert!(
        !store.retract(&id(1), CAROL, 5).unwrap(),
        "carol cannot delete bob's item"
    );
    assert!(store.has_item(&id(1)).unwrap());
    assert!(!store.is_retracted(&id(1), BOB).unwrap());
    // A tombstone by carol does not block bob's item from arriving.
    store.retract(&id(2), CAROL, 5).unwrap();
    assert_eq!(
        store
            .insert_items(&[item(2, BOB, Audience::Public)])
            .unwrap(),
        1
    );
}

#[test]
fn retraction_and_replacing_items_withdraw_their_targets() {
    let (_dir, store) = temp_store();
    store
        .insert_items(&[
            item(1, BOB, Audience::Public),
            item(2, BOB, Audience::Public),
        ])
        .unwrap();
    // A retraction by bob removes bob's item 1 and is itself stored (it replicates).
    assert_eq!(store.insert_items(&[retraction(10, BOB, 1)]).unwrap(), 1);
    assert!(!store.has_item(&id(1)).unwrap());
    assert!(store.has_item(&id(10)).unwrap());
    // A newer version replacing item 2 removes it; the old one is refused later.
    let v2 = {
        let mut r = item(11, BOB, Audience::Public);
        r.record.replaces = Some(id(2));
        r
    };
    assert_eq!(store.insert_items(&[v2]).unwrap(), 1);
    assert!(!store.has_item(&id(2)).unwrap());
    assert_eq!(
        store
            .insert_items(&[item(2, BOB, Audience::Public)])
            .unwrap(),
        0
    );
    // Carol's retraction of bob's item 11 does nothing to it.
    store.insert_items(&[retraction(12, CAROL, 11)]).unwrap();
    assert!(store.has_item(&id(11)).unwrap());
    // Retraction first, target later in the same batch: the target is refused.
    assert_eq!(
        store
            .insert_items(&[retraction(13, BOB, 14), item(14, BOB, Audience::Public)])
            .unwrap(),
        1
    );
    assert!(!store.has_item(&id(14)).unwrap());
}

#[test]
fn delete_ids_since_and_expiry() {
    let (_dir, store) = temp_store();
    let mut items: Vec<StoredItem> = (1..=5).map(|n| item(n, ME, Audience::Public)).collect();
    items[0].record.expires_ms = Some(2_000);
    items[1].record.expires_ms = Some(9_000);
    store.insert_items(&items).unwrap();
    let since = store.item_ids_since(1_003).unwrap();
    assert_eq!(since, [(1_003, id(3)), (1_004, id(4)), (1_005, id(5))]);
    assert!(store.delete_item(&id(3)).unwrap());
    assert!(!store.delete_item(&id(3)).unwrap());
    assert_eq!(
        store.insert_items(&[items[2].clone()]).unwrap(),
        1,
        "deleted, not retracted: may come back"
    );
    assert_eq!(store.delete_expired_items(2_000).unwrap(), 1);
    assert_eq!(store.item_count().unwrap(), 4);
}

#[test]
fn items_for_friend_follows_the_policy() {
    let (_dir, store) = temp_store();
    let fam = vec!["family".to_string()];
    let hopless = {
        let mut r = item(6, CAROL, Audience::Public);
        r.record.hops_left = 0;
        r
    };
    let expired = {
        let mut r = item(7, ME, Audience::Public);
        r.record.expires_ms = Some(500);
        r
    };
    let via_bob = {
        let mut r = item(8, CAROL, Audience::Public);
        r.record.received_from = Some(BOB.into());
        r
    };
    store
        .insert_items(&[
            item(1, ME, Audience::Public),
            item(2, ME, Audience::Friends),
            item(3, ME, Audience::Group("family".into())),
            item(4, CAROL, Audience::Public),
            item(5, CAROL, Audience::Friends),
            hopless,
            expired,
            via_bob,
            item(9, BOB, Audience::Public),
        ])
        .unwrap();
    let ids = |groups: &[String], friend: &str| -> Vec<u8> {
        store
            .items_for_friend(
                ME,
                friend,
                groups,
                &ClubBook::new(),
                &DeviceBook::new(ME),
                1_000,
            )
            .unwrap()
            .iter()
            .map(|i| i.record.id.0[0])
            .collect()
    };
    assert_eq!(ids(&fam, BOB), [1, 2, 3, 4]);
    assert_eq!(ids(&[], BOB), [1, 2, 4]);
    assert_eq!(
        ids(&[], CAROL),
        [1, 2, 9],
        "never back to the author or sender"
    );
}

#[test]
fn hand_corrupted_columns_are_clear_errors() {
    let (_dir, store) = temp_store();
    store
        .insert_items(&[item(1, ME, Audience::Public)])
        .unwrap();
    let raw = crate::raw(&store);
    raw.execute("UPDATE items SET audience = 'group:BAD GROUP'", [])
        .unwrap();
    match store.items_for_friend(ME, BOB, &[], &ClubBook::new(), &DeviceBook::new(ME), 0) {
        Err(StorageError::BadColumn {
            table: "items",
            column,
            ..
        }) => assert_eq!(column, "audience"),
        other => panic!("{other:?}"),
    }
    raw.execute("UPDATE items SET audience = 'public', kind = 'poem'", [])
        .unwrap();
    match store.item_records() {
        Err(StorageError::BadColumn {
            table: "items",
            column,
            ..
        }) => assert_eq!(column, "kind"),
        other => panic!("{other:?}"),
    }
    // Streamed, the bad row ends the stream and its error comes back.
    let mut seen = 0;
    match store.with_item_records(|rows| seen = rows.count()) {
        Err(StorageError::BadColumn {
            table: "items",
            column,
            ..
        }) => assert_eq!(column, "kind"),
        other => panic!("{other:?}"),
    }
    assert_eq!(seen, 0, "nothing past the bad row");
    assert!(
        raw.execute("UPDATE items SET id = x'0102'", []).is_err(),
        "ids are 32 bytes"
    );
    assert!(
        raw.execute("UPDATE items SET hops_left = max_hops + 1", [])
            .is_err()
    );
    // The stream's snapshot ended with it: a later read sees later writes.
    raw.execute("DELETE FROM items", []).unwrap();
    assert_eq!(store.item_count().unwrap(), 0);
}

fn arb_item() -> impl Strategy<Value = StoredItem> {
    let peer = prop::sample::select(vec![ME, BOB, CAROL, DAVE]);
    let audience = prop_oneof![
        Just(Audience::Public),
        Just(Audience::Friends),
        Just(Audience::Group("family".into())),
        Just(Audience::Group("club".into())),
        Just(Audience::Peer(BOB.into())),
        Just(Audience::Peer(CAROL.into())),
    ];
    (
        any::<[u8; 32]>(),
        peer.clone(),
        audience,
        0u64..100,
        prop::option::of(0u64..100),
        prop::option::of(peer),
        0u8..3,
    )
        .prop_map(
            |(id, author, audience, created, expires, from, hops)| StoredItem {
                record: ItemRecord {
                    id: ItemId(id),
                    author: author.into(),
                    kind: ItemKind::Note,
                    audience,
                    created_ms: created,
                    expires_ms: expires,
                    received_from: from.map(str::to_owned),
                    max_hops: 3,
                    hops_left: hops,
                    retracts: None,
                    replaces: None,
                    club_target: None,
                    club_removal: false,
                    envelope_bytes: 1,
                },
                payload: vec![1],
                signature: vec![2],
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// The SQL prefilter never changes the answer: the result is exactly the
    /// stored items for which `may_send` says yes.
    #[test]
    fn items_for_friend_equals_may_send_over_all_items(
        items in prop::collection::vec(arb_item(), 0..40),
        friend in prop::sample::select(vec![BOB, CAROL, DAVE]),
        in_family in any::<bool>(),
        now in 0u64..100,
    ) {
        let (_dir, store) = temp_store();
        store.insert_items(&items).unwrap();
        let groups: Vec<String> = if in_family { vec!["family".into()] } else { vec![] };
        let full = store.items_for_friend(ME, friend, &groups, &ClubBook::new(), &DeviceBook::new(ME), now).unwrap();
        let got: Vec<ItemId> = full.iter().map(|i| i.record.id).collect();
        let keys: Vec<(u64, ItemId)> = full.iter().map(|i| (i.record.created_ms, i.record.id)).collect();
        prop_assert_eq!(store.item_keys_for_friend(ME, friend, &groups, &ClubBook::new(), &DeviceBook::new(ME), now).unwrap(), keys);
        let view = FriendView { peer_id: friend, groups: &groups };
        let mut stored = store.item_records().unwrap();
        stored.retain(|i| may_send(ME, &i.route(), &view, &ClubBook::new(), &DeviceBook::new(ME), now));
        let want: Vec<ItemId> = stored.into_iter().map(|i| i.id).collect();
        prop_assert_eq!(got, want);
    }
}

#[test]
fn items_of_a_kind_come_oldest_first_and_no_other_kind_with_them() {
    let (_dir, store) = temp_store();
    let reach = |n: u8, author: &str| {
        let mut it = item(n, author, Audience::Friends);
        it.record.kind = ItemKind::ReachableAt;
        it.record.max_hops = 1;
        it.record.hops_left = 0;
        it
    };
    store
        .insert_items(&[
            reach(7, BOB),
            item(2, BOB, Audience::Friends),
            reach(3, CAROL),
        ])
        .unwrap();
    let found: Vec<ItemId> = store
        .items_of_kind(ItemKind::ReachableAt)
        .unwrap()
        .into_iter()
        .map(|i| i.record.id)
        .collect();
    assert_eq!(found, [id(3), id(7)]);
    assert!(store.items_of_kind(ItemKind::Rating).unwrap().is_empty());
}

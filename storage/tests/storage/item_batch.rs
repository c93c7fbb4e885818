//! In-place route updates, envelope loads and batched merges: the
//! replication hot path's storage calls.

use porfiry_protocol::{Audience, ItemId, ItemKind, ItemRecord};
use porfiry_storage::{Merged, Note, StorageError, StoredItem, ThinkingMethod};

use crate::{raw, s, temp_store};

const BOB: &str = "12D3KooWBob";
const CAROL: &str = "12D3KooWCarol";

fn item(n: u8) -> StoredItem {
    StoredItem {
        record: ItemRecord {
            id: ItemId([n; 32]),
            author: BOB.into(),
            kind: ItemKind::Note,
            audience: Audience::Public,
            created_ms: 1_000 + u64::from(n),
            expires_ms: None,
            received_from: Some(BOB.into()),
            max_hops: 4,
            hops_left: 1,
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

fn note(text: &str, origin: u8) -> (Note, u64) {
    (
        Note {
            text: s(text),
            origin_author: Some(s(BOB)),
            origin_item_id: Some(ItemId([origin; 32])),
            ..Default::default()
        },
        5_000 + u64::from(origin),
    )
}

#[test]
fn a_route_update_changes_the_copy_in_place_capped_at_max_hops() {
    let (_dir, store) = temp_store();
    store.insert_items(&[item(1), item(2)]).unwrap();
    assert!(store.update_item_route(&ItemId([1; 32]), CAROL, 9).unwrap());
    let rec = store.get_item(&ItemId([1; 32])).unwrap().unwrap();
    assert_eq!(rec.record.received_from.as_deref(), Some(CAROL));
    assert_eq!(rec.record.hops_left, 4, "capped at max_hops");
    assert_eq!(rec.payload, item(1).payload, "the envelope is untouched");
    assert!(store.update_item_route(&ItemId([1; 32]), BOB, 2).unwrap());
    assert_eq!(
        store
            .get_item(&ItemId([1; 32]))
            .unwrap()
            .unwrap()
            .record
            .hops_left,
        2
    );
    assert_eq!(
        store.get_item(&ItemId([2; 32])).unwrap().unwrap(),
        item(2),
        "other items untouched"
    );
    assert!(
        !store.update_item_route(&ItemId([7; 32]), CAROL, 1).unwrap(),
        "an unknown id changes nothing"
    );
    assert_eq!(store.item_count().unwrap(), 2);
}

#[test]
fn a_route_update_with_a_bad_peer_id_is_refused_and_changes_nothing() {
    let (_dir, store) = temp_store();
    store.insert_items(&[item(1)]).unwrap();
    for bad in ["", "has space"] {
        let err = store
            .update_item_route(&ItemId([1; 32]), bad, 3)
            .unwrap_err();
        assert!(matches!(err, StorageError::Invalid { .. }), "{err}");
    }
    assert_eq!(store.get_item(&ItemId([1; 32])).unwrap().unwrap(), item(1));
}

#[test]
fn a_page_comes_in_the_order_asked_with_none_for_missing_items() {
    let (_dir, store) = temp_store();
    store.insert_items(&[item(1), item(2)]).unwrap();
    let got = store
        .item_page(&[ItemId([2; 32]), ItemId([9; 32]), ItemId([1; 32])])
        .unwrap();
    assert_eq!(got, [Some(item(2).payload), None, Some(item(1).payload)]);
    assert!(store.item_page(&[]).unwrap().is_empty());
}

#[test]
fn a_page_holds_at_most_max_page_ids() {
    let (_dir, store) = temp_store();
    store.insert_items(&[item(1)]).unwrap();
    let full = vec![ItemId([1; 32]); porfiry_storage::MAX_PAGE_IDS];
    let got = store.item_page(&full).unwrap();
    assert_eq!(got.len(), porfiry_storage::MAX_PAGE_IDS);
    assert!(got.iter().all(|p| p.as_ref() == Some(&item(1).payload)));
    let over = vec![ItemId([1; 32]); porfiry_storage::MAX_PAGE_IDS + 1];
    let err = store.item_page(&over).unwrap_err();
    assert!(matches!(err, StorageError::Invalid { .. }), "{err}");
}

#[test]
fn own_item_ids_since_are_ours_unrouted_and_recent_oldest_first() {
    let (_dir, store) = temp_store();
    let own = |n: u8| {
        let mut r = item(n);
        r.record.received_from = None;
        r
    };
    let carols = {
        let mut r = item(5);
        r.record.author = CAROL.into();
        r.record.received_from = None;
        r
    };
    // 3 and 4 are ours; 1 is too old, 2 came from a friend, 5 is Carol's.
    store
        .insert_items(&[own(4), own(1), item(2), own(3), carols])
        .unwrap();
    let got = store.own_item_ids_since(BOB, 1_002).unwrap();
    assert_eq!(got, [ItemId([3; 32]), ItemId([4; 32])]);
    assert!(store.own_item_ids_since(BOB, 9_999).unwrap().is_empty());
    assert!(matches!(
        store.own_item_ids_since(BOB, u64::MAX),
        Err(StorageError::Invalid { .. })
    ));
}

#[test]
fn a_batch_merge_adds_each_row_once_and_refuses_bad_rows_alone() {
    let (_dir, store) = temp_store();
    let before = store.merge_from_item(&note("old", 1).0, 1).unwrap();
    let no_origin = (
        Note {
            text: s("orphan"),
            ..Default::default()
        },
        7,
    );
    let rows = [
        note("new", 2),
        note("old", 1),
        note("   ", 3),
        no_origin,
        note("new", 2),
        note("third", 4),
    ];
    let out = store.merge_from_items(&rows).unwrap();
    assert_eq!(out.len(), rows.len());
    let added = match out[0] {
        Ok(Merged::Added(id)) => id,
        ref other => panic!("expected a new row, got {other:?}"),
    };
    assert_eq!(*out[1].as_ref().unwrap(), Merged::Existing(before.id()));
    assert!(out[2].as_ref().unwrap_err().is_row_refusal(), "blank text");
    assert!(
        matches!(out[3], Err(StorageError::Invalid { .. })),
        "no origin"
    );
    assert_eq!(*out[4].as_ref().unwrap(), Merged::Existing(added));
    assert!(matches!(out[5], Ok(Merged::Added(_))));
    assert_eq!(store.count::<Note>().unwrap(), 3, "old, new, third");
    let n = store.get::<Note>(added).unwrap();
    assert_eq!(n.created_ms, 5_002, "the author's time");
    assert_eq!(n.row.origin_author.as_deref(), Some(BOB), "origin kept");
    assert_eq!(n.row.origin_item_id, Some(ItemId([2; 32])));
    assert!(store.merge_from_items::<Note>(&[]).unwrap().is_empty());
}

#[test]
fn a_batch_merge_that_the_file_fails_stores_nothing_and_says_so() {
    let (_dir, store) = temp_store();
    let method = |n: u8| {
        (
            ThinkingMethod {
                name: format!("m{n}"),
                origin_author: Some(s(BOB)),
                origin_item_id: Some(ItemId([n; 32])),
                ..Default::default()
            },
            1_000,
        )
    };
    // A failure that is no row's fault (here a trigger another program
    // added) on the second row: the first is rolled back with it.
    raw(&store)
        .execute_batch(
            "CREATE TRIGGER broken BEFORE INSERT ON thinking_methods WHEN NEW.name = 'm2'
             BEGIN SELECT RAISE(FAIL, 'disk trouble'); END",
        )
        .unwrap();
    let err = store.merge_from_items(&[method(1), method(2)]).unwrap_err();
    assert!(!err.is_row_refusal(), "{err}");
    assert_eq!(
        store.count::<ThinkingMethod>().unwrap(),
        0,
        "all or nothing"
    );
    raw(&store).execute_batch("DROP TRIGGER broken").unwrap();
    let out = store.merge_from_items(&[method(1), method(2)]).unwrap();
    assert!(out.iter().all(|m| matches!(m, Ok(Merged::Added(_)))));
}

//! Clubs on disk: club change items fill `club_changes` in the same
//! transaction, the club book is rebuilt from them after a reopen, founded
//! clubs are known before any change, club items keep their routing facts,
//! the friend query follows the club rules, and a club change whose
//! envelope does not hold one refuses its batch.

use porfiry_protocol::club::{CLUB_MAX_HOPS, ClubAction, ClubChange, ClubRef};
use porfiry_protocol::devices::DeviceBook;
use porfiry_protocol::{
    Audience, Body, ClubBook, ItemRecord, NodeKey, Note, PayloadDraft, VerifiedItem, sign,
};
use porfiry_storage::{DB_FILE_NAME, StorageError, Store, StoredItem};

use crate::temp_store;

fn key(n: u8) -> NodeKey {
    NodeKey::from_seed([n; 32])
}

fn peer(n: u8) -> String {
    key(n).peer_id().to_string()
}

fn club() -> ClubRef {
    ClubRef::new("chess", &peer(1)).unwrap()
}

fn row(item: &VerifiedItem, from: Option<u8>) -> StoredItem {
    StoredItem {
        record: ItemRecord::of(item, item.max_hops() - 1, from.map(peer)),
        payload: item.envelope_bytes().to_vec(),
        signature: item.signature_bytes().to_vec(),
    }
}

fn change(author: u8, created_ms: u64, action: ClubAction, target: u8) -> VerifiedItem {
    sign(
        &key(author),
        &PayloadDraft {
            created_ms,
            audience: Audience::Club(club()),
            max_hops: CLUB_MAX_HOPS,
            expires_ms: None,
            replaces: None,
            body: Body::ClubChange(ClubChange {
                club: club(),
                action,
                target: peer(target),
            }),
        },
    )
    .unwrap()
}

fn club_note(author: u8, created_ms: u64) -> VerifiedItem {
    sign(
        &key(author),
        &PayloadDraft {
            created_ms,
            audience: Audience::Club(club()),
            max_hops: CLUB_MAX_HOPS,
            expires_ms: None,
            replaces: None,
            body: Body::Note(Note::by_user("club news")),
        },
    )
    .unwrap()
}

#[test]
fn club_changes_rebuild_the_book_after_a_reopen() {
    let (dir, store) = temp_store();
    let add2 = change(1, 100, ClubAction::Add, 2);
    let add3 = change(1, 110, ClubAction::Add, 3);
    let rm3 = change(1, 120, ClubAction::Remove, 3);
    assert_eq!(
        store
            .insert_items(&[row(&add2, Some(1)), row(&add3, Some(1)), row(&rm3, Some(1))])
            .unwrap(),
        3
    );
    // Idempotent: the same items again add no row.
    assert_eq!(store.insert_items(&[row(&add2, Some(1))]).unwrap(), 0);
    drop(store);
    let store = Store::open(dir.path().join(DB_FILE_NAME)).unwrap();
    let changes = store.club_changes(Some(&club())).unwrap();
    assert_eq!(changes.len(), 3);
    assert_eq!(changes[0].item_id, add2.id());
    assert_eq!(changes[2].change.action, ClubAction::Remove);
    let book = store.club_book().unwrap();
    assert!(book.is_member_now(&club(), &peer(2)));
    assert!(!book.is_member_now(&club(), &peer(3)));
    assert!(book.is_member(&club(), &peer(3), 115));
    assert_eq!(store.known_clubs().unwrap(), vec![club()]);
    // The routing facts came back with the records.
    let records = store.item_records().unwrap();
    let rm = records.iter().find(|r| r.id == rm3.id()).unwrap();
    assert_eq!(rm.club_target.as_deref(), Some(peer(3).as_str()));
    assert!(rm.club_removal);
}

#[test]
fn a_founded_club_is_known_before_any_change() {
    let (_dir, store) = temp_store();
    assert!(store.create_club(&club(), 5).unwrap());
    assert!(!store.create_club(&club(), 6).unwrap(), "once");
    assert_eq!(store.known_clubs().unwrap(), vec![club()]);
    let book = store.club_book().unwrap();
    assert!(book.knows(&club()));
    assert_eq!(book.members(&club()).len(), 1, "the founder alone");
}

#[test]
fn the_friend_query_follows_the_club_rules() {
    let (_dir, store) = temp_store();
    let add2 = change(1, 100, ClubAction::Add, 2);
    let add3 = change(1, 100, ClubAction::Add, 3);
    let note = club_note(1, 200);
    store
        .insert_items(&[
            row(&add2, Some(1)),
            row(&add3, Some(1)),
            row(&note, Some(1)),
        ])
        .unwrap();
    let book = store.club_book().unwrap();
    // Node 2 relays to member 3, never to non-member 4 (even with the book).
    let me = peer(2);
    let to3 = store
        .items_for_friend(&me, &peer(3), &[], &book, &DeviceBook::new(&me), 300)
        .unwrap();
    let ids: Vec<_> = to3.iter().map(|i| i.record.id).collect();
    assert!(
        ids.contains(&note.id()) && ids.contains(&add2.id()),
        "{ids:?}"
    );
    assert!(
        store
            .items_for_friend(&me, &peer(4), &[], &book, &DeviceBook::new(&me), 300)
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store
            .item_keys_for_friend(&me, &peer(3), &[], &book, &DeviceBook::new(&me), 300)
            .unwrap()
            .len(),
        to3.len()
    );
    // Without the book nobody is a member: nothing of the club leaves.
    assert!(
        store
            .items_for_friend(
                &me,
                &peer(3),
                &[],
                &ClubBook::new(),
                &DeviceBook::new(&me),
                300
            )
            .unwrap()
            .is_empty()
    );
}

#[test]
fn a_club_change_row_without_a_club_change_inside_refuses_its_batch() {
    let (_dir, store) = temp_store();
    let note = club_note(1, 200);
    let mut bad = row(&note, Some(1));
    bad.record.kind = porfiry_protocol::ItemKind::ClubChange;
    bad.record.club_target = Some(peer(2));
    let good = row(&change(1, 100, ClubAction::Add, 2), Some(1));
    let err = store.insert_items(&[good, bad]).unwrap_err();
    assert!(matches!(err, StorageError::Invalid { .. }), "{err:?}");
    assert_eq!(
        store.item_count().unwrap(),
        0,
        "nothing of the batch stored"
    );
    assert!(store.club_changes(None).unwrap().is_empty());
}

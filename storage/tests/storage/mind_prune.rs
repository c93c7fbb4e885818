//! The memory forgets what it no longer needs (issue 45, HMP's soft
//! delete): a deletion and the versions it beat are kept for the time to
//! live, then their versions and items are gone; a live record loses its
//! superseded versions and keeps its winner; a conflict waiting for its
//! task keeps its pair; a change waiting here keeps its record; a device
//! that was away longer offers the old versions again and they are
//! refused, so a deleted record stays deleted; and more records than one
//! batch are all gone through over repeated calls.

use std::collections::BTreeSet;

use porfiry_protocol::mind::TOMBSTONE_TTL_MS;
use porfiry_protocol::{ItemId, ItemKind, ItemRecord, NodeKey, VerifiedItem};
use porfiry_storage::mind::{MIND_PRUNE_BATCH, MindPruned};
use porfiry_storage::{Inserted, Store, StoredItem};

use super::mind::{deliver_from, publish_as};
use crate::{raw, temp_store};

fn exec(s: &Store, sql: &str) {
    raw(s).execute_batch(sql).unwrap();
}

fn count(s: &Store, sql: &str) -> i64 {
    raw(s).query_row(sql, [], |r| r.get(0)).unwrap()
}

fn versions(s: &Store) -> i64 {
    count(s, "SELECT COUNT(*) FROM mind_versions")
}

fn mind_items(s: &Store) -> i64 {
    count(s, "SELECT COUNT(*) FROM items WHERE kind = 'mind_record'")
}

fn diary(s: &Store) -> Vec<String> {
    let c = raw(s);
    let mut stmt = c
        .prepare("SELECT text FROM diary_entries ORDER BY text")
        .unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// A whole pass at `now_ms`: every call until the last record, summed.
fn prune_all(s: &Store, now_ms: u64) -> MindPruned {
    let mut total = MindPruned::default();
    let mut after = None;
    loop {
        let done = s.prune_mind(now_ms, after.as_ref()).unwrap();
        total.add(&done);
        match done.next {
            Some(next) => after = Some(next),
            None => return total,
        }
    }
}

#[test]
fn a_deletion_is_kept_for_the_time_to_live_then_forgotten_with_what_it_beat() {
    let (_a, phone) = temp_store();
    let (_b, server) = temp_store();
    exec(
        &phone,
        "INSERT INTO diary_entries (text, created, updated) VALUES ('a', 1, 1)",
    );
    publish_as(&phone, 1, 12);
    exec(&phone, "UPDATE diary_entries SET text = 'b'");
    publish_as(&phone, 1, 12);
    exec(&phone, "DELETE FROM diary_entries");
    publish_as(&phone, 1, 12);
    deliver_from(&phone, &server, 1);
    assert!(diary(&server).is_empty());
    assert_eq!((versions(&server), mind_items(&server)), (3, 3));

    // A moment before the time to live: everything is kept.
    let kept = prune_all(&server, 12 + TOMBSTONE_TTL_MS - 1);
    assert_eq!((kept.versions, kept.items, kept.deletions), (0, 0, 0));
    assert_eq!((versions(&server), mind_items(&server)), (3, 3));

    // At it: the tombstone and the two versions it beat are gone, items
    // and all; the record is still known, deleted, with no winner.
    let gone = prune_all(&server, 12 + TOMBSTONE_TTL_MS);
    assert_eq!((gone.versions, gone.items, gone.deletions), (3, 3, 1));
    assert_eq!((versions(&server), mind_items(&server)), (0, 0));
    assert_eq!(
        count(
            &server,
            "SELECT COUNT(*) FROM mind_records WHERE local_id IS NULL AND winner IS NULL"
        ),
        1
    );
    assert_eq!(
        count(&server, "SELECT deleted_at FROM mind_pruned"),
        12,
        "the forgotten deletion's clock"
    );
    // Nothing more to forget.
    assert_eq!(
        prune_all(&server, 13 + TOMBSTONE_TTL_MS),
        MindPruned::default()
    );

    // The phone was away all along and offers the three versions again:
    // refused, the record stays deleted.
    deliver_from(&phone, &server, 1);
    assert_eq!((versions(&server), mind_items(&server)), (0, 0));
    assert!(diary(&server).is_empty());
    assert_eq!(server.mind_outbox_len().unwrap(), 0);
}

#[test]
fn an_edit_written_apart_from_a_forgotten_deletion_comes_back_only_if_it_would_have_won() {
    let (_a, phone) = temp_store();
    let (_b, server) = temp_store();
    let (_c, laptop) = temp_store();
    exec(
        &phone,
        "INSERT INTO diary_entries (text, created, updated) VALUES ('a', 1, 1)",
    );
    publish_as(&phone, 1, 10);
    deliver_from(&phone, &laptop, 1);
    exec(&phone, "DELETE FROM diary_entries");
    publish_as(&phone, 1, 12);
    deliver_from(&phone, &server, 1);
    prune_all(&server, 12 + TOMBSTONE_TTL_MS);
    assert_eq!(versions(&server), 0);

    // The laptop, apart, edited the entry before the deletion by the
    // clocks (it would have lost to it), then after (it would have won).
    exec(&laptop, "UPDATE diary_entries SET text = 'before'");
    let before = publish_as(&laptop, 3, 11);
    exec(&laptop, "UPDATE diary_entries SET text = 'after'");
    let after = publish_as(&laptop, 3, 13);
    assert_eq!((before.len(), after.len()), (1, 1));
    let from_laptop = |items: &[VerifiedItem]| {
        server
            .insert_items_reporting(&[received(&items[0], 3)])
            .unwrap()
    };
    // The refused one is named, so the replication engine can forget it.
    assert_eq!(
        from_laptop(&before),
        Inserted {
            new: 0,
            refused_pruned: vec![before[0].id()]
        }
    );
    assert_eq!(versions(&server), 0, "the deletion would have won");
    assert!(diary(&server).is_empty());
    assert_eq!(
        from_laptop(&after),
        Inserted {
            new: 1,
            refused_pruned: vec![]
        }
    );
    assert_eq!(versions(&server), 1, "the later edit would have won");
    assert_eq!(diary(&server), vec!["after"]);
}

/// `item` as received from device `from`.
fn received(item: &VerifiedItem, from: u8) -> StoredItem {
    let from = NodeKey::from_seed([from; 32]).peer_id().to_string();
    StoredItem {
        record: ItemRecord::of(item, item.max_hops() - 1, Some(from)),
        payload: item.envelope_bytes().to_vec(),
        signature: item.signature_bytes().to_vec(),
    }
}

#[test]
fn a_live_record_forgets_its_superseded_versions_and_keeps_its_winner() {
    let (_a, phone) = temp_store();
    let (_b, server) = temp_store();
    exec(
        &phone,
        "INSERT INTO diary_entries (text, created, updated) VALUES ('a', 1, 1)",
    );
    publish_as(&phone, 1, 10);
    exec(&phone, "UPDATE diary_entries SET text = 'b'");
    publish_as(&phone, 1, 20);
    exec(&phone, "UPDATE diary_entries SET text = 'c'");
    publish_as(&phone, 1, 30);
    deliver_from(&phone, &server, 1);
    assert_eq!((versions(&server), mind_items(&server)), (3, 3));

    // 'a' is superseded by 'b', written a time to live ago: gone.
    let first = prune_all(&server, 20 + TOMBSTONE_TTL_MS);
    assert_eq!((first.versions, first.items, first.deletions), (1, 1, 0));
    assert_eq!((versions(&server), mind_items(&server)), (2, 2));
    // Then 'b'; the winner 'c' stays, however old.
    let second = prune_all(&server, 30 + TOMBSTONE_TTL_MS * 5);
    assert_eq!((second.versions, second.items), (1, 1));
    assert_eq!((versions(&server), mind_items(&server)), (1, 1));
    assert_eq!(diary(&server), vec!["c"]);

    // The phone offers all three again: the two forgotten are refused.
    deliver_from(&phone, &server, 1);
    assert_eq!((versions(&server), mind_items(&server)), (1, 1));
    assert_eq!(diary(&server), vec!["c"]);
    // A new edit on top still travels and wins.
    exec(&phone, "UPDATE diary_entries SET text = 'd'");
    publish_as(&phone, 1, 40 + TOMBSTONE_TTL_MS * 5);
    deliver_from(&phone, &server, 1);
    assert_eq!(diary(&server), vec!["d"]);
    assert_eq!(versions(&server), 2);
}

#[test]
fn a_conflict_waiting_for_its_task_keeps_its_versions_and_the_pair_outlives_pruning() {
    let (_a, phone) = temp_store();
    let (_b, server) = temp_store();
    exec(
        &phone,
        "INSERT INTO diary_entries (text, created, updated) VALUES ('milk', 1, 1)",
    );
    publish_as(&phone, 1, 10);
    deliver_from(&phone, &server, 1);
    exec(&phone, "UPDATE diary_entries SET text = 'milk and eggs'");
    exec(&server, "UPDATE diary_entries SET text = 'milk and bread'");
    publish_as(&phone, 1, 20);
    publish_as(&server, 2, 21);
    deliver_from(&phone, &server, 1);
    assert_eq!(versions(&server), 3);
    let far = 21 + TOMBSTONE_TTL_MS * 2;

    // The conflict waits for its task: nothing of the record goes.
    let waiting = prune_all(&server, far);
    assert_eq!(waiting.versions, 0);
    assert_eq!(versions(&server), 3);
    let open = server.open_mind_conflicts(10).unwrap();
    assert_eq!(open.len(), 1, "the pair is whole");

    // Its task made, 'milk' (superseded by both) goes; the two heads,
    // written apart, are never pruned, and the conflict still names them.
    server
        .make_conflict_task(&open[0].key, "resolve_conflict", "both", "me", far)
        .unwrap();
    let done = prune_all(&server, far);
    assert_eq!((done.versions, done.items), (1, 1));
    assert_eq!((versions(&server), mind_items(&server)), (2, 2));
    assert_eq!(count(&server, "SELECT COUNT(*) FROM mind_conflicts"), 1);
    assert_eq!(diary(&server), vec!["milk and bread"]);
}

#[test]
fn a_change_waiting_here_keeps_its_record_until_it_is_published() {
    let (_a, phone) = temp_store();
    exec(
        &phone,
        "INSERT INTO diary_entries (text, created, updated) VALUES ('a', 1, 1)",
    );
    publish_as(&phone, 1, 10);
    exec(&phone, "UPDATE diary_entries SET text = 'b'");
    publish_as(&phone, 1, 11);
    exec(&phone, "UPDATE diary_entries SET text = 'c'");
    let far = 11 + TOMBSTONE_TTL_MS;
    assert_eq!(prune_all(&phone, far).versions, 0);
    assert_eq!(versions(&phone), 2);
    publish_as(&phone, 1, far);
    assert_eq!(prune_all(&phone, far).versions, 1, "'a' goes");
    assert_eq!(versions(&phone), 2);
}

#[test]
fn more_records_than_one_batch_are_all_pruned_over_repeated_calls() {
    let (_a, phone) = temp_store();
    let n = MIND_PRUNE_BATCH + 6;
    let values: Vec<String> = (0..n).map(|i| format!("('e{i}', 1, 1)")).collect();
    exec(
        &phone,
        &format!(
            "INSERT INTO diary_entries (text, created, updated) VALUES {}",
            values.join(", ")
        ),
    );
    publish_as(&phone, 1, 10);
    exec(&phone, "DELETE FROM diary_entries");
    publish_as(&phone, 1, 11);
    assert_eq!(versions(&phone), 2 * n as i64);

    let now = 11 + TOMBSTONE_TTL_MS;
    let held: BTreeSet<ItemId> = phone
        .items_of_kind(ItemKind::MindRecord)
        .unwrap()
        .iter()
        .map(|it| it.record.id)
        .collect();
    let first = phone.prune_mind(now, None).unwrap();
    assert_eq!(
        first.records, MIND_PRUNE_BATCH,
        "one batch looks at no more"
    );
    assert_eq!(first.versions, 2 * MIND_PRUNE_BATCH);
    assert!(first.next.is_some());
    let second = phone.prune_mind(now, first.next.as_ref()).unwrap();
    assert_eq!((second.records, second.deletions), (6, 6));
    assert_eq!(second.next, None, "the pass is over");
    // Each call names the items it deleted, for the engine to forget;
    // together, every one that was held.
    assert_eq!(first.item_ids.len(), first.items);
    assert_eq!(second.item_ids.len(), second.items);
    let named: BTreeSet<ItemId> = first
        .item_ids
        .iter()
        .chain(&second.item_ids)
        .copied()
        .collect();
    assert_eq!(named, held);
    let mut pass = MindPruned::default();
    pass.add(&second);
    assert!(pass.item_ids.is_empty(), "a pass's sum keeps no ids");
    assert_eq!((versions(&phone), mind_items(&phone)), (0, 0));
    assert_eq!(count(&phone, "SELECT COUNT(*) FROM mind_pruned"), n as i64);
}

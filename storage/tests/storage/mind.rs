//! A person's memory on disk: the triggers queue every change of the six
//! memory tables (FK cascades included) and skip what a device sent; a
//! version signed on one store and inserted into another writes the same
//! rows there (references mapped to local ids, in any arrival order);
//! edits made apart converge and queue the same conflict on both; a
//! tombstone deletes; bad fields are refused without losing the batch;
//! device statements rebuild the device book.

use std::collections::BTreeMap;

use porfiry_protocol::devices::{DEVICES_MAX_HOPS, DeviceStatement, DeviceUnlink, LinkProposal};
use porfiry_protocol::mind::{MindRecord, MindTable, MindValue};
use porfiry_protocol::{Audience, Body, ItemRecord, NodeKey, PayloadDraft, VerifiedItem, sign};
use porfiry_storage::mind::OutboxEntry;
use porfiry_storage::{Store, StoredItem};
use rusqlite::params;

use crate::{raw, temp_store};

fn key(n: u8) -> NodeKey {
    NodeKey::from_seed([n; 32])
}

pub fn peer(n: u8) -> String {
    key(n).peer_id().to_string()
}

pub fn row(item: &VerifiedItem, from: Option<u8>) -> StoredItem {
    StoredItem {
        record: ItemRecord::of(item, item.max_hops() - 1, from.map(peer)),
        payload: item.envelope_bytes().to_vec(),
        signature: item.signature_bytes().to_vec(),
    }
}

pub fn item(author: u8, at: u64, body: Body) -> VerifiedItem {
    sign(
        &key(author),
        &PayloadDraft {
            created_ms: at,
            audience: Audience::Devices,
            max_hops: DEVICES_MAX_HOPS,
            expires_ms: None,
            replaces: None,
            body,
        },
    )
    .unwrap()
}

/// Publishes store `s`'s outbox as device `me` at `at` (what the node's
/// publisher does), returning the signed versions.
pub fn publish_as(s: &Store, me: u8, at: u64) -> Vec<VerifiedItem> {
    publish(s, me, at)
}

/// Delivers every memory version and device statement `from` holds to
/// `to`, as received from device `sender`.
pub fn deliver_from(from: &Store, to: &Store, sender: u8) {
    let mut rows: Vec<StoredItem> = from
        .items_of_kind(porfiry_protocol::ItemKind::MindRecord)
        .unwrap()
        .into_iter()
        .map(|mut it| {
            it.record.received_from = Some(peer(sender));
            it.record.hops_left = it.record.hops_left.saturating_sub(1);
            it
        })
        .collect();
    // Batches as a catch-up would send them.
    for chunk in rows.chunks_mut(64) {
        to.insert_items(chunk).unwrap();
    }
}

fn publish(s: &Store, me: u8, at: u64) -> Vec<VerifiedItem> {
    let mut out = Vec::new();
    for entry in s.mind_outbox(1_000).unwrap() {
        let Some(change) = s.take_mind_change(entry, &peer(me)).unwrap() else {
            continue;
        };
        let record = MindRecord {
            table: change.table,
            key: change.key,
            vv: s.next_mind_vv(&change.key, &peer(me), change.seen).unwrap(),
            at_ms: at,
            deleted: change.fields.is_none(),
            fields: change.fields.unwrap_or_default(),
        };
        let it = item(me, at, Body::MindRecord(record));
        s.insert_items(&[row(&it, None)]).unwrap();
        out.push(it);
    }
    out
}

pub fn deliver(to: &Store, items: &[VerifiedItem], from: u8) {
    let rows: Vec<StoredItem> = items.iter().map(|i| row(i, Some(from))).collect();
    to.insert_items(&rows).unwrap();
}

/// Delivers `items` newest first (so a record that refers to another
/// waits for it) and checks that applying them queued nothing to send back.
pub fn deliver_newest_first(to: &Store, items: &[VerifiedItem], from: u8) {
    let before = to.mind_outbox_len().unwrap();
    let mut reversed = items.to_vec();
    reversed.reverse();
    deliver(to, &reversed, from);
    assert_eq!(
        to.mind_outbox_len().unwrap(),
        before,
        "nothing queued to send back"
    );
}

fn outbox(s: &Store) -> Vec<OutboxEntry> {
    s.mind_outbox(1_000).unwrap()
}

pub fn texts(s: &Store, sql: &str) -> Vec<String> {
    let c = raw(s);
    let mut stmt = c.prepare(sql).unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

pub fn exec(s: &Store, sql: &str) {
    raw(s).execute_batch(sql).unwrap();
}

#[test]
fn every_write_to_the_memory_tables_is_queued_once_per_row() {
    let (_d, s) = temp_store();
    exec(
        &s,
        "INSERT INTO diary_entries (text, created, updated) VALUES ('a', 1, 1);
         UPDATE diary_entries SET text = 'b';
         INSERT INTO concepts (name, created, updated) VALUES ('cat', 1, 1), ('animal', 1, 1);
         INSERT INTO links (from_concept, to_concept, relation, created, updated) VALUES (1, 2, 'is_a', 1, 1);
         INSERT INTO goals (title, created, updated) VALUES ('g', 1, 1);
         INSERT INTO tasks (goal_id, title, created, updated) VALUES (1, 't', 1, 1);
         INSERT INTO llm_memory (content, created, updated) VALUES ('m', 1, 1);",
    );
    let q = outbox(&s);
    assert_eq!(q.len(), 7, "{q:?}");
    assert_eq!(
        q[0].table,
        MindTable::Concept,
        "referred tables first: {q:?}"
    );
    assert!(q.iter().all(|e| e.deleted.is_none()));
    // A row deleted before it was ever published leaves nothing to send.
    exec(
        &s,
        "INSERT INTO diary_entries (text, created, updated) VALUES ('gone', 1, 1)",
    );
    exec(&s, "DELETE FROM diary_entries WHERE text = 'gone'");
    assert_eq!(outbox(&s).len(), 7);
    publish(&s, 1, 10);
    assert!(outbox(&s).is_empty());
    // Deleting a published concept deletes its link by cascade: both are
    // queued as deletions of their records; deleting a goal empties its
    // task's goal: an edit.
    let cat = s.mind_key_of(MindTable::Concept, 1).unwrap().unwrap();
    exec(
        &s,
        "DELETE FROM concepts WHERE name = 'cat'; DELETE FROM goals;",
    );
    let q = outbox(&s);
    let deleted: Vec<MindTable> = q
        .iter()
        .filter(|e| e.deleted.is_some())
        .map(|e| e.table)
        .collect();
    assert_eq!(
        deleted,
        vec![MindTable::Concept, MindTable::Goal, MindTable::Link]
    );
    assert_eq!(q[0].deleted, Some(cat), "the deletion names the record");
    assert!(
        q.iter()
            .any(|e| e.table == MindTable::Task && e.deleted.is_none())
    );
    assert_eq!(s.mind_outbox_len().unwrap(), 4);
    // A new row that takes a deleted row's id is a new record.
    exec(
        &s,
        "INSERT INTO concepts (id, name, created, updated) VALUES (1, 'dog', 1, 1)",
    );
    let sent = publish(&s, 1, 20);
    let keys: Vec<[u8; 16]> = sent
        .iter()
        .filter_map(|i| match i.body() {
            Body::MindRecord(r) if r.table == MindTable::Concept => Some(r.key),
            _ => None,
        })
        .collect();
    assert_eq!(keys.len(), 2, "the tombstone and the new record");
    assert_ne!(keys[0], keys[1]);
}

#[test]
fn versions_from_a_device_write_the_same_memory_here_and_are_not_sent_back() {
    let (_a, phone) = temp_store();
    let (_b, server) = temp_store();
    exec(
        &phone,
        "INSERT INTO concepts (name, description, created, updated) VALUES ('cat', 'a pet', 5, 5), ('animal', '', 5, 5);
         INSERT INTO links (from_concept, to_concept, relation, weight, created, updated) VALUES (1, 2, 'is_a', 0.25, 5, 5);
         INSERT INTO goals (title, priority, created, updated) VALUES ('learn piano', 2, 5, 5);
         INSERT INTO tasks (goal_id, title, pinned, created, updated) VALUES (1, 'buy sheet music', 1, 5, 5);
         INSERT INTO diary_entries (text, tags, created, updated) VALUES ('went to the sea', '[\"trip\"]', 5, 5);
         INSERT INTO llm_memory (title, content, created, updated) VALUES (NULL, 'the user likes tea', 5, 5);",
    );
    // The server has rows of its own first: local ids differ.
    exec(
        &server,
        "INSERT INTO concepts (name, created, updated) VALUES ('sea', 1, 1), ('x', 1, 1);
         INSERT INTO goals (title, created, updated) VALUES ('sleep', 1, 1);",
    );
    let versions = publish(&phone, 1, 100);
    assert_eq!(versions.len(), 7);
    assert!(outbox(&phone).is_empty());
    // Delivered newest first: the task and link wait for their goal and
    // concepts, then are written when those arrive.
    deliver_newest_first(&server, &versions, 1);
    assert_eq!(
        texts(&server, "SELECT c1.name || ' ' || l.relation || ' ' || c2.name || ' ' || l.weight
                        FROM links l JOIN concepts c1 ON c1.id = l.from_concept JOIN concepts c2 ON c2.id = l.to_concept"),
        vec!["cat is_a animal 0.25"]
    );
    assert_eq!(
        texts(
            &server,
            "SELECT t.title || ' for ' || g.title || ' pinned=' || t.pinned FROM tasks t JOIN goals g ON g.id = t.goal_id"
        ),
        vec!["buy sheet music for learn piano pinned=1"]
    );
    assert_eq!(
        texts(&server, "SELECT text || ' ' || tags FROM diary_entries"),
        vec!["went to the sea [\"trip\"]"]
    );
    assert_eq!(
        texts(
            &server,
            "SELECT content FROM llm_memory WHERE title IS NULL"
        ),
        vec!["the user likes tea"]
    );
    assert_eq!(
        texts(
            &server,
            "SELECT description FROM concepts WHERE name = 'cat'"
        ),
        vec!["a pet"]
    );
    // An edit on the server travels back and updates the phone's row.
    exec(
        &server,
        "UPDATE diary_entries SET text = 'went to the sea, swam'",
    );
    let edit = publish(&server, 2, 200);
    assert_eq!(edit.len(), 4, "the server's own three rows, then the edit");
    deliver(&phone, &edit, 2);
    assert_eq!(
        texts(&phone, "SELECT text FROM diary_entries"),
        vec!["went to the sea, swam"]
    );
    assert!(outbox(&phone).is_empty());
    // A deletion on the phone deletes the server's row.
    exec(&phone, "DELETE FROM diary_entries");
    let gone = publish(&phone, 1, 300);
    assert_eq!(gone.len(), 1);
    deliver(&server, &gone, 1);
    assert!(texts(&server, "SELECT text FROM diary_entries").is_empty());
    assert!(outbox(&server).is_empty());
}

#[test]
fn edits_made_apart_converge_and_queue_one_conflict_on_both() {
    let (_a, phone) = temp_store();
    let (_b, server) = temp_store();
    exec(
        &phone,
        "INSERT INTO diary_entries (text, created, updated) VALUES ('milk', 1, 1)",
    );
    let first = publish(&phone, 1, 10);
    deliver(&server, &first, 1);
    // Apart: both edit the same entry.
    exec(&phone, "UPDATE diary_entries SET text = 'milk and eggs'");
    exec(&server, "UPDATE diary_entries SET text = 'milk and bread'");
    let p = publish(&phone, 1, 20);
    let q = publish(&server, 2, 21);
    deliver(&server, &p, 1);
    deliver(&phone, &q, 2);
    let shown_p = texts(&phone, "SELECT text FROM diary_entries");
    let shown_s = texts(&server, "SELECT text FROM diary_entries");
    assert_eq!(shown_p, shown_s, "both show the same winner");
    assert_eq!(shown_p, vec!["milk and bread"], "the later clock wins");
    let cp = phone.open_mind_conflicts(10).unwrap();
    let cs = server.open_mind_conflicts(10).unwrap();
    assert_eq!(cp.len(), 1);
    assert_eq!(cp, cs, "the same conflict, the same key, on both");
    let said: Vec<String> = cp[0]
        .versions
        .iter()
        .map(|v| match v.fields.get("text") {
            Some(MindValue::Text(t)) => t.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert!(
        said.contains(&"milk and eggs".to_owned()) && said.contains(&"milk and bread".to_owned())
    );
    // The task is made unpublished on each, as one record.
    let t1 = phone
        .make_conflict_task(&cp[0].key, "resolve_conflict", "both", &peer(1), 30)
        .unwrap();
    assert!(
        outbox(&phone).is_empty(),
        "a conflict task is not published"
    );
    assert_eq!(
        phone.mind_key_of(MindTable::Task, t1).unwrap(),
        Some(cp[0].key)
    );
    assert!(phone.open_mind_conflicts(10).unwrap().is_empty());
    // A later edit of the record on either side supersedes both versions:
    // no new conflict.
    exec(
        &phone,
        "UPDATE diary_entries SET text = 'milk, eggs and bread'",
    );
    let r = publish(&phone, 1, 40);
    deliver(&server, &r, 1);
    assert_eq!(
        texts(&server, "SELECT text FROM diary_entries"),
        vec!["milk, eggs and bread"]
    );
    assert_eq!(
        server.open_mind_conflicts(10).unwrap().len(),
        1,
        "only the first"
    );
}

#[test]
fn a_record_with_fields_this_node_cannot_take_is_kept_without_losing_the_batch() {
    let (_d, s) = temp_store();
    let mut fields = BTreeMap::new();
    fields.insert("text".to_owned(), MindValue::Text("x".into()));
    fields.insert("id".to_owned(), MindValue::Int(1));
    let mut vv = porfiry_protocol::mind::VersionVector::new();
    vv.bump(&peer(1)).unwrap();
    let bad = item(
        1,
        5,
        Body::MindRecord(MindRecord {
            table: MindTable::Diary,
            key: [9; 16],
            vv: vv.clone(),
            at_ms: 5,
            deleted: false,
            fields,
        }),
    );
    let mut good_fields = BTreeMap::new();
    good_fields.insert("content".to_owned(), MindValue::Text("ok".into()));
    good_fields.insert("tags".to_owned(), MindValue::Text("[]".into()));
    good_fields.insert("created".to_owned(), MindValue::Int(5));
    let good = item(
        1,
        5,
        Body::MindRecord(MindRecord {
            table: MindTable::LlmMemory,
            key: [8; 16],
            vv,
            at_ms: 5,
            deleted: false,
            fields: good_fields,
        }),
    );
    assert_eq!(
        s.insert_items(&[row(&bad, Some(1)), row(&good, Some(1))])
            .unwrap(),
        2
    );
    assert!(texts(&s, "SELECT text FROM diary_entries").is_empty());
    assert_eq!(texts(&s, "SELECT content FROM llm_memory"), vec!["ok"]);
    assert!(outbox(&s).is_empty());
}

#[test]
fn device_statements_rebuild_the_book_and_an_unlink_ends_it() {
    let (_d, s) = temp_store();
    let me = peer(1);
    assert_eq!(s.device_book(&me).unwrap().device_count(), 0);
    let link = LinkProposal::new(&key(1), &peer(2), 10)
        .unwrap()
        .countersign(&key(2))
        .unwrap();
    // A link of two other devices that came first is taken once ours is.
    let later = LinkProposal::new(&key(2), &peer(3), 20)
        .unwrap()
        .countersign(&key(3))
        .unwrap();
    let a = item(2, 20, Body::DeviceLink(DeviceStatement::Link(later)));
    let b = item(1, 10, Body::DeviceLink(DeviceStatement::Link(link)));
    s.insert_items(&[row(&a, Some(2))]).unwrap();
    s.insert_items(&[row(&b, None)]).unwrap();
    let book = s.device_book(&me).unwrap();
    assert!(book.is_device(&peer(2)) && book.is_device(&peer(3)));
    assert_eq!(s.device_statements().unwrap().len(), 2);
    let unlink = DeviceUnlink::sign(&key(1), &peer(2), 30).unwrap();
    let c = item(1, 30, Body::DeviceLink(DeviceStatement::Unlink(unlink)));
    s.insert_items(&[row(&c, None)]).unwrap();
    let book = s.device_book(&me).unwrap();
    assert!(!book.is_device(&peer(2)) && !book.is_device(&peer(3)));
    let n: i64 = raw(&s)
        .query_row(
            "SELECT COUNT(*) FROM device_links WHERE action = ?",
            params!["unlink"],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(n, 1);
}

#[test]
fn a_device_that_wrote_twice_apart_gets_one_task_naming_every_pair() {
    let (_a, phone) = temp_store();
    let (_b, server) = temp_store();
    exec(
        &phone,
        "INSERT INTO goals (title, created, updated) VALUES ('swim', 1, 1)",
    );
    let first = publish(&phone, 1, 10);
    deliver(&server, &first, 1);
    exec(&phone, "UPDATE goals SET title = 'swim 1 km'");
    let p1 = publish(&phone, 1, 20);
    exec(&phone, "UPDATE goals SET title = 'swim 2 km'");
    let p2 = publish(&phone, 1, 30);
    exec(&server, "UPDATE goals SET status = 'done'");
    let q = publish(&server, 2, 25);
    deliver(&server, &[p1, p2].concat(), 1);
    let open = server.open_mind_conflicts(10).unwrap();
    assert_eq!(
        open.len(),
        2,
        "the server's edit forms a pair with each of the phone's"
    );
    let tasks: Vec<i64> = open
        .iter()
        .map(|c| {
            server
                .make_conflict_task(
                    &c.key,
                    "resolve_conflict: goal",
                    &format!("pair {:?}", c.key),
                    &peer(2),
                    40,
                )
                .unwrap()
        })
        .collect();
    assert_eq!(tasks[0], tasks[1], "one task for the record");
    let described = texts(&server, "SELECT description FROM tasks");
    assert_eq!(described.len(), 1);
    assert_eq!(described[0].lines().count(), 2, "{described:?}");
    assert!(outbox(&server).is_empty());
    // The phone, holding the same versions, converges on the same title.
    deliver(&phone, &q, 2);
    assert_eq!(
        texts(&phone, "SELECT title || ' ' || status FROM goals"),
        texts(&server, "SELECT title || ' ' || status FROM goals")
    );
}

#[test]
fn a_concept_deleted_on_a_device_takes_its_links_here_and_their_ids_are_free() {
    let (_a, phone) = temp_store();
    let (_b, server) = temp_store();
    exec(
        &phone,
        "INSERT INTO concepts (name, created, updated) VALUES ('cat', 1, 1), ('animal', 1, 1);
         INSERT INTO links (from_concept, to_concept, relation, created, updated) VALUES (1, 2, 'is_a', 1, 1);",
    );
    deliver(&server, &publish(&phone, 1, 10), 1);
    let link_id: i64 = raw(&server)
        .query_row("SELECT id FROM links", [], |r| r.get(0))
        .unwrap();
    let old_link = server.mind_key_of(MindTable::Link, link_id).unwrap();
    assert!(old_link.is_some());
    // Only the concept's tombstone arrives here first: the schema deletes
    // its link with it, and the link's record no longer names that row.
    exec(&phone, "DELETE FROM concepts WHERE name = 'cat'");
    let gone = publish(&phone, 1, 20);
    let concept_only: Vec<VerifiedItem> = gone
        .into_iter()
        .filter(|i| matches!(i.body(), Body::MindRecord(r) if r.table == MindTable::Concept))
        .collect();
    deliver(&server, &concept_only, 1);
    assert!(texts(&server, "SELECT relation FROM links").is_empty());
    assert_eq!(server.mind_key_of(MindTable::Link, link_id).unwrap(), None);
    // A new link that takes the id is a new record.
    exec(
        &server,
        &format!(
            "INSERT INTO links (id, from_concept, to_concept, relation, created, updated) VALUES ({link_id}, 2, 2, 'same', 1, 1)"
        ),
    );
    let sent = publish(&server, 2, 30);
    let key = sent
        .iter()
        .find_map(|i| match i.body() {
            Body::MindRecord(r) if r.table == MindTable::Link => Some(r.key),
            _ => None,
        })
        .unwrap();
    assert_ne!(Some(key), old_link);
}

//! The memory tables converge (issue 45 §2): random edits, inserts and
//! deletions on 2–4 devices, published and delivered while partitioned in
//! random ways (each delivery carries what one device holds to one
//! other), then a full exchange: every device's diary shows the same
//! records with the same texts, and holds the same open conflicts. Real
//! SQLite files, the real insert path.

use std::collections::BTreeSet;

use porfiry_protocol::mind::{MindRecord, MindTable};
use porfiry_protocol::{Body, ItemKind, VerifiedItem};
use porfiry_storage::{Store, StoredItem};
use proptest::prelude::*;

use super::mind::{deliver_from, publish_as};
use crate::temp_store;

#[derive(Debug, Clone)]
enum Op {
    /// Device `dev` edits its `nth` diary record (mod how many it has).
    Edit { dev: usize, nth: usize, text: u8 },
    /// Device `dev` writes a new entry.
    Insert { dev: usize, text: u8 },
    /// Device `dev` deletes its `nth` record.
    Delete { dev: usize, nth: usize },
    /// Device `dev` publishes what it changed.
    Publish { dev: usize },
    /// Everything `from` holds goes to `to`.
    Deliver { from: usize, to: usize },
}

fn op(devices: usize) -> impl Strategy<Value = Op> {
    let d = 0..devices;
    prop_oneof![
        3 => (d.clone(), 0..4usize, 0..4u8).prop_map(|(dev, nth, text)| Op::Edit { dev, nth, text }),
        1 => (d.clone(), 0..4u8).prop_map(|(dev, text)| Op::Insert { dev, text }),
        1 => (d.clone(), 0..4usize).prop_map(|(dev, nth)| Op::Delete { dev, nth }),
        2 => d.clone().prop_map(|dev| Op::Publish { dev }),
        3 => (d.clone(), d).prop_map(|(from, to)| Op::Deliver { from, to }),
    ]
}

fn case() -> impl Strategy<Value = (usize, Vec<Op>)> {
    (2..=4usize).prop_flat_map(|n| (Just(n), prop::collection::vec(op(n), 1..24)))
}

/// The diary rows of `s` with their record keys: `(key, text)`, sorted.
fn diary(s: &Store) -> Vec<(String, String)> {
    let conn = rusqlite::Connection::open(s.path()).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT hex(r.key), d.text FROM diary_entries d
             JOIN mind_records r ON r.tbl = 'diary' AND r.local_id = d.id ORDER BY 1",
        )
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// Local ids of the diary rows of `s`, in id order.
fn rows(s: &Store) -> Vec<i64> {
    let conn = rusqlite::Connection::open(s.path()).unwrap();
    let mut stmt = conn
        .prepare("SELECT id FROM diary_entries ORDER BY id")
        .unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn exec(s: &Store, sql: &str, id: Option<i64>) {
    let conn = rusqlite::Connection::open(s.path()).unwrap();
    match id {
        Some(id) => conn.execute(sql, [id]).unwrap(),
        None => conn.execute(sql, []).unwrap(),
    };
}

fn conflicts(s: &Store) -> BTreeSet<[u8; 16]> {
    s.open_mind_conflicts(1_000)
        .unwrap()
        .into_iter()
        .map(|c| c.key)
        .collect()
}

fn versions(s: &Store) -> Vec<MindRecord> {
    s.items_of_kind(ItemKind::MindRecord)
        .unwrap()
        .iter()
        .map(
            |i: &StoredItem| match VerifiedItem::decode(&i.payload, 0).unwrap().body() {
                Body::MindRecord(r) => r.clone(),
                other => panic!("{other:?}"),
            },
        )
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn devices_converge_whatever_the_partitions((n, ops) in case()) {
        let stores: Vec<_> = (0..n).map(|_| temp_store()).collect();
        let s = |i: usize| &stores[i].1;
        // A shared start: device 0's two entries, everywhere.
        exec(s(0), "INSERT INTO diary_entries (text, created, updated) VALUES ('a', 1, 1), ('b', 1, 1)", None);
        publish_as(s(0), 1, 10);
        for to in 1..n {
            deliver_from(s(0), s(to), 1);
        }
        let mut clock = 100;
        for op in &ops {
            clock += 10;
            match *op {
                Op::Edit { dev, nth, text } => {
                    let ids = rows(s(dev));
                    if !ids.is_empty() {
                        let id = ids[nth % ids.len()];
                        exec(s(dev), &format!("UPDATE diary_entries SET text = 'v{dev}-{text}-{clock}' WHERE id = ?"), Some(id));
                    }
                }
                Op::Insert { dev, text } => exec(
                    s(dev),
                    &format!("INSERT INTO diary_entries (text, created, updated) VALUES ('new{dev}-{text}-{clock}', 1, 1)"),
                    None,
                ),
                Op::Delete { dev, nth } => {
                    let ids = rows(s(dev));
                    if !ids.is_empty() {
                        exec(s(dev), "DELETE FROM diary_entries WHERE id = ?", Some(ids[nth % ids.len()]));
                    }
                }
                Op::Publish { dev } => { publish_as(s(dev), dev as u8 + 1, clock); }
                Op::Deliver { from, to } if from != to => deliver_from(s(from), s(to), from as u8 + 1),
                Op::Deliver { .. } => {}
            }
        }
        // The partitions heal: everyone publishes, then all-to-all twice.
        for dev in 0..n {
            clock += 10;
            publish_as(s(dev), dev as u8 + 1, clock);
        }
        for _ in 0..2 {
            for from in 0..n {
                for to in 0..n {
                    if from != to {
                        deliver_from(s(from), s(to), from as u8 + 1);
                    }
                }
            }
        }
        let first = diary(s(0));
        let first_conflicts = conflicts(s(0));
        for dev in 1..n {
            prop_assert_eq!(&diary(s(dev)), &first, "device {} differs", dev);
            prop_assert_eq!(&conflicts(s(dev)), &first_conflicts, "device {}'s conflicts differ", dev);
        }
        // No edit vanished silently: every text a device published is
        // shown, or its record was deleted, or a conflict names a version
        // of its record, or a later version of the same record by a writer
        // that had seen it replaced it.
        let held = versions(s(0));
        let shown: BTreeSet<String> = first.iter().map(|(_, t)| t.clone()).collect();
        let keys_in_conflict: BTreeSet<[u8; 16]> = s(0)
            .open_mind_conflicts(1_000)
            .unwrap()
            .iter()
            .map(|c| c.record)
            .collect();
        for v in held.iter().filter(|v| !v.deleted && v.table == MindTable::Diary) {
            let Some(porfiry_protocol::mind::MindValue::Text(text)) = v.fields.get("text") else {
                continue;
            };
            let superseded = held.iter().any(|w| {
                w.key == v.key && w.vv.compare(&v.vv) == porfiry_protocol::mind::Causality::After
            });
            let deleted = held.iter().any(|w| w.key == v.key && w.deleted);
            prop_assert!(
                shown.contains(text) || superseded || deleted || keys_in_conflict.contains(&v.key),
                "{text:?} vanished"
            );
        }
    }
}

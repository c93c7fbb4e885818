//! How long a whole pruning pass takes at a user's size (issue 45): a
//! diary of 50,000 entries of 800 bytes (`PORFIRY_PRUNE_RECORDS` for
//! another count), each written, edited once, every second one edited
//! again and every fifth one deleted, each change published as the node's
//! publisher does (256 signed versions per transaction); then a pass by a
//! clock past the time to live, batch after batch as the node's loop runs
//! it, what it deleted and what the file weighs before and after; then
//! the next day's pass, which finds nothing left to forget. Ignored (a
//! minute of set-up in release); run it with
//! `cargo test --release -p porfiry-storage --test storage mind_prune_measure -- --ignored --nocapture`.

use std::time::Instant;

use porfiry_protocol::devices::DEVICES_MAX_HOPS;
use porfiry_protocol::mind::{MindRecord, TOMBSTONE_TTL_MS};
use porfiry_protocol::{Audience, Body, ItemRecord, NodeKey, PayloadDraft, sign};
use porfiry_storage::mind::MindPruned;
use porfiry_storage::{Store, StoredItem};

use crate::{raw, temp_store};

/// Diary entries by default: ten years of a daily diary and more, as the
/// catch-up measurement of a new device (docs/benchmarks.md).
const RECORDS: usize = 50_000;

/// Bytes of text per entry, as there.
const TEXT_BYTES: usize = 800;

/// Versions signed per transaction, as `MIND_PUBLISH_BATCH` in the node.
const PUBLISH_BATCH: usize = 256;

/// Publishes every change waiting, as device `key` at `at_ms`, in
/// transactions of [`PUBLISH_BATCH`]; returns the versions signed.
fn publish_all(s: &Store, key: &NodeKey, at_ms: u64) -> usize {
    let me = key.peer_id().to_string();
    let mut signed = 0;
    loop {
        let n = s
            .transaction(|s| {
                let entries = s.mind_outbox(PUBLISH_BATCH)?;
                let n = entries.len();
                for entry in entries {
                    let Some(change) = s.take_mind_change(entry, &me)? else {
                        continue;
                    };
                    let record = MindRecord {
                        table: change.table,
                        key: change.key,
                        vv: s.next_mind_vv(&change.key, &me, change.seen)?,
                        at_ms,
                        deleted: change.fields.is_none(),
                        fields: change.fields.unwrap_or_default(),
                    };
                    let draft = PayloadDraft {
                        created_ms: at_ms,
                        audience: Audience::Devices,
                        max_hops: DEVICES_MAX_HOPS,
                        expires_ms: None,
                        replaces: None,
                        body: Body::MindRecord(record),
                    };
                    let item = sign(key, &draft).expect("a diary version signs");
                    s.insert_items(&[StoredItem {
                        record: ItemRecord::of(&item, item.max_hops(), None),
                        payload: item.envelope_bytes().to_vec(),
                        signature: item.signature_bytes().to_vec(),
                    }])?;
                }
                Ok(n)
            })
            .unwrap();
        if n == 0 {
            return signed;
        }
        signed += n;
    }
}

/// The file's pages and its free pages, in bytes.
fn file_bytes(s: &Store) -> (u64, u64) {
    let c = raw(s);
    let pragma = |p: &str| -> u64 {
        c.query_row(&format!("PRAGMA {p}"), [], |r| r.get(0))
            .unwrap()
    };
    let page = pragma("page_size");
    (pragma("page_count") * page, pragma("freelist_count") * page)
}

/// A whole pass, batch after batch, as the node's loop runs it, timed.
struct Pass {
    done: MindPruned,
    batches: usize,
    total_ms: f64,
    slowest_ms: f64,
}

impl Pass {
    fn run(s: &Store, now_ms: u64) -> Pass {
        let mut pass = Pass {
            done: MindPruned::default(),
            batches: 0,
            total_ms: 0.0,
            slowest_ms: 0.0,
        };
        let mut after = None;
        loop {
            let one = Instant::now();
            let batch = s.prune_mind(now_ms, after.as_ref()).unwrap();
            let ms = one.elapsed().as_secs_f64() * 1e3;
            pass.total_ms += ms;
            pass.slowest_ms = pass.slowest_ms.max(ms);
            pass.batches += 1;
            pass.done.add(&batch);
            match batch.next {
                Some(next) => after = Some(next),
                None => return pass,
            }
        }
    }

    fn line(&self) -> String {
        format!(
            "{} batches, {:.0} ms, {:.2} ms a batch on average, slowest {:.1} ms",
            self.batches,
            self.total_ms,
            self.total_ms / self.batches as f64,
            self.slowest_ms
        )
    }
}

fn count(s: &Store, sql: &str) -> i64 {
    raw(s).query_row(sql, [], |r| r.get(0)).unwrap()
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}

#[test]
#[ignore = "a measurement: a minute of set-up; run it by name with --ignored --nocapture"]
fn mind_prune_measure() {
    let records: usize = std::env::var("PORFIRY_PRUNE_RECORDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(RECORDS);
    let (_dir, s) = temp_store();
    let key = NodeKey::from_seed([1; 32]);
    let filler = "x".repeat(TEXT_BYTES - 16);
    let t0: u64 = 1_700_000_000_000;

    let setup = Instant::now();
    let c = raw(&s);
    c.execute_batch(&format!(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {records})
         INSERT INTO diary_entries (text, created, updated)
         SELECT printf('%010d %s', i, '{filler}'), i, i FROM n;"
    ))
    .unwrap();
    let mut signed = publish_all(&s, &key, t0);
    c.execute_batch("UPDATE diary_entries SET text = 'edited ' || text, updated = updated + 1")
        .unwrap();
    signed += publish_all(&s, &key, t0 + 1_000);
    c.execute_batch(
        "UPDATE diary_entries SET text = 'again ' || text, updated = updated + 1 WHERE id % 2 = 0",
    )
    .unwrap();
    signed += publish_all(&s, &key, t0 + 2_000);
    c.execute_batch("DELETE FROM diary_entries WHERE id % 5 = 0")
        .unwrap();
    signed += publish_all(&s, &key, t0 + 3_000);
    drop(c);
    let setup_s = setup.elapsed().as_secs_f64();
    let versions_before = count(&s, "SELECT COUNT(*) FROM mind_versions");
    let items_before = count(&s, "SELECT COUNT(*) FROM items WHERE kind = 'mind_record'");
    assert_eq!(versions_before, signed as i64);
    let (size_before, free_before) = file_bytes(&s);

    let now = t0 + 3_000 + TOMBSTONE_TTL_MS;
    let first = Pass::run(&s, now);
    let (size_after, free_after) = file_bytes(&s);
    let pass = &first.done;

    // What the pass must have forgotten: every version of a deleted entry
    // (a fifth of them), and every superseded version of a live one.
    let deleted = records / 5;
    let live_odd = (records - records / 2) - (records / 5 - records / 10);
    let live_even = records / 2 - records / 10;
    let deleted_versions = (records / 10) * 4 + (records / 5 - records / 10) * 3;
    let expected = deleted_versions + live_odd + live_even * 2;
    assert_eq!(pass.records, records);
    assert_eq!(pass.deletions, deleted);
    assert_eq!(pass.versions, expected);
    assert_eq!(pass.items, expected);
    let versions_after = count(&s, "SELECT COUNT(*) FROM mind_versions");
    assert_eq!(versions_after, (records - deleted) as i64, "a winner each");

    // The next day's pass, with nothing left to forget: the scan alone.
    let next = Pass::run(&s, now + 24 * 60 * 60 * 1000);
    assert_eq!(next.done.versions, 0);

    raw(&s).execute_batch("VACUUM").unwrap();
    let (size_vacuumed, _) = file_bytes(&s);

    println!("mind prune measure: {records} diary entries of {TEXT_BYTES} bytes");
    println!(
        "set-up: {signed} versions signed and stored in {setup_s:.1} s \
         ({versions_before} versions, {items_before} mind_record items)"
    );
    println!("pass: {}", first.line());
    println!("next day's pass, nothing to forget: {}", next.line());
    println!(
        "deleted: {} versions + {} items = {} rows ({} deletions forgotten, {} mind_pruned rows)",
        pass.versions,
        pass.items,
        pass.versions + pass.items,
        pass.deletions,
        count(&s, "SELECT COUNT(*) FROM mind_pruned")
    );
    println!(
        "file: {:.1} MB before ({:.1} MB free), {:.1} MB after ({:.1} MB free), {:.1} MB after VACUUM",
        mb(size_before),
        mb(free_before),
        mb(size_after),
        mb(free_after),
        mb(size_vacuumed)
    );
}

//! Notes throughput on a real file: inserting 100k notes in batches (one
//! transaction per batch), merging 10k notes received from a friend, and
//! reading the 50 most recent with 100k present.
//!
//! Run: `cargo bench -p porfiry-storage --bench notes -- --warm-up-time 1 --measurement-time 3`

// `criterion_group!` generates an undocumented `pub fn`.
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use porfiry_storage::{DB_FILE_NAME, Note, NoteSource, Store};
use tempfile::TempDir;

/// Notes in the table for both benches.
const NOTES: usize = 100_000;
/// Notes per transaction (`Store::add_many`): one fsync-free WAL commit per
/// thousand notes, the batch size a catch-up or import would use.
const BATCH: usize = 1_000;
/// How many recent notes a prompt context reads.
const RECENT: u32 = 50;

fn note(i: usize) -> Note {
    Note {
        text: format!(
            "Note {i}: a short message of about the size people write in chat, with a #mesh tag and @bob."
        ),
        hashtags: vec!["mesh".into()],
        mentions: vec!["bob".into()],
        source: if i.is_multiple_of(3) {
            NoteSource::Llm
        } else {
            NoteSource::User
        },
        priority: (i % 4) as i64,
        tags: vec!["bench".into()],
        ..Default::default()
    }
}

fn fresh() -> (TempDir, Store) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::create(dir.path().join(DB_FILE_NAME)).expect("store");
    (dir, store)
}

fn fill(store: &Store, notes: &[Note]) {
    for (b, chunk) in notes.chunks(BATCH).enumerate() {
        store.add_many(chunk, 1_000 + b as u64).expect("insert");
    }
}

/// Times `write` on a fresh file per iteration, as `elements` notes.
fn on_fresh_files(c: &mut Criterion, name: &str, elements: usize, write: impl Fn(&Store)) {
    let mut g = c.benchmark_group("notes");
    g.sample_size(10);
    g.throughput(Throughput::Elements(elements as u64));
    g.bench_function(name, |b| {
        b.iter_batched(
            fresh,
            |(dir, store)| {
                write(&store);
                (dir, store)
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

fn insert_100k(c: &mut Criterion) {
    let notes: Vec<Note> = (0..NOTES).map(note).collect();
    on_fresh_files(c, "insert_100k_batches_of_1000", NOTES, |store| {
        fill(store, &notes)
    });
}

/// Merging friends' notes as catch-up does: 10,000 notes received from
/// one friend, a frame's worth (1,000) per transaction, each with its
/// origin (author peer id and item id).
fn merge_10k(c: &mut Criterion) {
    const MERGED: usize = 10_000;
    let friend = "12D3KooWQYhTNQdmr3ArTeUHRYzFg94BKyTkoWBDWez9kSCVe2Xo";
    let rows: Vec<(Note, u64)> = (0..MERGED)
        .map(|i| {
            // Distinct and spread over the key space like the SHA-256 ids
            // they stand for (an odd multiplier permutes the u64s).
            let mut id = [0u8; 32];
            id[..8].copy_from_slice(&(i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15).to_be_bytes());
            let note = Note {
                audience: porfiry_storage::Sharing::Shared(porfiry_protocol::Audience::Friends),
                origin_author: Some(friend.into()),
                origin_item_id: Some(porfiry_protocol::ItemId(id)),
                tags: Vec::new(),
                ..note(i)
            };
            (note, 1_000 + i as u64)
        })
        .collect();
    on_fresh_files(
        c,
        "merge_10k_from_a_friend_batches_of_1000",
        MERGED,
        |store| {
            for chunk in rows.chunks(BATCH) {
                let merged = store.merge_from_items(chunk).expect("merge");
                assert!(merged.iter().all(Result::is_ok));
            }
        },
    );
}

fn recent_50(c: &mut Criterion) {
    let (_dir, store) = fresh();
    let notes: Vec<Note> = (0..NOTES).map(note).collect();
    fill(&store, &notes);
    c.bench_function("notes/recent_50_of_100k", |b| {
        b.iter(|| {
            let rows = store.notes_recent(black_box(RECENT)).expect("read");
            assert_eq!(rows.len(), RECENT as usize);
            rows
        })
    });
}

criterion_group!(benches, insert_100k, merge_10k, recent_50);
criterion_main!(benches);

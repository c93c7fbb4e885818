//! Replicated items on a real file: storing a batch, and answering "which
//! items may this friend receive" with 10k items stored (full records for
//! push, keys only for catch-up).
//!
//! Run: `cargo bench -p porfiry-storage --bench items -- --warm-up-time 1 --measurement-time 3`

// `criterion_group!` generates an undocumented `pub fn`.
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use porfiry_protocol::devices::DeviceBook;
use porfiry_protocol::{Audience, ClubBook, ItemId, ItemKind, ItemRecord};
use porfiry_storage::{DB_FILE_NAME, Store, StoredItem};
use tempfile::TempDir;

/// Items stored for the friend queries.
const ITEMS: usize = 10_000;
/// Items per `insert_items` call: one catch-up batch.
const BATCH: usize = 1_000;
/// Envelope size: a chat-sized note with its signature and header.
const PAYLOAD: usize = 400;
const ME: &str = "12D3KooWMe";
const FRIEND: &str = "12D3KooWFriend";

fn item(n: usize) -> StoredItem {
    let mut id = [0u8; 32];
    id[..8].copy_from_slice(&(n as u64).to_be_bytes());
    let (author, audience) = match n % 4 {
        0 => (ME, Audience::Friends),
        1 => (ME, Audience::Group("family".into())),
        2 => ("12D3KooWCarol", Audience::Public),
        _ => ("12D3KooWCarol", Audience::Friends),
    };
    StoredItem {
        record: ItemRecord {
            id: ItemId(id),
            author: author.into(),
            kind: ItemKind::Note,
            audience,
            created_ms: n as u64,
            expires_ms: None,
            received_from: (author != ME).then(|| "12D3KooWCarol".to_owned()),
            max_hops: 4,
            hops_left: 3,
            retracts: None,
            replaces: None,
            club_target: None,
            club_removal: false,
            envelope_bytes: PAYLOAD as u32,
        },
        payload: vec![7; PAYLOAD],
        signature: vec![1; 64],
    }
}

fn fresh() -> (TempDir, Store) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::create(dir.path().join(DB_FILE_NAME)).expect("store");
    (dir, store)
}

fn insert_batch(c: &mut Criterion) {
    let items: Vec<StoredItem> = (0..BATCH).map(item).collect();
    let mut g = c.benchmark_group("items");
    g.throughput(Throughput::Elements(BATCH as u64));
    g.bench_function("insert_batch_of_1000", |b| {
        b.iter_batched(
            fresh,
            |(dir, store)| {
                assert_eq!(store.insert_items(&items).expect("insert"), BATCH);
                (dir, store)
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

fn for_friend(c: &mut Criterion) {
    let (_dir, store) = fresh();
    let items: Vec<StoredItem> = (0..ITEMS).map(item).collect();
    for chunk in items.chunks(BATCH) {
        store.insert_items(chunk).expect("insert");
    }
    let groups = vec!["family".to_string()];
    c.bench_function("items/for_friend_of_10k", |b| {
        b.iter(|| {
            store
                .items_for_friend(
                    ME,
                    black_box(FRIEND),
                    &groups,
                    &ClubBook::new(),
                    &DeviceBook::new(ME),
                    0,
                )
                .expect("query")
        })
    });
    c.bench_function("items/keys_for_friend_of_10k", |b| {
        b.iter(|| {
            store
                .item_keys_for_friend(
                    ME,
                    black_box(FRIEND),
                    &groups,
                    &ClubBook::new(),
                    &DeviceBook::new(ME),
                    0,
                )
                .expect("query")
        })
    });
}

criterion_group!(benches, insert_batch, for_friend);
criterion_main!(benches);

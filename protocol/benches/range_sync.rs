//! Cost of one catch-up reconciliation (`range_sync`) between two sets, both
//! sides in one thread, building and keying the sets included (every
//! session does that): equal sets, a few differences in a big set, and a
//! friend that holds nothing. Prints the bytes each exchanged.
//!
//! Run: `cargo bench -p porfiry-protocol --bench range_sync`.

#![allow(missing_docs)]

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use porfiry_protocol::ItemId;
use porfiry_protocol::range_sync::{Reconciler, SyncSet};
use porfiry_protocol::wire::SYNC_FRAME_BYTES;

fn item(n: u32) -> (u64, ItemId) {
    let mut id = [0u8; 32];
    id[..4].copy_from_slice(&n.wrapping_mul(2_654_435_761).to_be_bytes());
    id[28..].copy_from_slice(&n.to_be_bytes());
    // About three items a second, as a busy club's server holds them.
    (1_700_000_000_000 + u64::from(n) * 300, ItemId(id))
}

fn set(items: &[(u64, ItemId)]) -> SyncSet {
    let mut s = SyncSet::with_capacity(items.len());
    for (ts, id) in items {
        s.insert(*ts, *id);
    }
    s
}

/// One whole session; returns the bytes both ways and what was found.
fn session(ours: &[(u64, ItemId)], theirs: &[(u64, ItemId)]) -> (usize, usize, usize) {
    let key = *b"bench session ky";
    let (mut a, mut query) = Reconciler::initiator(set(ours), key, SYNC_FRAME_BYTES);
    let mut b = Reconciler::responder(set(theirs), SYNC_FRAME_BYTES);
    let (mut have, mut need) = (Vec::new(), Vec::new());
    let mut bytes = 0;
    loop {
        let reply = b.reconcile(&query).expect("valid query");
        bytes += query.len() + reply.len();
        match a
            .reconcile_with_ids(&reply, &mut have, &mut need)
            .expect("valid reply")
        {
            Some(next) => query = next,
            None => return (bytes, have.len(), need.len()),
        }
    }
}

/// `(time, id)` pairs of one side.
type Items = Vec<(u64, ItemId)>;

fn cases(n: u32) -> Vec<(&'static str, Items, Items)> {
    let all: Vec<_> = (0..n).map(item).collect();
    // Ten recent items the friend lacks, and ten it holds that we lack,
    // spread over the older part of the set.
    let mut ours = all.clone();
    ours.extend((n..n + 10).map(item));
    let mut theirs = all.clone();
    theirs.extend((0..10u32).map(|k| {
        let (_, id) = item(n + 100 + k);
        (item(k * (n / 10)).0 + 1, id)
    }));
    vec![
        ("equal", all.clone(), all.clone()),
        ("ten_differences_each_way", ours, theirs),
        ("friend_holds_nothing", all, Vec::new()),
    ]
}

fn reconcile(c: &mut Criterion) {
    let mut g = c.benchmark_group("range_sync");
    g.sample_size(10);
    for n in [10_000u32, 1_000_000] {
        for (name, ours, theirs) in cases(n) {
            let (bytes, have, need) = session(&ours, &theirs);
            println!("{name} at {n}: {bytes} bytes both ways; {have} ids to send, {need} lacked");
            g.throughput(Throughput::Elements(u64::from(n)));
            g.bench_with_input(BenchmarkId::new(name, n), &(ours, theirs), |b, (o, t)| {
                b.iter(|| session(o, t))
            });
        }
    }
    g.finish();
}

criterion_group!(benches, reconcile);
criterion_main!(benches);

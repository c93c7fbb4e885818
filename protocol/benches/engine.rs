//! Engine benchmarks: how fast one engine takes in received items (items
//! already verified, as the driver hands them over), and a catch-up of
//! 10,000 missed items between two engines through the real codec and
//! edge verification, printing bytes on the wire per payload byte.
//!
//! Run: `cargo bench -p porfiry-protocol --bench engine -- --warm-up-time 1 --measurement-time 3`

// A bench times itself with `Instant` (the ban on it in protocol/clippy.toml
// is for the engine), and `criterion_group!` generates an undocumented
// `pub fn`.
#![allow(clippy::disallowed_methods, clippy::disallowed_types, missing_docs)]

#[path = "../tests/engine_support/mod.rs"]
mod engine_support;

use std::hint::black_box;
use std::time::Instant;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use engine_support::{Net, key, note, peer};
use porfiry_protocol::engine::{Engine, EngineConfig, Inbound, Input, Quotas, ReceivedItem};
use porfiry_protocol::{Audience, VerifiedItem};

const T0: u64 = 1_700_000_000_000;
const N_RECEIVED: usize = 10_000;
const N_CATCH_UP: usize = 10_000;

/// A realistic chat note: a couple of sentences.
fn text(i: usize) -> String {
    format!(
        "Note {i}: met the chess club on Thursday, we talked about openings and who brings the clocks next week."
    )
}

/// The engine's defaults with budgets that never bind: the benches relay
/// 10,000 items of one friend of a friend (a stranger, whose default budget
/// is 1,000), and measure the same work as before quotas, the quota checks
/// included.
fn unbounded(c: EngineConfig) -> EngineConfig {
    EngineConfig {
        quotas: Quotas {
            stranger_items: u32::MAX,
            stranger_bytes: u64::MAX,
            strangers_kept: u32::MAX,
            stranger_items_per_link_minute: u32::MAX,
            ..Quotas::default()
        },
        ..c
    }
}

fn signed(author: usize, n: usize, audience: Audience) -> Vec<VerifiedItem> {
    let k = key(author);
    (0..n)
        .map(|i| note(&k, T0 + i as u64, audience.clone(), 3, &text(i)))
        .collect()
}

fn receive_throughput(c: &mut Criterion) {
    let items = signed(9, N_RECEIVED, Audience::Public);
    let mut group = c.benchmark_group("engine");
    group.throughput(Throughput::Elements(N_RECEIVED as u64));
    group.sample_size(10);
    group.bench_function("receive_10k_items_from_a_friend_and_announce_to_5", |b| {
        b.iter_batched(
            || {
                let mut e = Engine::new(unbounded(EngineConfig::new(peer(0))), vec![]);
                for f in 1..=6 {
                    e.handle(
                        T0,
                        Input::PeerConnected {
                            peer: peer(f),
                            groups: vec![],
                        },
                    );
                }
                e
            },
            |mut e| {
                let mut out = Vec::new();
                for chunk in items.chunks(500) {
                    let message = Inbound::Items {
                        session: None,
                        items: chunk
                            .iter()
                            .map(|it| ReceivedItem {
                                hops: 3,
                                item: it.clone(),
                            })
                            .collect(),
                        invalid: vec![],
                        unreadable: vec![],
                    };
                    e.handle_into(
                        T0 + 1,
                        Input::Received {
                            peer: peer(1),
                            message,
                        },
                        &mut out,
                    );
                }
                e.handle_into(T0 + 1_000, Input::Tick, &mut out);
                black_box(out.len())
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

/// Node 1 holds `items` (sent by `from`, if relayed); node 0 was offline.
fn catch_up_net(items: &[VerifiedItem], from: Option<String>) -> Net {
    let mut net = Net::new(2, T0 + N_CATCH_UP as u64, unbounded);
    net.befriend(0, 1, 10);
    net.seed(
        1,
        items
            .iter()
            .map(|it| (it.clone(), 2, from.clone()))
            .collect(),
    );
    net
}

fn run_catch_up(net: &mut Net) {
    net.connect_all();
    net.advance(60_000);
}

fn report(label: &str, items: &[VerifiedItem], from: Option<String>) {
    let mut net = catch_up_net(items, from);
    let started = Instant::now();
    run_catch_up(&mut net);
    let took = started.elapsed();
    assert_eq!(
        net.nodes[0].store.len(),
        items.len(),
        "{label}: every item arrives"
    );
    let envelopes: u64 = items.iter().map(|i| i.envelope_bytes().len() as u64).sum();
    assert_eq!(net.payload_bytes, envelopes, "{label}: each item once");
    println!(
        "catch-up {label}: {} items, {} payload bytes, {} wire bytes, wire/payload = {:.4}, {:.0} ms wall (codec + verification + both engines)",
        items.len(),
        net.payload_bytes,
        net.wire_bytes,
        net.wire_bytes as f64 / net.payload_bytes as f64,
        took.as_secs_f64() * 1e3,
    );
}

/// Both sides missed 5,000 relayed public items the other holds: each
/// session's responder also lists the ids its initiator lacks.
fn report_both_ways() {
    let half = N_CATCH_UP / 2;
    let left = signed(2, half, Audience::Public);
    let right = signed(3, half, Audience::Public);
    let mut net = Net::new(2, T0 + N_CATCH_UP as u64, unbounded);
    net.befriend(0, 1, 10);
    net.seed(
        0,
        left.iter()
            .map(|it| (it.clone(), 2, Some(peer(2))))
            .collect(),
    );
    net.seed(
        1,
        right
            .iter()
            .map(|it| (it.clone(), 2, Some(peer(3))))
            .collect(),
    );
    run_catch_up(&mut net);
    assert_eq!(net.nodes[0].store.len(), N_CATCH_UP);
    assert_eq!(net.nodes[1].store.len(), N_CATCH_UP);
    println!(
        "catch-up both ways ({half} missed on each side): {} payload bytes, {} wire bytes, wire/payload = {:.4}; by message: {:?}",
        net.payload_bytes,
        net.wire_bytes,
        net.wire_bytes as f64 / net.payload_bytes as f64,
        net.bytes_by_kind,
    );
}

/// 20 engines on a random friend graph of degree 6 (seeded), 200 public
/// items from random authors: payload copies received per node per item,
/// and announce/pull bytes per payload byte.
fn report_redundancy() {
    use rand_chacha::ChaCha8Rng;
    use rand_chacha::rand_core::{Rng, SeedableRng};
    let n = 20;
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    let mut net = Net::new(n, T0, unbounded);
    let mut degree = vec![0usize; n];
    for _ in 0..100_000 {
        let a = rng.next_u32() as usize % n;
        let b = rng.next_u32() as usize % n;
        if a != b
            && degree[a] < 6
            && degree[b] < 6
            && !net.edges.contains_key(&(a.min(b), a.max(b)))
        {
            net.befriend(a, b, 5 + u64::from(rng.next_u32() % 45));
            degree[a] += 1;
            degree[b] += 1;
        }
    }
    net.connect_all();
    let mut ids = Vec::new();
    for i in 0..200u64 {
        let author = rng.next_u32() as usize % n;
        let x = note(
            &net.nodes[author].key.clone(),
            T0 + i * 50,
            Audience::Public,
            8,
            &text(i as usize),
        );
        ids.push((author, x.id()));
        net.publish(author, x);
        net.advance(50);
    }
    net.advance(30_000);
    let (mut copies, mut deliveries) = (0u64, 0u64);
    for (author, id) in &ids {
        for node in 0..n {
            if node != *author
                && let Some(c) = net.copies.get(&(node, *id))
            {
                copies += u64::from(*c);
                deliveries += 1;
            }
        }
    }
    let edges = net.edges.len();
    println!(
        "live push, 20 nodes, {edges} friendships (degree ~6), 200 items: {:.3} payload copies per node per item ({copies}/{deliveries}); wire/payload = {:.3}; by message: {:?}",
        copies as f64 / deliveries as f64,
        net.wire_bytes as f64 / net.payload_bytes as f64,
        net.bytes_by_kind,
    );
}

fn catch_up(c: &mut Criterion) {
    let own = signed(1, N_CATCH_UP, Audience::Public);
    let relayed = signed(2, N_CATCH_UP, Audience::Public);
    report("of the sender's own items", &own, None);
    report("of items the sender relayed", &relayed, Some(peer(2)));
    report_both_ways();
    report_redundancy();
    println!(
        "mean envelope: {} bytes",
        own.iter().map(|i| i.envelope_bytes().len()).sum::<usize>() / own.len()
    );
    let mut group = c.benchmark_group("engine");
    group.throughput(Throughput::Elements(N_CATCH_UP as u64));
    group.sample_size(10);
    group.bench_function("catch_up_10k_missed_items", |b| {
        b.iter_batched(
            || catch_up_net(&own, None),
            |mut net| run_catch_up(&mut net),
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

criterion_group!(benches, receive_throughput, catch_up);
criterion_main!(benches);

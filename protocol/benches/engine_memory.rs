//! Engine memory per held item (issue 11): heap bytes the engine keeps for
//! 100,000 and 1,000,000 items, and the peak while it starts from them.
//!
//! Heap bytes are counted by a counting allocator (`peak_alloc`), so the
//! figures do not depend on what the C allocator returns to the OS. The
//! records are shaped like a club server's: 200 authors, 40 friends they
//! came from, 90 % public, the rest friends-only and group items, an expiry
//! on one in ten.
//!
//! Run: `cargo bench -p porfiry-protocol --bench engine_memory` (add
//! `-- 250000` for other sizes).

#![allow(missing_docs)]

use peak_alloc::PeakAlloc;
use porfiry_protocol::engine::{Engine, EngineConfig};
use porfiry_protocol::{Audience, ItemId, ItemKind, ItemRecord};

#[global_allocator]
static HEAP: PeakAlloc = PeakAlloc;

const T0: u64 = 1_700_000_000_000;

/// A peer id string of the real length (52 characters).
fn peer(n: usize) -> String {
    format!("12D3KooW{n:0>44}")
}

fn record(i: usize) -> ItemRecord {
    let mut id = [0u8; 32];
    // Spread ids like hashes: the index is ordered by id.
    let h = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    id[..8].copy_from_slice(&h.to_be_bytes());
    id[8..16].copy_from_slice(&(i as u64).to_be_bytes());
    let audience = match i % 10 {
        0 => Audience::Friends,
        1 => Audience::Group("family".into()),
        _ => Audience::Public,
    };
    ItemRecord {
        id: ItemId(id),
        author: peer(i % 200),
        kind: ItemKind::Note,
        audience,
        created_ms: T0 + i as u64,
        expires_ms: (i % 10 == 3).then_some(T0 + 86_400_000 + i as u64),
        received_from: Some(peer(1_000 + i % 40)),
        max_hops: 3,
        hops_left: 2,
        retracts: None,
        replaces: None,
        club_target: None,
        club_removal: false,
        envelope_bytes: 600,
    }
}

fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn measure(n: usize) {
    // What a whole list of records would take (a driver that loads them all).
    let base = HEAP.current_usage();
    let records: Vec<ItemRecord> = (0..n).map(record).collect();
    let as_list = HEAP.current_usage() - base;
    drop(records);

    // The engine started from records streamed one by one, as storage
    // reads its rows.
    let base = HEAP.current_usage();
    HEAP.reset_peak_usage();
    let engine = Engine::new(EngineConfig::new(peer(7)), (0..n).map(record));
    let held = HEAP.current_usage() - base;
    let peak = HEAP.peak_usage() - base;
    println!(
        "{n:>9} items: engine holds {:>7.1} MiB = {:>5.0} B/item; start-up peak {:>7.1} MiB \
         = {:.2}x held (a list of the records would be {:.1} MiB = {:.0} B/item)",
        mib(held),
        held as f64 / n as f64,
        mib(peak),
        peak as f64 / held as f64,
        mib(as_list),
        as_list as f64 / n as f64,
    );
    drop(engine);
}

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.replace('_', "").parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![100_000, 1_000_000]
    } else {
        sizes
    };
    for n in sizes {
        measure(n);
    }
}

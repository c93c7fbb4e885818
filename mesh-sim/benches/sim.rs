//! How fast mesh-sim runs: whole shipped scenarios (the family in full, the
//! club in full, the city shrunk to 60 nodes), reported as simulation
//! events per second of wall time. Each event is one engine input at most,
//! with its encoding, decoding and signature checks.
//!
//! Run: `cargo bench -p mesh-sim --bench sim -- --warm-up-time 1 --measurement-time 3`

// `criterion_group!` generates an undocumented `pub fn`.
#![allow(missing_docs)]

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mesh_sim::{Scenario, run};

fn shipped(name: &str) -> Scenario {
    let path = format!("{}/scenarios/{name}.toml", env!("CARGO_MANIFEST_DIR"));
    match Scenario::load(std::path::Path::new(&path)) {
        Ok(s) => s,
        Err(e) => panic!("{path}: {e}"),
    }
}

fn scenarios(c: &mut Criterion) {
    let mut group = c.benchmark_group("scenario");
    group.sample_size(10);
    for (label, s) in [
        ("family", shipped("family")),
        ("club", shipped("club")),
        ("city-60", shipped("city").shrunk(60, 300)),
    ] {
        let events = match run(&s, s.seed) {
            Ok(o) => o.report.sim_events,
            Err(e) => panic!("{label}: {e}"),
        };
        group.throughput(Throughput::Elements(events));
        group.bench_function(label, |b| {
            b.iter(|| run(&s, s.seed).map(|o| o.report.sim_events).unwrap_or(0))
        });
    }
    group.finish();
}

criterion_group!(benches, scenarios);
criterion_main!(benches);

//! Issue 4's redundancy measurement: payload copies received per node per
//! item for our engine (driven by mesh-sim) and for libp2p gossipsub (real
//! swarms in process), on the same 20-node degree-6 friend graph with the
//! same signed items. A measurement, not a test: it prints a table.
//!
//! Run: `cargo bench -p mesh-sim --bench redundancy`

mod gossip;

use std::time::Duration;

use mesh_sim::redundancy::{Setup, ours, world};

fn main() -> anyhow::Result<()> {
    if std::env::args().any(|a| a == "--list") {
        // `cargo test --benches` lists targets; nothing to list here.
        return Ok(());
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    println!(
        "| nodes | degree | items | note bytes | envelope bytes | ours: copies/node/item | ours: delivered | gossipsub: copies/node/item | gossipsub: delivered | gossipsub min mesh |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for text_bytes in [200, 4_000] {
        let setup = Setup {
            text_bytes,
            ..Setup::issue4()
        };
        let w = world(&setup)?;
        let envelope = w.items.first().map_or(0, |p| p.item.envelope_bytes().len());
        let o = ours(&setup, &w)?;
        let g = runtime.block_on(gossip::run(&w, Duration::from_millis(setup.gap_ms)))?;
        println!(
            "| {} | {} | {} | {} | {} | {:.3} | {}/{} | {:.3} | {}/{} | {} |",
            setup.nodes,
            setup.degree,
            setup.items,
            text_bytes,
            envelope,
            o.per_node_per_item,
            o.deliveries,
            o.due,
            g.copies as f64 / g.delivered.max(1) as f64,
            g.delivered,
            g.due,
            g.min_mesh,
        );
    }
    Ok(())
}

//! Our side of the issue-4 redundancy measurement: N nodes, a random
//! regular friend graph, public items that may reach everyone, no faults,
//! and the payload copies each node receives per item. The gossipsub side
//! (`benches/redundancy.rs`) runs libp2p swarms on the very same world.

use crate::error::SimError;
use crate::scenario::{
    AudienceMix, EngineOverrides, Faults, GraphSpec, ItemsSpec, Latency, LinkSpec, Links, Nodes,
    Scenario,
};
use crate::sim::run_outcome;
use crate::world::World;

/// The measurement's set-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setup {
    /// Nodes (20 in issue 4).
    pub nodes: usize,
    /// Friends per node (6 in issue 4).
    pub degree: usize,
    /// Items published.
    pub items: usize,
    /// Note text length, bytes.
    pub text_bytes: usize,
    /// Gap between two publishes, ms.
    pub gap_ms: u64,
    /// Seed of graph, keys, authors.
    pub seed: u64,
}

impl Setup {
    /// Issue 4's set-up: 20 nodes, degree 6, 100 items of 200 bytes.
    pub fn issue4() -> Setup {
        Setup {
            nodes: 20,
            degree: 6,
            items: 100,
            text_bytes: 200,
            gap_ms: 200,
            seed: 4,
        }
    }

    /// The scenario: public items with the full hop limit, so every node
    /// is entitled to every item, on 20 ms links without loss or faults.
    pub fn scenario(&self) -> Scenario {
        let publish_ms = self.gap_ms * self.items as u64;
        let duration_ms = publish_ms + 60_000;
        Scenario {
            name: format!("redundancy-{}x{}", self.nodes, self.degree),
            seed: self.seed,
            duration_ms,
            heal_ms: 0,
            sample_ms: None,
            nodes: Nodes {
                count: self.nodes,
                phone_share: 0.0,
                phones: vec![],
            },
            graph: GraphSpec::RandomRegular {
                degree: self.degree,
            },
            groups: vec![],
            items: ItemsSpec {
                count: self.items,
                start_ms: 1_000,
                end_ms: 1_000 + publish_ms,
                text_bytes: self.text_bytes,
                max_hops: porfiry_protocol::limits::MAX_HOPS,
                audience: AudienceMix::default(),
                authors: vec![],
            },
            links: Links {
                server: LinkSpec {
                    latency: Latency::Fixed { ms: 20 },
                    loss: 0.0,
                    bandwidth_kbps: 0,
                    reorder: false,
                },
                phone: None,
            },
            faults: Faults::default(),
            engine: EngineOverrides::default(),
            club: None,
        }
    }
}

/// Payload copies received per node per item by our engine.
#[derive(Debug, Clone, PartialEq)]
pub struct Figures {
    /// Envelopes received by all nodes, duplicates included.
    pub copies: u64,
    /// (item, receiving node) pairs delivered.
    pub deliveries: u64,
    /// (item, receiving node) pairs due.
    pub due: u64,
    /// `copies / deliveries`.
    pub per_node_per_item: f64,
    /// Mean frame bytes received per node per item.
    pub wire_bytes_per_node_per_item: f64,
}

/// Runs our engine on `world` (built from `setup.scenario()`).
pub fn ours(setup: &Setup, world: &World) -> Result<Figures, SimError> {
    let scenario = setup.scenario();
    let outcome = run_outcome(&scenario, setup.seed, world)?;
    let r = &outcome.report;
    let pairs = r.delivery.held_at_end.max(1) as f64;
    Ok(Figures {
        copies: r.copies.total,
        deliveries: r.delivery.held_at_end,
        due: r.delivery.entitled_pairs,
        per_node_per_item: r.copies.total as f64 / pairs,
        wire_bytes_per_node_per_item: r.bytes.wire_total as f64 / pairs,
    })
}

/// Builds the world of `setup` (graph, keys, signed items).
pub fn world(setup: &Setup) -> Result<World, SimError> {
    World::build(&setup.scenario(), setup.seed)
}

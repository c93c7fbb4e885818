//! The fault plan: every partition window, phone offline spell and
//! crash-restart of a run, drawn up front from the seed and ending by
//! `heal_ms`, as a time-ordered list the simulation replays.

use std::collections::BTreeSet;

use rand::Rng;
use rand::seq::index::sample;
use rand_distr::{Distribution, Exp1};
use serde::Serialize;

use crate::rng::{Stream, fork};
use crate::scenario::Scenario;

/// One fault transition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum FaultEvent {
    /// Partition `p` begins: links across its cut go down.
    PartitionStart(usize),
    /// Partition `p` heals.
    PartitionEnd(usize),
    /// Blackhole `b` starts dropping every message on its links.
    BlackholeStart(usize),
    /// Blackhole `b` ends.
    BlackholeEnd(usize),
    /// A phone loses its network.
    Offline(usize),
    /// The phone is back.
    Online(usize),
    /// A node's process dies; its storage survives.
    Crash(usize),
    /// The node starts again from its storage.
    Restart(usize),
}

/// How many faults of each kind a plan injects.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FaultCounts {
    /// Partition windows.
    pub partitions: usize,
    /// Phone offline spells.
    pub churn_offline: usize,
    /// Crash-restarts.
    pub crashes: usize,
    /// Windows of total loss on chosen links.
    pub blackholes: usize,
}

impl FaultCounts {
    /// All planned faults together.
    pub fn total(&self) -> usize {
        self.partitions + self.churn_offline + self.crashes + self.blackholes
    }
}

/// A window of virtual time during which some fault held, for the plot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Window {
    /// Start, virtual ms.
    pub start_ms: u64,
    /// End, virtual ms.
    pub end_ms: u64,
}

/// Every fault of a run.
#[derive(Debug, Clone, Default)]
pub struct FaultPlan {
    /// Transitions in time order (ties keep plan order).
    pub events: Vec<(u64, FaultEvent)>,
    /// The cut-off side of each partition.
    pub sides: Vec<BTreeSet<usize>>,
    /// The links (as `(a, b)`, `a < b`) of each blackhole.
    pub blackhole_links: Vec<BTreeSet<(usize, usize)>>,
    /// What was planned.
    pub counts: FaultCounts,
    /// Partition windows, for the plot.
    pub partition_windows: Vec<Window>,
}

impl FaultPlan {
    /// Draws the faults of `scenario` under `seed` for nodes whose phone
    /// flags are `phones`.
    pub fn draw(scenario: &Scenario, seed: u64, phones: &[bool]) -> FaultPlan {
        let n = phones.len();
        let mut plan = FaultPlan::default();
        let mut rng = fork(seed, Stream::Faults);
        for (p, spec) in scenario.faults.partitions.iter().enumerate() {
            let side: BTreeSet<usize> = if spec.nodes.is_empty() {
                let count = ((spec.share * n as f64).round() as usize).clamp(1, n - 1);
                sample(&mut rng, n, count).into_iter().collect()
            } else {
                spec.nodes.iter().copied().collect()
            };
            plan.sides.push(side);
            plan.events
                .push((spec.start_ms, FaultEvent::PartitionStart(p)));
            plan.events.push((spec.end_ms, FaultEvent::PartitionEnd(p)));
            plan.partition_windows.push(Window {
                start_ms: spec.start_ms,
                end_ms: spec.end_ms,
            });
            plan.counts.partitions += 1;
        }
        if let Some(crash) = &scenario.faults.crashes {
            let latest = scenario.heal_ms.saturating_sub(crash.downtime_ms);
            for _ in 0..crash.count {
                let node = rng.gen_range(0..n);
                let at = rng.gen_range(0..=latest);
                plan.events.push((at, FaultEvent::Crash(node)));
                plan.events
                    .push((at + crash.downtime_ms, FaultEvent::Restart(node)));
                plan.counts.crashes += 1;
            }
        }
        for (b, spec) in scenario.faults.blackholes.iter().enumerate() {
            plan.blackhole_links.push(
                spec.links
                    .iter()
                    .map(|[x, y]| ((*x).min(*y), (*x).max(*y)))
                    .collect(),
            );
            plan.events
                .push((spec.start_ms, FaultEvent::BlackholeStart(b)));
            plan.events.push((spec.end_ms, FaultEvent::BlackholeEnd(b)));
            plan.counts.blackholes += 1;
        }
        for c in &scenario.faults.crash_at {
            plan.events.push((c.at_ms, FaultEvent::Crash(c.node)));
            plan.events
                .push((c.at_ms + c.downtime_ms, FaultEvent::Restart(c.node)));
            plan.counts.crashes += 1;
        }
        if let Some(churn) = &scenario.faults.churn {
            for (node, _) in phones.iter().enumerate().filter(|(_, p)| **p) {
                let mut rng = fork(seed, Stream::Churn(node));
                let mut t = spell(&mut rng, churn.mean_online_ms);
                while t < scenario.heal_ms {
                    let back = (t + spell(&mut rng, churn.mean_offline_ms)).min(scenario.heal_ms);
                    plan.events.push((t, FaultEvent::Offline(node)));
                    plan.events.push((back, FaultEvent::Online(node)));
                    plan.counts.churn_offline += 1;
                    t = back + spell(&mut rng, churn.mean_online_ms);
                }
            }
        }
        plan.events.sort_by_key(|(t, _)| *t);
        plan
    }
}

/// An exponentially distributed spell of mean `mean_ms`, at least 1 ms.
fn spell(rng: &mut impl Rng, mean_ms: u64) -> u64 {
    let unit: f64 = Exp1.sample(rng);
    ((unit * mean_ms as f64).round() as u64).max(1)
}

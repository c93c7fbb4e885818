//! Scaling a scenario from the command line (`mesh-sim run --nodes N
//! --items N --duration-ms MS`): the same workload shape at another size,
//! checked again before it runs.
//!
//! - `--nodes N` changes the node count of a random graph (the degree stays,
//!   so each node keeps its friend count); groups drawn by `size` and the
//!   number of random crashes grow or shrink in proportion; shares (phones,
//!   partitions) stay shares. Hand-placed indices (phones, group members,
//!   partition nodes, crash_at, blackholes) are kept and must still exist.
//! - `--items N` sets how many items are published (the publishing window
//!   stays); without it the item count is the scenario's own, so a bigger
//!   network carries the same items further instead of more items.
//! - `--duration-ms MS` stretches or squeezes the whole timeline (publishing
//!   window, faults, heal time, churn spells, crash downtimes, samples) by
//!   `MS / duration_ms`, so every fault still heals before the end and the
//!   delivery figures stay meaningful. Engine timers are not scaled: they are
//!   the real node's.

use crate::error::SimError;
use crate::scenario::{GraphSpec, Scenario};

fn invalid(field: &'static str, detail: impl Into<String>) -> SimError {
    SimError::InvalidScenario {
        field,
        detail: detail.into(),
    }
}

/// `value × num / den`, rounded to the nearest integer, in u128 so no
/// product overflows.
fn scale_u64(value: u64, num: u64, den: u64) -> u64 {
    let scaled = (u128::from(value) * u128::from(num) + u128::from(den) / 2) / u128::from(den);
    u64::try_from(scaled).unwrap_or(u64::MAX)
}

fn scale_usize(value: usize, num: usize, den: usize) -> usize {
    let v = scale_u64(value as u64, num as u64, den as u64);
    usize::try_from(v).unwrap_or(usize::MAX)
}

impl Scenario {
    /// This scenario with `nodes` nodes (see the module comment for what
    /// scales with it), checked.
    pub fn with_nodes(&self, nodes: usize) -> Result<Scenario, SimError> {
        if matches!(self.graph, GraphSpec::Explicit { .. }) {
            return Err(invalid(
                "graph",
                "--nodes cannot scale an explicit edge list; use a random_regular or complete graph",
            ));
        }
        let old = self.nodes.count;
        let mut s = self.clone();
        s.nodes.count = nodes;
        for g in &mut s.groups {
            if let Some(size) = &mut g.size {
                *size = scale_usize(*size, nodes, old).max(2).min(nodes);
            }
        }
        if let Some(c) = &mut s.faults.crashes
            && c.count > 0
        {
            c.count = scale_usize(c.count, nodes, old).max(1);
        }
        s.validate()?;
        Ok(s)
    }

    /// This scenario publishing `items` items in its own window, checked.
    pub fn with_items(&self, items: usize) -> Result<Scenario, SimError> {
        let mut s = self.clone();
        s.items.count = items;
        s.validate()?;
        Ok(s)
    }

    /// This scenario with its whole timeline scaled to `duration_ms` (see
    /// the module comment), checked.
    pub fn with_duration(&self, duration_ms: u64) -> Result<Scenario, SimError> {
        let (num, den) = (duration_ms, self.duration_ms);
        let t = |v: u64| scale_u64(v, num, den);
        let mut s = self.clone();
        s.duration_ms = duration_ms;
        s.heal_ms = t(s.heal_ms);
        s.sample_ms = s.sample_ms.map(t);
        s.items.start_ms = t(s.items.start_ms);
        s.items.end_ms = t(s.items.end_ms);
        for p in &mut s.faults.partitions {
            (p.start_ms, p.end_ms) = (t(p.start_ms), t(p.end_ms));
        }
        for b in &mut s.faults.blackholes {
            (b.start_ms, b.end_ms) = (t(b.start_ms), t(b.end_ms));
        }
        for c in &mut s.faults.crash_at {
            (c.at_ms, c.downtime_ms) = (t(c.at_ms), t(c.downtime_ms).max(1));
        }
        if let Some(c) = &mut s.faults.churn {
            c.mean_online_ms = t(c.mean_online_ms).max(1);
            c.mean_offline_ms = t(c.mean_offline_ms).max(1);
        }
        if let Some(c) = &mut s.faults.crashes {
            c.downtime_ms = t(c.downtime_ms).max(1);
        }
        s.validate()?;
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn city() -> Scenario {
        let text = include_str!("../scenarios/city.toml");
        Scenario::from_toml(text).expect("the shipped city scenario parses")
    }

    #[test]
    fn nodes_scale_counts_and_keep_shares() {
        let s = city().with_nodes(5_000).expect("5,000 nodes is valid");
        assert_eq!(s.nodes.count, 5_000);
        assert_eq!(s.nodes.phone_share, 0.2);
        assert_eq!(
            s.groups[0].size,
            Some(1_000),
            "40 of 200 becomes 1,000 of 5,000"
        );
        assert_eq!(s.faults.crashes.as_ref().map(|c| c.count), Some(250));
        assert_eq!(s.items.count, 1_000, "the item count is the scenario's own");
        assert_eq!(s.graph, city().graph, "each node keeps its degree");
    }

    #[test]
    fn nodes_refuse_what_cannot_scale() {
        let mut explicit = city();
        explicit.graph = GraphSpec::Explicit {
            edges: vec![[0, 1]],
        };
        let e = explicit
            .with_nodes(10)
            .expect_err("an edge list cannot scale");
        assert!(e.to_string().contains("explicit edge list"), "{e}");
        let e = city().with_nodes(1).expect_err("one node is no network");
        assert!(e.to_string().contains("nodes.count"), "{e}");
        let e = city()
            .with_nodes(crate::limits::MAX_NODES + 1)
            .expect_err("above the limit");
        assert!(e.to_string().contains("nodes.count"), "{e}");
        let mut placed = city();
        placed.nodes.phones = vec![150];
        let e = placed.with_nodes(100).expect_err("phone 150 is gone");
        assert!(e.to_string().contains("nodes.phones"), "{e}");
    }

    #[test]
    fn items_set_the_count_in_the_same_window() {
        let s = city().with_items(5_000).expect("valid");
        assert_eq!(s.items.count, 5_000);
        assert_eq!((s.items.start_ms, s.items.end_ms), (0, 7_000_000));
        let e = city()
            .with_items(crate::limits::MAX_ITEMS + 1)
            .expect_err("above the limit");
        assert!(e.to_string().contains("items"), "{e}");
    }

    #[test]
    fn duration_scales_the_whole_timeline() {
        let s = city().with_duration(3_600_000).expect("one hour is valid");
        assert_eq!(s.duration_ms, 3_600_000);
        assert_eq!(s.heal_ms, 2_400_000);
        assert_eq!(s.items.end_ms, 2_333_333);
        let p = &s.faults.partitions[0];
        assert_eq!((p.start_ms, p.end_ms), (400_000, 800_000));
        let churn = s.faults.churn.as_ref().expect("city churns");
        assert_eq!(
            (churn.mean_online_ms, churn.mean_offline_ms),
            (400_000, 133_333)
        );
        assert_eq!(
            s.faults.crashes.as_ref().map(|c| c.downtime_ms),
            Some(300_000)
        );
        let e = city().with_duration(0).expect_err("no time is no run");
        assert!(e.to_string().contains("duration_ms"), "{e}");
    }
}

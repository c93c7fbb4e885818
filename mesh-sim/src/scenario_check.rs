//! Checks a scenario before it runs (every field the simulator relies on,
//! with an error naming the field), and shrinks one for quick tests.

use crate::error::SimError;
use crate::limits::{MAX_DURATION_MS, MAX_ITEMS, MAX_NODES};
use crate::scenario::{GraphSpec, Latency, LinkSpec, Scenario};

fn invalid(field: &'static str, detail: impl Into<String>) -> SimError {
    SimError::InvalidScenario {
        field,
        detail: detail.into(),
    }
}

/// A ring's (or small world's) degree: even, below the node count.
fn ring_degree(degree: usize, n: usize) -> Result<(), SimError> {
    if degree < 2 || degree >= n || degree % 2 == 1 {
        Err(invalid(
            "graph.degree",
            format!("must be even and in 2..{n}"),
        ))
    } else {
        Ok(())
    }
}

impl Scenario {
    /// Checks every field the simulator relies on; the error names the
    /// field and what would be accepted.
    pub fn validate(&self) -> Result<(), SimError> {
        let n = self.nodes.count;
        if !(2..=MAX_NODES).contains(&n) {
            return Err(invalid(
                "nodes.count",
                format!("{n} is not in 2..={MAX_NODES}"),
            ));
        }
        if !(0.0..=1.0).contains(&self.nodes.phone_share) {
            return Err(invalid("nodes.phone_share", "must be between 0 and 1"));
        }
        if let Some(&bad) = self.nodes.phones.iter().find(|&&p| p >= n) {
            return Err(invalid(
                "nodes.phones",
                format!("node {bad} does not exist"),
            ));
        }
        if self.duration_ms == 0 || self.duration_ms > MAX_DURATION_MS {
            return Err(invalid(
                "duration_ms",
                format!("must be in 1..={MAX_DURATION_MS}"),
            ));
        }
        if self.heal_ms > self.duration_ms {
            return Err(invalid("heal_ms", "must not be after duration_ms"));
        }
        self.validate_graph()?;
        self.validate_groups()?;
        self.validate_items()?;
        validate_link("links.server", &self.links.server)?;
        if let Some(phone) = &self.links.phone {
            validate_link("links.phone", phone)?;
        }
        self.validate_faults()
    }

    fn validate_graph(&self) -> Result<(), SimError> {
        let n = self.nodes.count;
        match &self.graph {
            GraphSpec::Complete => Ok(()),
            GraphSpec::RandomRegular { degree } => {
                if *degree == 0 || *degree >= n {
                    Err(invalid("graph.degree", format!("must be in 1..{n}")))
                } else if (degree * n) % 2 == 1 {
                    Err(invalid(
                        "graph.degree",
                        format!("degree × nodes ({degree} × {n}) must be even"),
                    ))
                } else {
                    Ok(())
                }
            }
            GraphSpec::Ring { degree } => ring_degree(*degree, n),
            GraphSpec::SmallWorld { degree, rewire } => {
                ring_degree(*degree, n)?;
                if (0.0..=1.0).contains(rewire) {
                    Ok(())
                } else {
                    Err(invalid(
                        "graph.rewire",
                        format!("{rewire} is not a probability in 0..=1"),
                    ))
                }
            }
            GraphSpec::Clusters { count, bridges } => {
                if !(2..=n / 2).contains(count) {
                    Err(invalid(
                        "graph.count",
                        format!("must be in 2..={} (two nodes a cluster at least)", n / 2),
                    ))
                } else if !(1..=n / count).contains(bridges) {
                    Err(invalid(
                        "graph.bridges",
                        format!("must be in 1..={} (the smallest cluster's size)", n / count),
                    ))
                } else {
                    Ok(())
                }
            }
            GraphSpec::Explicit { edges } => {
                match edges.iter().find(|[a, b]| a == b || *a >= n || *b >= n) {
                    Some([a, b]) => Err(invalid(
                        "graph.edges",
                        format!("edge [{a}, {b}] is a loop or names a missing node"),
                    )),
                    None if edges.is_empty() => Err(invalid("graph.edges", "no edges")),
                    None => Ok(()),
                }
            }
        }
    }

    fn validate_groups(&self) -> Result<(), SimError> {
        let n = self.nodes.count;
        for g in &self.groups {
            if !porfiry_protocol::item::audience::valid_group_name(&g.name) {
                return Err(invalid(
                    "groups.name",
                    format!("{:?}: 1 to 32 characters of a-z, 0-9, '-' or '_'", g.name),
                ));
            }
            if g.members.is_empty() == g.size.is_none() {
                return Err(invalid(
                    "groups",
                    format!("group {}: give exactly one of `members` or `size`", g.name),
                ));
            }
            if let Some(&bad) = g.members.iter().find(|&&m| m >= n) {
                return Err(invalid(
                    "groups.members",
                    format!("node {bad} does not exist"),
                ));
            }
            if g.size.is_some_and(|s| s < 2 || s > n) {
                return Err(invalid("groups.size", format!("must be in 2..={n}")));
            }
        }
        Ok(())
    }

    fn validate_items(&self) -> Result<(), SimError> {
        let it = &self.items;
        if it.count == 0 || it.count > MAX_ITEMS {
            return Err(invalid(
                "items.count",
                format!("must be in 1..={MAX_ITEMS}"),
            ));
        }
        if it.start_ms > it.end_ms || it.end_ms > self.duration_ms {
            return Err(invalid(
                "items.end_ms",
                "need start_ms <= end_ms <= duration_ms",
            ));
        }
        if it.text_bytes == 0 || it.text_bytes > porfiry_protocol::limits::MAX_TEXT_BYTES {
            return Err(invalid(
                "items.text_bytes",
                format!(
                    "must be in 1..={}",
                    porfiry_protocol::limits::MAX_TEXT_BYTES
                ),
            ));
        }
        if it.max_hops == 0 || it.max_hops > porfiry_protocol::limits::MAX_HOPS {
            return Err(invalid(
                "items.max_hops",
                format!("must be in 1..={}", porfiry_protocol::limits::MAX_HOPS),
            ));
        }
        if let Some(&bad) = it.authors.iter().find(|&&x| x >= self.nodes.count) {
            return Err(invalid(
                "items.authors",
                format!("node {bad} does not exist"),
            ));
        }
        let a = &it.audience;
        let weights = [a.public, a.friends, a.group, a.peer, a.club];
        if weights.iter().any(|w| !w.is_finite() || *w < 0.0) || weights.iter().sum::<f64>() <= 0.0
        {
            return Err(invalid(
                "items.audience",
                "weights must be non-negative and not all zero",
            ));
        }
        match &self.club {
            None if a.club > 0.0 => {
                return Err(invalid(
                    "items.audience.club",
                    "club items need a [club] section",
                ));
            }
            Some(c) if c.members == 0 || c.members > self.nodes.count => {
                return Err(invalid(
                    "club.members",
                    format!("1 to {} (the node count)", self.nodes.count),
                ));
            }
            _ => {}
        }
        if a.group > 0.0 && self.groups.is_empty() {
            return Err(invalid(
                "items.audience.group",
                "group items need at least one [[groups]] entry",
            ));
        }
        Ok(())
    }

    fn validate_faults(&self) -> Result<(), SimError> {
        let n = self.nodes.count;
        for p in &self.faults.partitions {
            if p.start_ms >= p.end_ms || p.end_ms > self.heal_ms {
                return Err(invalid(
                    "faults.partitions",
                    "need start_ms < end_ms <= heal_ms",
                ));
            }
            if !(0.0..1.0).contains(&p.share) {
                return Err(invalid("faults.partitions.share", "must be in [0, 1)"));
            }
            if p.nodes.is_empty() == (p.share == 0.0) {
                return Err(invalid(
                    "faults.partitions",
                    "give exactly one of `share` or `nodes`",
                ));
            }
            if let Some(&bad) = p.nodes.iter().find(|&&x| x >= n) {
                return Err(invalid(
                    "faults.partitions.nodes",
                    format!("node {bad} does not exist"),
                ));
            }
        }
        if let Some(c) = &self.faults.churn
            && (c.mean_online_ms == 0 || c.mean_offline_ms == 0)
        {
            return Err(invalid("faults.churn", "mean spells must be above 0 ms"));
        }
        if let Some(c) = &self.faults.crashes
            && c.count > 0
            && (c.downtime_ms == 0 || c.downtime_ms >= self.heal_ms)
        {
            return Err(invalid(
                "faults.crashes.downtime_ms",
                "must be above 0 and below heal_ms",
            ));
        }
        for b in &self.faults.blackholes {
            if b.start_ms >= b.end_ms || b.end_ms > self.heal_ms {
                return Err(invalid(
                    "faults.blackholes",
                    "need start_ms < end_ms <= heal_ms",
                ));
            }
            if let Some([x, y]) = b.links.iter().find(|[x, y]| x == y || *x >= n || *y >= n) {
                return Err(invalid(
                    "faults.blackholes.links",
                    format!("link [{x}, {y}] is a loop or names a missing node"),
                ));
            }
        }
        for c in &self.faults.crash_at {
            if c.node >= n {
                return Err(invalid(
                    "faults.crash_at.node",
                    format!("node {} does not exist", c.node),
                ));
            }
            if c.downtime_ms == 0 || c.at_ms.saturating_add(c.downtime_ms) > self.heal_ms {
                return Err(invalid(
                    "faults.crash_at",
                    "need downtime_ms > 0 and at_ms + downtime_ms <= heal_ms",
                ));
            }
        }
        Ok(())
    }

    /// A smaller copy for quick tests: at most `max_nodes` nodes (random
    /// graphs only; explicit ones are kept) and `max_items` items; group
    /// sizes and explicit member lists shrink to fit. Faults are kept.
    pub fn shrunk(&self, max_nodes: usize, max_items: usize) -> Scenario {
        let mut s = self.clone();
        if !matches!(s.graph, GraphSpec::Explicit { .. }) && s.nodes.count > max_nodes {
            let n = max_nodes;
            s.nodes.count = n;
            s.nodes.phones.retain(|&p| p < n);
            match &mut s.graph {
                GraphSpec::RandomRegular { degree } => {
                    *degree = (*degree).min(n - 1);
                    if (*degree * n) % 2 == 1 {
                        *degree -= 1;
                    }
                }
                GraphSpec::Ring { degree } | GraphSpec::SmallWorld { degree, .. } => {
                    *degree = (*degree).min(n - 1) / 2 * 2;
                }
                GraphSpec::Clusters { count, bridges } => {
                    *count = (*count).min(n / 2);
                    *bridges = (*bridges).min(n / *count);
                }
                GraphSpec::Complete | GraphSpec::Explicit { .. } => {}
            }
            for g in &mut s.groups {
                g.members.retain(|&m| m < n);
                if let Some(size) = &mut g.size {
                    *size = (*size).clamp(2, n);
                }
            }
            s.faults.crash_at.retain(|c| c.node < n);
            for b in &mut s.faults.blackholes {
                b.links.retain(|[x, y]| *x < n && *y < n);
            }
            for p in &mut s.faults.partitions {
                p.nodes.retain(|&x| x < n);
                if p.nodes.is_empty() && p.share == 0.0 {
                    p.share = 0.25;
                }
            }
        }
        let n = s.nodes.count;
        s.items.authors.retain(|&a| a < n);
        s.items.count = s.items.count.min(max_items);
        s
    }
}

fn validate_link(field: &'static str, l: &LinkSpec) -> Result<(), SimError> {
    if !(0.0..1.0).contains(&l.loss) {
        return Err(invalid(field, "loss must be in [0, 1)"));
    }
    match l.latency {
        Latency::Fixed { .. } => Ok(()),
        Latency::Uniform { min_ms, max_ms } if min_ms <= max_ms => Ok(()),
        Latency::Uniform { .. } => Err(invalid(field, "latency min_ms must not exceed max_ms")),
        Latency::Lognormal { median_ms, sigma }
            if median_ms > 0.0 && median_ms.is_finite() && (0.0..=3.0).contains(&sigma) =>
        {
            Ok(())
        }
        Latency::Lognormal { .. } => Err(invalid(
            field,
            "lognormal latency needs median_ms > 0 and sigma in [0, 3]",
        )),
    }
}

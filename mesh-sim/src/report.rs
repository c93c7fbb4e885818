//! The result of a run as `result.json` holds it: delivery ratio, delivery
//! delays, payload copies and bytes per node, faults injected, messages and
//! engine events, plus the one-paragraph summary the CLI prints. Built only
//! from virtual-time facts, so the same seed gives the same bytes.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::faults::{FaultCounts, FaultPlan};
use crate::limits::MAX_LISTED_VIOLATIONS;
use crate::metrics::Metrics;
use crate::scenario::Scenario;
use crate::world::World;

/// Everything `Report::build` reads.
pub(crate) struct RunFacts<'a> {
    pub(crate) scenario: &'a Scenario,
    pub(crate) seed: u64,
    pub(crate) world: &'a World,
    pub(crate) plan: &'a FaultPlan,
    pub(crate) metrics: &'a Metrics,
    /// Per planned item, the nodes holding it at the end.
    pub(crate) held: &'a [BTreeSet<usize>],
    pub(crate) events: u64,
    pub(crate) stopped_early: bool,
    /// Wire bytes per item and club envelopes at non-members.
    pub(crate) clubs: &'a crate::clubs::ClubMeter,
}

/// The figures of one run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// Scenario name.
    pub scenario: String,
    /// The seed used.
    pub seed: u64,
    /// `git describe` of the code that ran; set by the caller.
    pub git_revision: String,
    /// Size of the run.
    pub setup: Setup,
    /// What arrived where.
    pub delivery: Delivery,
    /// How redundant the transfers were.
    pub copies: Copies,
    /// Bytes on the links.
    pub bytes: Bytes,
    /// Faults injected.
    pub faults: Faults,
    /// Messages by kind, lost and cut.
    pub messages: Messages,
    /// Engine events counted.
    pub engine: EngineEvents,
    /// Simulation events processed.
    pub sim_events: u64,
    /// True if the run hit `MAX_EVENTS` before `duration_ms`.
    pub stopped_early: bool,
    /// Club delivery and cost, in a club scenario.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub club: Option<crate::clubs::ClubFigures>,
}

/// Size of the run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Setup {
    /// Nodes.
    pub nodes: usize,
    /// Of which phones.
    pub phones: usize,
    /// Friendships.
    pub friendships: usize,
    /// Friendships that can connect (not phone–phone).
    pub links: usize,
    /// Items planned.
    pub items: usize,
    /// Virtual run length.
    pub duration_ms: u64,
    /// When faults end.
    pub heal_ms: u64,
}

/// Delivery figures. Pairs are (item, entitled node), the author excluded.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Delivery {
    /// Items published (a crashed author publishes on restart).
    pub published: u64,
    /// Entitled pairs of all planned items.
    pub entitled_pairs: u64,
    /// Entitled pairs whose node holds the item at the end.
    pub held_at_end: u64,
    /// `held_at_end / entitled_pairs` (1 when nothing is due).
    pub ratio: f64,
    /// Entitled pairs delivered by `heal_ms`.
    pub delivered_by_heal: u64,
    /// Stores of an item at a node not entitled to it (must be 0).
    pub non_entitled_deliveries: u64,
    /// The first few of those, described.
    pub violations: Vec<String>,
    /// The first few entitled pairs not held at the end, described.
    pub missing: Vec<String>,
    /// Delay from publish to first store at an entitled node, ms.
    pub delay_ms: Percentiles,
    /// The same figures per audience kind (`public`, `friends`, `group`).
    pub by_audience: BTreeMap<String, AudienceDelivery>,
}

/// Delivery of one audience kind.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AudienceDelivery {
    /// Items of this kind.
    pub items: u64,
    /// Their entitled pairs.
    pub entitled_pairs: u64,
    /// Held at the end.
    pub held_at_end: u64,
    /// Ratio.
    pub ratio: f64,
}

/// Nearest-rank percentiles.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Percentiles {
    /// Samples.
    pub count: u64,
    /// Median.
    pub p50: u64,
    /// 90th.
    pub p90: u64,
    /// 99th.
    pub p99: u64,
    /// Largest.
    pub max: u64,
}

/// Payload copies: envelopes received, duplicates included.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Copies {
    /// All envelopes delivered.
    pub total: u64,
    /// Envelopes per first delivery: the redundancy (1.0 is ideal).
    pub per_delivery: f64,
    /// Mean envelopes received per node.
    pub per_node_mean: f64,
    /// Most envelopes received by one node.
    pub per_node_max: u64,
    /// Duplicates the engines reported dropping.
    pub duplicates_dropped: u64,
}

/// Bytes on the links.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bytes {
    /// Frame bytes delivered on all links.
    pub wire_total: u64,
    /// Envelope bytes inside delivered `Items` frames.
    pub payload_total: u64,
    /// Envelope bytes of first deliveries (the useful part).
    pub useful_payload: u64,
    /// `wire_total / useful_payload`.
    pub overhead_ratio: f64,
    /// Mean bytes a node sent.
    pub sent_per_node_mean: f64,
    /// Mean bytes a node received.
    pub received_per_node_mean: f64,
    /// Most bytes one node sent.
    pub sent_per_node_max: u64,
    /// Most bytes one node received.
    pub received_per_node_max: u64,
}

/// Faults injected.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Faults {
    /// Partition windows, phone offline spells and crash-restarts.
    pub planned: FaultCounts,
    /// Messages the link model dropped.
    pub messages_lost: u64,
    /// Planned faults plus lost messages.
    pub total: u64,
}

/// Message counts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Messages {
    /// Sent, by kind.
    pub sent: BTreeMap<String, u64>,
    /// Bytes sent, by kind (shows what the overhead is made of).
    pub bytes_sent: BTreeMap<String, u64>,
    /// Delivered to a running engine.
    pub delivered: u64,
    /// Lost by the link model.
    pub lost: u64,
    /// Dropped because their connection went down in flight.
    pub cut: u64,
    /// Frames that failed to encode or decode (must be 0).
    pub wire_errors: u64,
}

/// Engine events.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EngineEvents {
    /// Refusals by reason.
    pub rejected: BTreeMap<String, u64>,
    /// Wants nobody answered.
    pub want_gave_up: u64,
    /// Catch-up sessions finished.
    pub syncs_finished: u64,
    /// Catch-up sessions aborted.
    pub syncs_aborted: u64,
    /// Hop counts raised.
    pub hops_raised: u64,
    /// Messages from peers not connected.
    pub unknown_peer: u64,
}

fn ratio(num: u64, den: u64) -> f64 {
    if den == 0 {
        1.0
    } else {
        num as f64 / den as f64
    }
}

fn mean(values: &[u64]) -> f64 {
    if values.is_empty() {
        0.0
    } else {
        values.iter().sum::<u64>() as f64 / values.len() as f64
    }
}

impl Percentiles {
    /// Nearest-rank percentiles of `values` (all zero when empty).
    pub fn of(values: &[u64]) -> Percentiles {
        let mut v = values.to_vec();
        v.sort_unstable();
        let rank = |p: f64| -> u64 {
            if v.is_empty() {
                return 0;
            }
            let k = ((p * v.len() as f64).ceil() as usize).clamp(1, v.len());
            v[k - 1]
        };
        Percentiles {
            count: v.len() as u64,
            p50: rank(0.50),
            p90: rank(0.90),
            p99: rank(0.99),
            max: v.last().copied().unwrap_or(0),
        }
    }
}

impl Report {
    pub(crate) fn build(f: &RunFacts<'_>) -> Report {
        let (s, w, m) = (f.scenario, f.world, f.metrics);
        let mut entitled_pairs = 0u64;
        let mut held_at_end = 0u64;
        let mut useful_payload = 0u64;
        let mut by_audience: BTreeMap<String, AudienceDelivery> = BTreeMap::new();
        let mut missing = Vec::new();
        for (p, held) in w.items.iter().zip(f.held) {
            let room = MAX_LISTED_VIOLATIONS.saturating_sub(missing.len());
            for n in p.entitled.difference(held).take(room) {
                missing.push(format!(
                    "item {} ({}) by node {} published at {} ms: node {n} lacks it",
                    p.index, p.audience, p.author, p.at_ms
                ));
            }
            let got = p.entitled.intersection(held).count() as u64;
            let due = p.entitled.len() as u64;
            entitled_pairs += due;
            held_at_end += got;
            useful_payload += got * p.item.envelope_bytes().len() as u64;
            let kind = match &p.audience {
                porfiry_protocol::Audience::Group(_) => "group".to_owned(),
                porfiry_protocol::Audience::Peer(_) => "peer".to_owned(),
                porfiry_protocol::Audience::Club(_) => "club".to_owned(),
                other => other.to_string(),
            };
            let a = by_audience.entry(kind).or_insert(AudienceDelivery {
                items: 0,
                entitled_pairs: 0,
                held_at_end: 0,
                ratio: 1.0,
            });
            a.items += 1;
            a.entitled_pairs += due;
            a.held_at_end += got;
        }
        for a in by_audience.values_mut() {
            a.ratio = ratio(a.held_at_end, a.entitled_pairs);
        }
        let delivered_by_heal = m
            .samples
            .iter()
            .take_while(|x| x.time_ms <= s.heal_ms)
            .last()
            .map_or(0, |x| x.delivered);
        let messages_lost = m.messages_lost;
        Report {
            scenario: s.name.clone(),
            seed: f.seed,
            git_revision: "unknown".into(),
            setup: Setup {
                nodes: w.len(),
                phones: w.phones.iter().filter(|p| **p).count(),
                friendships: w.graph.edge_count(),
                links: w.links.edge_count(),
                items: w.items.len(),
                duration_ms: s.duration_ms,
                heal_ms: s.heal_ms,
            },
            delivery: Delivery {
                published: m.published,
                entitled_pairs,
                held_at_end,
                ratio: ratio(held_at_end, entitled_pairs),
                delivered_by_heal,
                non_entitled_deliveries: m.violations,
                violations: m.violation_list.clone(),
                missing,
                delay_ms: Percentiles::of(&m.delivery_ms),
                by_audience,
            },
            copies: Copies {
                total: m.copies_total,
                per_delivery: ratio(m.copies_total, m.delivered),
                per_node_mean: mean(&m.copies_per_node),
                per_node_max: m.copies_per_node.iter().copied().max().unwrap_or(0),
                duplicates_dropped: m.duplicates,
            },
            bytes: Bytes {
                wire_total: m.wire_bytes,
                payload_total: m.payload_bytes,
                useful_payload,
                overhead_ratio: ratio(m.wire_bytes, useful_payload),
                sent_per_node_mean: mean(&m.bytes_sent),
                received_per_node_mean: mean(&m.bytes_received),
                sent_per_node_max: m.bytes_sent.iter().copied().max().unwrap_or(0),
                received_per_node_max: m.bytes_received.iter().copied().max().unwrap_or(0),
            },
            faults: Faults {
                total: f.plan.counts.total() as u64 + messages_lost,
                planned: f.plan.counts.clone(),
                messages_lost,
            },
            messages: Messages {
                sent: m.by_kind.messages(),
                bytes_sent: m.by_kind.bytes(),
                delivered: m.messages_delivered,
                lost: m.messages_lost,
                cut: m.messages_cut,
                wire_errors: m.wire_errors,
            },
            engine: EngineEvents {
                rejected: m.rejected.clone(),
                want_gave_up: m.want_gave_up,
                syncs_finished: m.syncs_finished,
                syncs_aborted: m.syncs_aborted,
                hops_raised: m.hops_raised,
                unknown_peer: m.unknown_peer,
            },
            sim_events: f.events,
            stopped_early: f.stopped_early,
            club: crate::clubs::report(w, f.held, f.clubs),
        }
    }

    /// The result as pretty JSON (stable field order).
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string_pretty(self)
    }

    /// One paragraph for the terminal.
    pub fn summary(&self) -> String {
        let d = &self.delivery;
        format!(
            "{name} (seed {seed}): {nodes} nodes ({phones} phones), {items} items over {dur:.0} s virtual. \
             Delivered {held}/{due} entitled pairs (ratio {ratio:.4}), {by_heal} by heal at {heal:.0} s; \
             {viol} deliveries to non-entitled nodes. Delay p50 {p50} ms, p99 {p99} ms. \
             Payload copies per delivery {cpd:.3}; {sent:.0} B sent per node on average, \
             wire/useful payload {ovh:.2}. Faults: {parts} partitions, {churn} phone offline spells, \
             {crashes} crash-restarts, {lost} messages lost.",
            name = self.scenario,
            seed = self.seed,
            nodes = self.setup.nodes,
            phones = self.setup.phones,
            items = self.setup.items,
            dur = self.setup.duration_ms as f64 / 1000.0,
            held = d.held_at_end,
            due = d.entitled_pairs,
            ratio = d.ratio,
            by_heal = d.delivered_by_heal,
            heal = self.setup.heal_ms as f64 / 1000.0,
            viol = d.non_entitled_deliveries,
            p50 = d.delay_ms.p50,
            p99 = d.delay_ms.p99,
            cpd = self.copies.per_delivery,
            sent = self.bytes.sent_per_node_mean,
            ovh = self.bytes.overhead_ratio,
            parts = self.faults.planned.partitions,
            churn = self.faults.planned.churn_offline,
            crashes = self.faults.planned.crashes,
            lost = self.faults.messages_lost,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<u64> = (1..=100).collect();
        let p = Percentiles::of(&v);
        assert_eq!(
            (p.p50, p.p90, p.p99, p.max, p.count),
            (50, 90, 99, 100, 100)
        );
        let e = Percentiles::of(&[]);
        assert_eq!((e.p50, e.max, e.count), (0, 0, 0));
        assert_eq!(Percentiles::of(&[7]).p99, 7);
    }
}

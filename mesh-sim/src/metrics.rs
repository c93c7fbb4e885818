//! What a run counts while it goes: first deliveries and their delays,
//! deliveries to nodes not entitled, payload copies and bytes per node,
//! messages by kind, lost messages and the engine's events, plus the
//! time-series samples.

use std::collections::BTreeMap;

use porfiry_protocol::ItemId;
use porfiry_protocol::engine::{Event, RejectReason};
use porfiry_protocol::wire::WireMessage;
use rustc_hash::FxHashMap;
use serde::Serialize;

use crate::limits::MAX_LISTED_VIOLATIONS;
use crate::world::World;

/// One row of the time series.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sample {
    /// Virtual time, ms.
    pub time_ms: u64,
    /// Items published so far.
    pub published: u64,
    /// Entitled (item, node) pairs of the items published so far.
    pub entitled_due: u64,
    /// Of those, the pairs delivered so far.
    pub delivered: u64,
    /// `delivered / entitled_due` (1 when nothing is due).
    pub delivery_ratio: f64,
    /// Nodes running and online.
    pub nodes_up: u64,
    /// Connections up.
    pub links_up: u64,
    /// Bytes delivered on all links so far.
    pub wire_bytes: u64,
    /// Item envelopes delivered so far, duplicates included.
    pub payload_copies: u64,
    /// Messages lost so far.
    pub messages_lost: u64,
}

/// Counters of one run.
#[derive(Debug)]
pub struct Metrics {
    item_of: FxHashMap<ItemId, usize>,
    pub(crate) published_at: Vec<Option<u64>>,
    first_held: FxHashMap<(usize, usize), u64>,
    pub(crate) delivery_ms: Vec<u64>,
    pub(crate) delivered: u64,
    pub(crate) entitled_due: u64,
    pub(crate) published: u64,
    pub(crate) violations: u64,
    pub(crate) violation_list: Vec<String>,
    pub(crate) copies_per_node: Vec<u64>,
    pub(crate) copies_total: u64,
    pub(crate) bytes_sent: Vec<u64>,
    pub(crate) bytes_received: Vec<u64>,
    pub(crate) wire_bytes: u64,
    pub(crate) payload_bytes: u64,
    pub(crate) by_kind: KindCounts,
    pub(crate) messages_delivered: u64,
    pub(crate) messages_lost: u64,
    pub(crate) messages_cut: u64,
    pub(crate) wire_errors: u64,
    pub(crate) duplicates: u64,
    pub(crate) rejected: BTreeMap<String, u64>,
    pub(crate) want_gave_up: u64,
    pub(crate) syncs_finished: u64,
    pub(crate) syncs_aborted: u64,
    pub(crate) hops_raised: u64,
    pub(crate) unknown_peer: u64,
    pub(crate) samples: Vec<Sample>,
}

impl Metrics {
    /// Empty counters for `world`.
    pub fn new(world: &World) -> Metrics {
        let n = world.len();
        Metrics {
            item_of: world.items.iter().map(|p| (p.item.id(), p.index)).collect(),
            published_at: vec![None; world.items.len()],
            first_held: FxHashMap::default(),
            delivery_ms: Vec::new(),
            delivered: 0,
            entitled_due: 0,
            published: 0,
            violations: 0,
            violation_list: Vec::new(),
            copies_per_node: vec![0; n],
            copies_total: 0,
            bytes_sent: vec![0; n],
            bytes_received: vec![0; n],
            wire_bytes: 0,
            payload_bytes: 0,
            by_kind: KindCounts::default(),
            messages_delivered: 0,
            messages_lost: 0,
            messages_cut: 0,
            wire_errors: 0,
            duplicates: 0,
            rejected: BTreeMap::new(),
            want_gave_up: 0,
            syncs_finished: 0,
            syncs_aborted: 0,
            hops_raised: 0,
            unknown_peer: 0,
            samples: Vec::new(),
        }
    }

    /// Item `index` was published at `now`.
    pub(crate) fn on_publish(&mut self, world: &World, index: usize, now: u64) {
        if self.published_at[index].is_none() {
            self.published_at[index] = Some(now);
            self.published += 1;
            self.entitled_due += world.items[index].entitled.len() as u64;
        }
    }

    /// Node `node` stored item `id` at `now`.
    pub(crate) fn on_store(&mut self, world: &World, node: usize, id: &ItemId, now: u64) {
        let Some(&index) = self.item_of.get(id) else {
            return;
        };
        let planned = &world.items[index];
        if planned.author == node {
            return;
        }
        if !planned.entitled.contains(&node) {
            self.violations += 1;
            if self.violation_list.len() < MAX_LISTED_VIOLATIONS {
                self.violation_list.push(format!(
                    "item {index} ({}) by node {} stored at node {node}",
                    planned.audience, planned.author
                ));
            }
            return;
        }
        if let std::collections::hash_map::Entry::Vacant(e) = self.first_held.entry((index, node)) {
            e.insert(now);
            self.delivered += 1;
            let since = self.published_at[index].unwrap_or(planned.at_ms);
            self.delivery_ms.push(now.saturating_sub(since));
        }
    }

    /// The item index of `id`, if it is one of the planned items.
    pub(crate) fn item_index(&self, id: &ItemId) -> Option<usize> {
        self.item_of.get(id).copied()
    }

    /// Counts an engine event.
    pub(crate) fn on_event(&mut self, event: &Event) {
        match event {
            Event::Duplicate { .. } => self.duplicates += 1,
            Event::Rejected { reason, .. } => {
                *self.rejected.entry(reason_name(reason)).or_default() += 1;
            }
            Event::WantGaveUp { .. } => self.want_gave_up += 1,
            Event::SyncFinished { .. } => self.syncs_finished += 1,
            Event::SyncAborted { .. } => self.syncs_aborted += 1,
            Event::HopsRaised { .. } => self.hops_raised += 1,
            Event::UnknownPeer { .. } => self.unknown_peer += 1,
            _ => {}
        }
    }
}

/// A stable short name for a reject reason.
fn reason_name(reason: &RejectReason) -> String {
    match reason {
        RejectReason::Invalid(_) => "invalid",
        RejectReason::Expired => "expired",
        RejectReason::Withdrawn => "withdrawn",
        RejectReason::NotFromAuthor => "not_from_author",
        RejectReason::NotAddressedToUs => "not_addressed_to_us",
        RejectReason::NoHopsLeft => "no_hops_left",
        RejectReason::OwnItem => "own_item",
        RejectReason::NotOurs => "not_ours",
        RejectReason::NotAClubMember => "not_a_club_member",
        RejectReason::OverQuota => "over_quota",
        RejectReason::LinkRate => "link_rate",
        RejectReason::BadClubChange(_) => "bad_club_change",
        RejectReason::NotADevice => "not_a_device",
        RejectReason::BadDeviceLink(_) => "bad_device_link",
    }
    .to_owned()
}

/// Messages and bytes sent per message kind: one slot per `WireMessage`
/// variant, as this is counted for every simulated frame (a map keyed by
/// the kind's name cost a string comparison per level).
#[derive(Debug, Default)]
pub(crate) struct KindCounts {
    /// Per slot: the kind's name once seen, messages, bytes.
    slots: [(Option<&'static str>, u64, u64); 7],
}

impl KindCounts {
    /// Counts one message of `bytes` bytes.
    pub(crate) fn add(&mut self, message: &WireMessage, bytes: usize) {
        let slot = match message {
            WireMessage::Have { .. } => 0,
            WireMessage::Want { .. } => 1,
            WireMessage::Items { .. } => 2,
            WireMessage::SyncQuery { .. } => 3,
            WireMessage::SyncReply { .. } => 4,
            WireMessage::SyncDone { .. } => 5,
            WireMessage::SyncAbort { .. } => 6,
        };
        let s = &mut self.slots[slot];
        s.0 = Some(message.name());
        s.1 += 1;
        s.2 += bytes as u64;
    }

    /// Messages sent, by kind name (kinds never sent are absent).
    pub(crate) fn messages(&self) -> BTreeMap<String, u64> {
        self.seen()
            .map(|(name, n, _)| (name.to_owned(), n))
            .collect()
    }

    /// Bytes sent, by kind name (kinds never sent are absent).
    pub(crate) fn bytes(&self) -> BTreeMap<String, u64> {
        self.seen()
            .map(|(name, _, b)| (name.to_owned(), b))
            .collect()
    }

    fn seen(&self) -> impl Iterator<Item = (&'static str, u64, u64)> + '_ {
        self.slots
            .iter()
            .filter_map(|&(name, n, b)| Some((name?, n, b)))
    }
}

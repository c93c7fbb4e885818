//! Following one item through a run: every publish, store, message that
//! names it (sent, lost or delivered) and every fault, as lines of text in
//! virtual-time order. For finding out why an entitled node lacks an item.

use porfiry_protocol::ItemId;
use porfiry_protocol::wire::WireMessage;

use crate::faults::FaultEvent;

/// The trace of one item.
#[derive(Debug, Clone, Default)]
pub struct Trace {
    item: Option<ItemId>,
    /// The lines so far.
    pub lines: Vec<String>,
}

impl Trace {
    /// A trace of `item`, or an inactive one for `None`.
    pub fn of(item: Option<ItemId>) -> Trace {
        Trace {
            item,
            lines: Vec::new(),
        }
    }

    /// True if this trace follows `id`.
    pub fn follows(&self, id: &ItemId) -> bool {
        self.item.as_ref() == Some(id)
    }

    /// Records `what` happening to a message from `from` to `to` if the
    /// message names the traced item.
    pub fn message(&mut self, now: u64, what: &str, from: usize, to: usize, m: &WireMessage) {
        let Some(target) = self.item else {
            return;
        };
        let detail = match m {
            WireMessage::Have { items } => items
                .iter()
                .find(|a| a.id == target)
                .map(|a| format!("have (hops {})", a.hops)),
            WireMessage::Want { ids } => ids.contains(&target).then(|| "want".to_owned()),
            WireMessage::Items { session, items } => items
                .iter()
                .find(|i| ItemId::of_envelope(&i.envelope) == target)
                .map(|i| match session {
                    Some(s) => format!("items (hops {}, catch-up session {s})", i.hops),
                    None => format!("items (hops {})", i.hops),
                }),
            _ => None,
        };
        if let Some(d) = detail {
            self.lines.push(format!("{now} ms: {what} {from}→{to} {d}"));
        }
    }

    /// Records that `node` stored the item with `hops_left`.
    pub fn store(&mut self, now: u64, node: usize, from: Option<usize>, hops_left: u8) {
        let from = from.map_or("itself".to_owned(), |f| format!("node {f}"));
        self.lines.push(format!(
            "{now} ms: node {node} stores it from {from}, {hops_left} hops left"
        ));
    }

    /// Records a fault transition.
    pub fn fault(&mut self, now: u64, event: FaultEvent) {
        if self.item.is_some() {
            self.lines.push(format!("{now} ms: fault {event:?}"));
        }
    }

    /// Records a free-form line.
    pub fn note(&mut self, now: u64, text: impl std::fmt::Display) {
        if self.item.is_some() {
            self.lines.push(format!("{now} ms: {text}"));
        }
    }
}

//! What a driver feeds the engine: peers coming and going, messages
//! received (items already verified at the driver's edge), items published
//! here, and timer ticks. Also [`Inbound::from_wire`], the edge check that
//! turns a decoded wire message into an `Inbound` by batch-verifying its
//! envelopes.

use crate::error::ItemError;
use crate::item::batch::verify_batch;
use crate::item::id::ItemId;
use crate::item::unreadable::{Unreadable, unreadable};
use crate::item::verified::VerifiedItem;
use crate::wire::{Announce, WireItem, WireMessage};

/// One event for [`crate::engine::Engine::handle`].
#[derive(Debug, Clone)]
pub enum Input {
    /// A friend's connection is up. `groups` are the groups this node tagged
    /// the friend with. Sending it again for a connected friend updates its
    /// groups and reconciles at once.
    PeerConnected {
        /// The friend's peer id string.
        peer: String,
        /// Its groups (`family`, `club`, …).
        groups: Vec<String>,
    },
    /// A friend's connection is gone.
    PeerDisconnected {
        /// The friend's peer id string.
        peer: String,
    },
    /// A message from a connected friend.
    Received {
        /// Who sent it.
        peer: String,
        /// The message, envelopes verified.
        message: Inbound,
    },
    /// An item made on this node (signed by our key).
    Publish {
        /// The item.
        item: VerifiedItem,
    },
    /// The frames of one `Output::SendChunk` have all left: acknowledged by
    /// the friend's transport (`delivered`), or failed (the link broke, a
    /// frame was refused). The engine hands the driver the session's next
    /// chunk only after this, and sends `SyncDone` after the last one.
    ItemsDrained {
        /// The friend.
        peer: String,
        /// The session of the chunk.
        session: u64,
        /// The chunk's number, as given in `SendChunk`.
        chunk: u32,
        /// Envelopes actually packed and sent for it (items no longer in
        /// storage or over the envelope cap are skipped and not counted).
        sent: u32,
        /// False if any of its frames failed.
        delivered: bool,
    },
    /// The driver has handed over every `Publish` it had at hand (a run of
    /// our own items read at once): the push batch leaves now instead of
    /// after the batch delay, which is there to gather items that arrive
    /// one by one, not to hold back a run the driver already has whole.
    /// Harmless when nothing is queued.
    FlushPush,
    /// The timer asked for with `Output::WakeAt` fired (early or spurious
    /// ticks are harmless).
    Tick,
}

/// A received item and the hops its sender said it had left.
#[derive(Debug, Clone)]
pub struct ReceivedItem {
    /// The sender's hops left.
    pub hops: u8,
    /// The verified item.
    pub item: VerifiedItem,
}

/// A wire message after the driver's edge checks.
#[derive(Debug, Clone)]
pub enum Inbound {
    /// See [`WireMessage::Have`].
    Have(Vec<Announce>),
    /// See [`WireMessage::Want`].
    Want(Vec<ItemId>),
    /// See [`WireMessage::Items`]; envelopes that failed verification are
    /// listed in `invalid` (they still count toward a session's total).
    Items {
        /// The catch-up session, if any.
        session: Option<u64>,
        /// The envelopes that verified.
        items: Vec<ReceivedItem>,
        /// Why each other envelope was refused.
        invalid: Vec<ItemError>,
        /// Those of the refused envelopes that are a newer version's items
        /// (an unknown kind or field, signed by their author), as far as
        /// they can be read: the engine remembers them as declined, so they
        /// are not sent to us again (docs/protocol.md, "Mixed versions").
        unreadable: Vec<Unreadable>,
    },
    /// See [`WireMessage::SyncQuery`].
    SyncQuery {
        /// Session.
        session: u64,
        /// Range-sync frame.
        frame: Vec<u8>,
    },
    /// See [`WireMessage::SyncReply`].
    SyncReply {
        /// Session.
        session: u64,
        /// Range-sync frame.
        frame: Vec<u8>,
    },
    /// See [`WireMessage::SyncDone`].
    SyncDone {
        /// Session.
        session: u64,
        /// Items sent for it.
        sent: u32,
    },
    /// See [`WireMessage::SyncAbort`].
    SyncAbort {
        /// Session.
        session: u64,
        /// Why.
        reason: String,
    },
}

impl Inbound {
    /// Converts a decoded wire message, verifying every envelope of an
    /// `Items` message in one batch (`now_ms` refuses expired items).
    pub fn from_wire(message: WireMessage, now_ms: u64) -> Inbound {
        Inbound::from_wire_with(message, |envelopes| verify_batch(envelopes, now_ms))
    }

    /// [`Inbound::from_wire`] with the envelopes of an `Items` message
    /// checked by `verify` (result `i` for envelope `i`): a driver that
    /// spreads a large batch over several cores passes its own.
    pub fn from_wire_with(
        message: WireMessage,
        verify: impl FnOnce(&[&[u8]]) -> Vec<Result<VerifiedItem, ItemError>>,
    ) -> Inbound {
        match message {
            WireMessage::Have { items } => Inbound::Have(items),
            WireMessage::Want { ids } => Inbound::Want(ids),
            WireMessage::Items { session, items } => {
                let envelopes: Vec<&[u8]> = items.iter().map(|i| i.envelope.as_slice()).collect();
                let results = verify(&envelopes);
                Inbound::items(session, &items, results)
            }
            WireMessage::SyncQuery { session, frame } => Inbound::SyncQuery { session, frame },
            WireMessage::SyncReply { session, frame } => Inbound::SyncReply { session, frame },
            WireMessage::SyncDone { session, sent } => Inbound::SyncDone { session, sent },
            WireMessage::SyncAbort { session, reason } => Inbound::SyncAbort { session, reason },
        }
    }

    /// An `Items` input from a frame's items and the verdict on each
    /// envelope, in the same order (`verify_batch`'s results, or an edge
    /// that checked some envelopes earlier, as mesh-sim's does).
    pub fn items(
        session: Option<u64>,
        wire: &[WireItem],
        results: impl IntoIterator<Item = Result<VerifiedItem, ItemError>>,
    ) -> Inbound {
        let mut ok = Vec::with_capacity(wire.len());
        let mut invalid = Vec::new();
        let mut unread = Vec::new();
        for (wire, result) in wire.iter().zip(results) {
            match result {
                Ok(item) => ok.push(ReceivedItem {
                    hops: wire.hops,
                    item,
                }),
                Err(e) => {
                    if e.is_from_a_newer_version()
                        && let Some(u) = unreadable(&wire.envelope)
                    {
                        unread.push(u);
                    }
                    invalid.push(e);
                }
            }
        }
        Inbound::Items {
            session,
            items: ok,
            invalid,
            unreadable: unread,
        }
    }
}

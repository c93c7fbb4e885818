//! What the engine asks of its driver: messages to send, items to load and
//! send, items to store, update or delete, one timer, and events to log or
//! count. A driver carries them out in the order given.

use crate::club::ClubError;
use crate::devices::DeviceError;
use crate::error::ItemError;
use crate::item::id::ItemId;
use crate::item::verified::VerifiedItem;
use crate::wire::{Announce, WireMessage};

/// One instruction to the driver.
#[derive(Debug, Clone)]
pub enum Output {
    /// Send this message to a connected friend.
    Send {
        /// The friend.
        peer: String,
        /// The message.
        message: WireMessage,
    },
    /// Load these items' envelopes from storage and send them to `peer`
    /// with the hop counts given: `wire::pack_items(session, …)` turns them
    /// into frames (and, for a session, its closing `SyncDone`). Items no
    /// longer in storage are skipped.
    SendItems {
        /// The friend.
        peer: String,
        /// The catch-up session they answer, if any.
        session: Option<u64>,
        /// Which items, each with the hops to put on the wire.
        items: Vec<Announce>,
    },
    /// One chunk of a catch-up session's items: load these items' envelopes
    /// from storage (one page, never the whole session), pack them with
    /// `wire::pack_chunk(session, …)` into `Items` frames, send them, and
    /// once every frame has been acknowledged or has failed feed
    /// `Input::ItemsDrained` with the same `peer`, `session` and `chunk`
    /// and how many envelopes went out. Items no longer in storage are
    /// skipped. The engine sends the session's `SyncDone` itself, after the
    /// last chunk drained.
    SendChunk {
        /// The friend.
        peer: String,
        /// The catch-up session.
        session: u64,
        /// The chunk's number within the session (0, 1, …).
        chunk: u32,
        /// Which items, each with the hops to put on the wire.
        items: Vec<Announce>,
    },
    /// Store a newly accepted item (ours or a friend's).
    Store {
        /// The item.
        item: VerifiedItem,
        /// The friend it came from; `None` for our own.
        received_from: Option<String>,
        /// Hops left for this node's copy.
        hops_left: u8,
    },
    /// A stored item may now travel further: update its route columns.
    UpdateRoute {
        /// The item.
        id: ItemId,
        /// The friend whose copy set the new hop count.
        received_from: String,
        /// The new hops left.
        hops_left: u8,
    },
    /// Delete a stored item.
    Delete {
        /// The item.
        id: ItemId,
        /// Why.
        reason: DeleteReason,
    },
    /// Call `handle(now, Input::Tick)` at `at_ms` (replaces any earlier
    /// request; the engine keeps one timer).
    WakeAt {
        /// When, in the caller's clock.
        at_ms: u64,
    },
    /// Something happened worth logging or counting.
    Event(Event),
}

/// Why an item is deleted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeleteReason {
    /// Its author retracted it with item `by`.
    Retracted {
        /// The retraction.
        by: ItemId,
    },
    /// Its author replaced it with item `by`.
    Replaced {
        /// The replacement.
        by: ItemId,
    },
    /// Its expiry passed.
    Expired,
    /// A club item whose author, a later-arriving change showed, was not a
    /// member of the club when it wrote it.
    NotAClubMember,
    /// A stranger's public item, the oldest past the retention bound
    /// (`Quotas::strangers_kept`).
    Evicted,
}

/// Why an item was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RejectReason {
    /// The envelope failed the driver's edge checks (decode, limits, signature).
    Invalid(ItemError),
    /// Its expiry has passed.
    Expired,
    /// Its author retracted or replaced it.
    Withdrawn,
    /// A `friends`, `group` or `peer` item sent by someone other than its
    /// author: those travel one hop, from the author only.
    NotFromAuthor,
    /// A `peer:ID` item (a direct message) addressed to another node: only
    /// its addressee may hold it.
    NotAddressedToUs,
    /// The sender had no hops left to give it.
    NoHopsLeft,
    /// Our own item, offered back to us.
    OwnItem,
    /// `Publish` of an item signed by another key.
    NotOurs,
    /// A club item this node may not take: we are not entitled to it, its
    /// author was not a member when it wrote it, or the friend that sent
    /// it is not a member (nor its author).
    NotAClubMember,
    /// Its author already has as much held here as its budget allows
    /// (`EngineConfig::quotas`): refused at the edge and counted
    /// (`Engine::refused`).
    OverQuota,
    /// A stranger's item past the rate the link that brought it may carry
    /// (`Quotas::stranger_items_per_link_minute`): refused, not remembered,
    /// so the friend offers it again at a later catch-up.
    LinkRate,
    /// A club change its author had no right to make (as far as the
    /// changes held show), or one the club book has no room for.
    BadClubChange(ClubError),
    /// A `devices` item from a friend that is not one of this node's
    /// devices, or written by a node that is not one.
    NotADevice,
    /// A device statement the device book refuses: not about this node or
    /// its devices, or past its bounds.
    BadDeviceLink(DeviceError),
}

/// Which side of a catch-up session this node is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncRole {
    /// We started it and send the items the friend lacks.
    Initiator,
    /// The friend started it; we receive.
    Responder,
}

/// Something the driver may log or count. Nothing here needs acting on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A new item was accepted and stored.
    Accepted {
        /// The item.
        id: ItemId,
        /// Who sent it; `None` for our own.
        from: Option<String>,
    },
    /// A copy of an item already held arrived and was dropped.
    Duplicate {
        /// The item.
        id: ItemId,
        /// Who sent it; `None` for a repeated `Publish`.
        from: Option<String>,
    },
    /// An item was refused.
    Rejected {
        /// The item, when its envelope decoded.
        id: Option<ItemId>,
        /// Who sent it; `None` for `Publish`.
        from: Option<String>,
        /// Why.
        reason: RejectReason,
    },
    /// A retraction or replacement removed an item we held.
    Withdrawn {
        /// The removed item.
        target: ItemId,
        /// The retraction or replacement.
        by: ItemId,
    },
    /// An item expired and was dropped.
    Expired {
        /// The item.
        id: ItemId,
    },
    /// A friend offered a held item with more hops left; ours now has them.
    HopsRaised {
        /// The item.
        id: ItemId,
        /// New hops left.
        hops_left: u8,
        /// The friend.
        from: String,
    },
    /// A friend asked for items it may not have or that we do not hold.
    WantRefused {
        /// The friend.
        peer: String,
        /// How many of its ids were refused.
        count: usize,
    },
    /// Nobody answered for a wanted item; catch-up will find it later.
    WantGaveUp {
        /// The item.
        id: ItemId,
    },
    /// A catch-up session ended normally.
    SyncFinished {
        /// The friend.
        peer: String,
        /// The session.
        session: u64,
        /// Our side.
        role: SyncRole,
        /// Items sent (initiator) or received (responder).
        items: usize,
    },
    /// A catch-up session was given up (timeout, bad frame, abort).
    SyncAborted {
        /// The friend.
        peer: String,
        /// The session.
        session: u64,
        /// Our side.
        role: SyncRole,
        /// Why.
        reason: String,
    },
    /// A message from a peer that is not a connected friend was ignored.
    UnknownPeer {
        /// The peer.
        peer: String,
    },
}

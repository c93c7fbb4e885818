//! The sans-IO replication engine: `handle(now, Input) -> Vec<Output>`.
//!
//! It owns the rules of replication between friends and nothing else: no
//! sockets, no storage, no clock, no randomness. The node's libp2p driver
//! and mesh-sim drive this same code. Rules in brief (full text in
//! `docs/wire.md`):
//! - our own items are pushed eagerly (whole envelopes) to the friends
//!   `may_send` admits, after a short batch delay;
//! - relayed items are announced (`Have`, with hops) and pulled (`Want`)
//!   from one announcer at a time, so each node receives about one copy;
//! - on connect and periodically, each side starts a range-sync session
//!   over what it may send the other and pushes what the other lacks; a
//!   phone serves one such session at a time, so it gets each item once (a
//!   server a few, `SERVER_SERVED_SESSIONS`);
//!   the sender hands its items to the driver a chunk at a time, at most
//!   `MAX_CHUNKS_IN_FLIGHT` chunks not yet drained (`session_send.rs`);
//! - after such a session, public items the friend holds and that we offered
//!   it without confirmation (or all, on the first session after connect)
//!   are re-announced with our hops, so a copy that came by a longer path is
//!   raised (`hop_check.rs`);
//! - club items go member to member only, judged by the engine's club book
//!   (`clubs.rs`), which every accepted club change updates;
//! - `devices` items go device to device only, judged by the engine's
//!   device book (`devices.rs`), which every accepted device statement
//!   updates and the driver may replace (`Engine::set_devices`);
//! - retractions and replacements remove their target and are remembered;
//!   expired items drop on receipt and on a timer.
//!
//! The same inputs give the same outputs, in the same order: maps and sets
//! are ordered (`BTreeMap`/`BTreeSet`), never a randomly seeded `HashMap`
//! whose seed would decide which announcer is asked or in what order
//! messages leave. The maps keyed by friend (`peers`, sessions, asks, hop
//! checks, lacks) are looked up on nearly every input, so they are hashed
//! without a seed (`peer_map.rs`), and that type walks them only in sorted
//! peer id order, so the hash never reaches the outputs. The clippy lints denied below keep
//! the clock, the file system, ambient randomness and randomly seeded
//! hashers out of this module (their list is in `protocol/clippy.toml`).

#![deny(clippy::disallowed_methods, clippy::disallowed_types)]

mod admit;
mod clubs;
mod config;
mod devices;
mod hop_check;
mod index;
mod input;
mod item_map;
mod lacks;
mod output;
mod peer_map;
mod push;
mod quota;
mod receive;
mod schedule;
mod serve;
mod session_send;
mod sync;
mod wants;

use std::collections::BTreeSet;
use std::sync::Arc;

pub use config::{
    CHUNK_BYTES, CHUNK_ITEMS, EngineConfig, MAX_CHUNKS_IN_FLIGHT, MAX_OUTBOUND_SESSIONS,
    MAX_RESYNC_INTERVAL_MS, MAX_SERVED_SESSIONS, MAX_WANTED_ITEMS, MAX_WANTS_IN_FLIGHT_PER_PEER,
    PUSH_BATCH_DELAY_MS, PUSH_BATCH_FULL, RESYNC_INTERVAL_MS, RESYNC_JITTER_MS,
    SERVER_SERVED_SESSIONS, SYNC_SESSION_TIMEOUT_MS, SYNC_STALL_MS, WANT_TIMEOUT_MS,
};
pub use devices::MAX_PARKED_STATEMENTS;
pub use input::{Inbound, Input, ReceivedItem};
pub use lacks::MAX_LACKS_PER_FRIEND;
pub use output::{DeleteReason, Event, Output, RejectReason, SyncRole};
pub use quota::{
    DEFAULT_QUOTA_FRIEND_BYTES, DEFAULT_QUOTA_FRIEND_ITEMS, DEFAULT_QUOTA_STRANGER_BYTES,
    DEFAULT_QUOTA_STRANGER_ITEMS, DEFAULT_STRANGER_ITEMS_PER_LINK_MINUTE, DEFAULT_STRANGERS_KEPT,
    MAX_DECLINED_REMEMBERED, MAX_REFUSED_AUTHORS, Quotas, Refused, Usage,
};

use crate::club::ClubBook;
use crate::devices::DeviceBook;
use crate::item::id::ItemId;
use crate::item::record::ItemRecord;
use crate::policy::{FriendView, ItemRoute, may_send};
use hop_check::HopChecks;
use index::Index;
use lacks::Lacks;
use peer_map::PeerMap;
use push::PushQueue;
use schedule::Schedule;
use sync::SyncState;
use wants::Wants;

/// A connected friend.
#[derive(Debug)]
struct Peer {
    groups: Vec<String>,
    next_resync_ms: u64,
    /// Sessions in a row toward it that found nothing to send (see
    /// `schedule.rs`).
    quiet_sessions: u32,
    /// Its allowance of strangers' items (`Quotas::stranger_items_per_link_minute`).
    stranger_rate: quota::LinkRate,
}

/// The replication state machine of one node.
#[derive(Debug)]
pub struct Engine {
    cfg: EngineConfig,
    local: Arc<str>,
    index: Index,
    /// Connected friends.
    peers: PeerMap<Peer>,
    push: PushQueue,
    wants: Wants,
    sync: SyncState,
    hop_checks: HopChecks,
    lacks: Lacks,
    schedule: Schedule,
    wake_sent: Option<u64>,
    clubs: ClubBook,
    /// This node's person's devices (`devices.rs`).
    devices: DeviceBook,
    /// Device statements that arrived before the ones that make them ours.
    parked: devices::Parked,
    /// The friends the driver lets in (`set_trusted`), connected or not:
    /// their items count against the trusted budget.
    trusted: BTreeSet<Arc<str>>,
    refusals: quota::Refusals,
    shelf: quota::StrangerShelf,
    declined: quota::Declined,
    /// Newer versions' items friends sent us, remembered like `declined`
    /// but kept when a friend list changes (`admit.rs`).
    unreadable: quota::Declined,
}

impl Engine {
    /// An engine for `cfg.local_peer`, seeded with the items storage holds.
    /// Tombstones are rebuilt from the stored retractions and replacements.
    /// Call `handle(now, Input::Tick)` once after this to drop anything
    /// that expired while the node was down and to get the first `WakeAt`.
    pub fn new(cfg: EngineConfig, stored: impl IntoIterator<Item = ItemRecord>) -> Engine {
        Engine::with_clubs(cfg, stored, ClubBook::new())
    }

    /// Like [`Engine::new`], routing club items by `clubs` (the book the
    /// driver built from its stored club changes). The engine keeps it up
    /// to date with every club change it accepts.
    pub fn with_clubs(
        cfg: EngineConfig,
        stored: impl IntoIterator<Item = ItemRecord>,
        clubs: ClubBook,
    ) -> Engine {
        // One pass over the records as they come (storage streams them):
        // only their compact form and the withdrawals are kept, never the
        // records themselves (377 B each against 72).
        let mut withdrawals: Vec<(ItemId, String)> = Vec::new();
        let mut index = Index::from_records(stored.into_iter().inspect(|r| {
            withdrawals.extend(r.supersedes().map(|target| (target, r.author.clone())));
        }));
        let local = index.intern(&cfg.local_peer);
        let devices = DeviceBook::new(&cfg.local_peer);
        for (target, author) in withdrawals {
            index.add_tombstone(target, &author);
            if index.get(&target).is_some_and(|m| m.author() == author) {
                index.remove(&target);
            }
        }
        Engine {
            cfg,
            local,
            index,
            peers: PeerMap::default(),
            push: PushQueue::default(),
            wants: Wants::default(),
            sync: SyncState::default(),
            hop_checks: HopChecks::default(),
            lacks: Lacks::default(),
            schedule: Schedule::default(),
            wake_sent: None,
            clubs,
            devices,
            parked: devices::Parked::default(),
            trusted: BTreeSet::new(),
            refusals: quota::Refusals::default(),
            shelf: quota::StrangerShelf::default(),
            declined: quota::Declined::default(),
            unreadable: quota::Declined::default(),
        }
    }

    /// Handles one input at `now_ms` and returns what the driver must do, in
    /// order.
    pub fn handle(&mut self, now_ms: u64, input: Input) -> Vec<Output> {
        let mut out = Vec::new();
        self.handle_into(now_ms, input, &mut out);
        out
    }

    /// Like [`Engine::handle`], appending to `out` (saves an allocation per
    /// call for drivers that reuse a buffer).
    pub fn handle_into(&mut self, now_ms: u64, input: Input, out: &mut Vec<Output>) {
        match input {
            Input::PeerConnected { peer, groups } => self.on_connect(now_ms, peer, groups, out),
            Input::PeerDisconnected { peer } => self.on_disconnect(now_ms, &peer, out),
            Input::Received { peer, message } => self.on_message(now_ms, &peer, message, out),
            Input::Publish { item } => self.publish(now_ms, item, out),
            Input::ItemsDrained {
                peer,
                session,
                chunk,
                sent,
                delivered,
            } => self.on_items_drained(now_ms, &peer, session, chunk, sent, delivered, out),
            // The timer that fired is spent: ask again for whatever is next.
            Input::FlushPush => self.push_now(now_ms),
            Input::Tick => self.wake_sent = None,
        }
        self.run_timers(now_ms, out);
        self.start_waiting(now_ms, out);
        self.wants.flush_asks(
            now_ms,
            self.cfg.want_timeout_ms,
            self.cfg.max_wants_in_flight,
            out,
        );
        self.request_wake(out);
    }

    /// This node's peer id.
    pub fn local_peer(&self) -> &str {
        &self.local
    }

    /// True if the item is held (not retracted, not expired-and-dropped).
    pub fn holds(&self, id: &ItemId) -> bool {
        self.index.contains(id)
    }

    /// Hops left of a held item.
    pub fn hops_left(&self, id: &ItemId) -> Option<u8> {
        self.index.get(id).map(|m| m.hops_left)
    }

    /// How many items are held.
    pub fn item_count(&self) -> usize {
        self.index.len()
    }

    /// True if some author withdrew `id` (retraction or replacement).
    pub fn is_withdrawn(&self, id: &ItemId) -> bool {
        self.index.has_tombstone(id)
    }

    /// Connected friends, in order.
    pub fn connected_peers(&self) -> impl Iterator<Item = &str> {
        self.peers
            .sorted()
            .into_iter()
            .map(|(peer, _)| peer.as_str())
    }

    /// Friends whose catch-up session waits for a free slot
    /// (`EngineConfig::max_outbound_sessions`).
    pub fn sessions_waiting(&self) -> usize {
        self.schedule.waiting_len()
    }

    /// The time of the next timer, if any is pending.
    pub fn next_wake(&self) -> Option<u64> {
        [
            self.push.deadline(),
            self.wants.next_deadline(),
            self.index.next_expiry(),
            self.schedule.next_deadline(),
            self.sync.next_deadline(&self.cfg),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    fn friend_view<'a>(&'a self, peer: &'a str) -> Option<FriendView<'a>> {
        self.peers.get(peer).map(|p| FriendView {
            peer_id: peer,
            groups: &p.groups,
        })
    }

    fn on_connect(
        &mut self,
        now_ms: u64,
        peer: String,
        groups: Vec<String>,
        out: &mut Vec<Output>,
    ) {
        if let Some(p) = self.peers.get_mut(&peer) {
            // Already connected: new groups, reconcile at once.
            p.groups = groups;
            self.request_session(now_ms, &peer, out);
            return;
        }
        let next_resync_ms = self.schedule_resync(now_ms, &peer, None);
        self.peers.insert(
            peer.clone(),
            Peer {
                groups,
                next_resync_ms,
                quiet_sessions: 0,
                stranger_rate: quota::LinkRate::full(
                    self.cfg.quotas.stranger_items_per_link_minute,
                    now_ms,
                ),
            },
        );
        self.hop_checks.connected(&peer);
        self.announce_short_of_author(&peer, out);
        self.request_session(now_ms, &peer, out);
    }

    fn on_disconnect(&mut self, now_ms: u64, peer: &str, out: &mut Vec<Output>) {
        let Some(gone) = self.peers.remove(peer) else {
            return;
        };
        self.unschedule(peer, gone.next_resync_ms);
        self.hop_checks.disconnected(peer);
        let gave_up = self.wants.peer_gone(
            peer,
            now_ms,
            self.cfg.want_timeout_ms,
            self.cfg.max_wants_in_flight,
        );
        for id in gave_up {
            out.push(Output::Event(Event::WantGaveUp { id }));
        }
        self.sync_peer_gone(now_ms, peer, out);
    }

    fn on_message(&mut self, now_ms: u64, peer: &str, message: Inbound, out: &mut Vec<Output>) {
        if !self.peers.contains_key(peer) {
            out.push(Output::Event(Event::UnknownPeer {
                peer: peer.to_owned(),
            }));
            return;
        }
        match message {
            Inbound::Have(announces) => self.on_have(now_ms, peer, &announces, out),
            Inbound::Want(ids) => self.on_want(now_ms, peer, &ids, out),
            Inbound::Items {
                session,
                items,
                invalid,
                unreadable,
            } => {
                self.remember_unreadable(&unreadable);
                self.on_items(now_ms, peer, session, items, invalid, out)
            }
            Inbound::SyncQuery { session, frame } => {
                self.on_sync_query(now_ms, peer, session, &frame, out)
            }
            Inbound::SyncReply { session, frame } => {
                self.on_sync_reply(now_ms, peer, session, &frame, out)
            }
            Inbound::SyncDone { session, sent } => {
                self.on_sync_done(now_ms, peer, session, sent, out)
            }
            Inbound::SyncAbort { session, reason } => {
                self.on_sync_abort(now_ms, peer, session, reason, out)
            }
        }
    }

    fn run_timers(&mut self, now_ms: u64, out: &mut Vec<Output>) {
        self.expire_due(now_ms, out);
        if self.push.deadline().is_some_and(|d| d <= now_ms) {
            self.flush_push(now_ms, out);
        }
        let gave_up = self.wants.expire(
            now_ms,
            self.cfg.want_timeout_ms,
            self.cfg.max_wants_in_flight,
        );
        for id in gave_up {
            out.push(Output::Event(Event::WantGaveUp { id }));
        }
        self.sync_timers(now_ms, out);
        self.resync_due(now_ms, out);
    }

    /// [`may_send`] with this engine's node, club book and device book:
    /// whether `view` may receive the item routed as `route` now.
    fn allows(&self, route: &ItemRoute<'_>, view: &FriendView<'_>, now_ms: u64) -> bool {
        may_send(&self.local, route, view, &self.clubs, &self.devices, now_ms)
    }

    fn request_wake(&mut self, out: &mut Vec<Output>) {
        let next = self.next_wake();
        if next != self.wake_sent {
            if let Some(at_ms) = next {
                out.push(Output::WakeAt { at_ms });
            }
            self.wake_sent = next;
        }
    }
}

//! Catch-up by range-based set reconciliation (`crate::range_sync`).
//!
//! The side that may SEND starts a session toward each friend on connect and
//! every resync interval. Its set is what `may_send` lets that friend have,
//! with the echo rule relaxed (items the friend gave us are in it, so they
//! cancel out instead of showing up as differences every time); what it
//! finally sends is filtered by the exact `may_send`. The receiving side
//! answers with everything it holds that could have come from that friend.
//! The initiator learns which items the friend lacks and pushes them in
//! `Items` tagged with the session, chunk by chunk under flow control
//! (`session_send.rs`), then `SyncDone` with their count.
//! Then it re-announces, with its hops, the items the friend holds that
//! still need a hop check (`hop_check.rs`).
//!
//! The receiving side's part (serving sessions one at a time) is in
//! `serve.rs`.

use std::collections::{BTreeSet, VecDeque};
use std::hash::Hasher;

use siphasher::sip::SipHasher24;

use super::Engine;
use super::config::EngineConfig;
use super::hop_check::{Check, offers_hops};
use super::output::{Event, Output, SyncRole};
use super::peer_map::PeerMap;
use super::session_send::SendCursor;
use crate::item::id::ItemId;
use crate::policy::same_peer;
use crate::range_sync::{Reconciler, ShortId, SyncSet};
use crate::wire::{Announce, MAX_IDS_PER_MESSAGE, MAX_REASON_BYTES, SYNC_FRAME_BYTES, WireMessage};

/// A session we started: we send.
#[derive(Debug)]
struct OutSession {
    id: u64,
    /// `PushQueue::queue_number` when it started.
    covers: u64,
    recon: Reconciler,
    have: Vec<ItemId>,
    /// Public items in our set that we could pass to the friend with at
    /// least one hop left (see `hops_check`), in the set's order.
    hop_candidates: Vec<ItemId>,
    /// This session checks every shared item's hops (first after connect).
    full_check: bool,
    /// Last progress (start or a reply), for the idle timeout.
    last_ms: u64,
}

/// A session we serve: we receive.
#[derive(Debug)]
pub(super) struct InSession {
    pub(super) id: u64,
    pub(super) recon: Reconciler,
    pub(super) last_ms: u64,
    pub(super) expected: Option<u32>,
    pub(super) received: usize,
}

/// A first frame waiting for us to finish the session we serve.
#[derive(Debug)]
pub(super) struct Queued {
    pub(super) peer: String,
    pub(super) id: u64,
    pub(super) frame: Vec<u8>,
    pub(super) at_ms: u64,
}

/// All catch-up sessions of this node.
#[derive(Debug, Default)]
pub(super) struct SyncState {
    next_session: u64,
    outbound: PeerMap<OutSession>,
    /// Sessions we started whose reconciliation is done: sending items.
    pub(super) sending: PeerMap<SendCursor>,
    /// Sessions we serve, by friend (at most `max_served_sessions`).
    pub(super) active: PeerMap<InSession>,
    pub(super) queue: VecDeque<Queued>,
}

impl SyncState {
    /// The earliest session timeout.
    pub(super) fn next_deadline(&self, cfg: &EngineConfig) -> Option<u64> {
        let out = self
            .outbound
            .values_any_order()
            .map(|s| s.last_ms.saturating_add(cfg.sync_timeout_ms))
            .min();
        let sending = self
            .sending
            .values_any_order()
            .map(|s| s.last_ms.saturating_add(cfg.sync_timeout_ms))
            .min();
        let active = self
            .active
            .values_any_order()
            .map(|a| a.last_ms.saturating_add(cfg.sync_stall_ms))
            .min();
        let queued = self
            .queue
            .iter()
            .map(|q| q.at_ms.saturating_add(cfg.sync_timeout_ms))
            .min();
        [out, sending, active, queued].into_iter().flatten().min()
    }

    /// True while a session we started toward `peer` runs (either phase).
    pub(super) fn runs_session_to(&self, peer: &str) -> bool {
        self.outbound.contains_key(peer) || self.sending.contains_key(peer)
    }

    /// Sessions we started that still run.
    pub(super) fn initiated(&self) -> usize {
        self.outbound.len() + self.sending.len()
    }

    /// The last push-queue number covered by our running session to `peer`.
    pub(super) fn covered_by_session(&self, peer: &str) -> Option<u64> {
        self.outbound.get(peer).map(|s| s.covers)
    }
}

pub(super) fn abort_reason(e: impl std::fmt::Display) -> String {
    let mut s = e.to_string();
    if s.len() > MAX_REASON_BYTES {
        let mut cut = MAX_REASON_BYTES;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
    }
    s
}

/// The key of session `session` that `local` starts toward `peer` at
/// `now_ms`: a fresh one for every session (short ids that collided in one
/// do not in the next), and the same in every replay of a simulation.
fn session_key(local: &str, peer: &str, session: u64, now_ms: u64) -> [u8; 16] {
    let mut key = [0u8; 16];
    for (half, salt) in key.chunks_exact_mut(8).zip([0x5eed_0001_u64, 0x5eed_0002]) {
        let mut h = SipHasher24::new_with_keys(salt, session);
        h.write(local.as_bytes());
        h.write_u8(0xff);
        h.write(peer.as_bytes());
        h.write_u64(now_ms);
        half.copy_from_slice(&h.finish().to_le_bytes());
    }
    key
}

impl Engine {
    /// Starts a session toward `peer` unless one is running or we hold
    /// nothing it may receive.
    pub(super) fn start_outbound_sync(&mut self, now_ms: u64, peer: &str, out: &mut Vec<Output>) {
        if self.sync.runs_session_to(peer) {
            return;
        }
        let Some(view) = self.friend_view(peer) else {
            return;
        };
        let mut set = SyncSet::new();
        let mut hop_candidates = Vec::new();
        let mut sendable_again = Vec::new();
        let lacking = self.lacks.of(peer);
        for (id, meta) in self.index.iter() {
            let mut route = meta.route();
            route.received_from = None;
            // Hops are not asked for either: the friend holds what we hold
            // with none left as much as the rest, so both sets have it.
            route.hops_left = route.hops_left.max(1);
            if self.allows(&route, &view, now_ms) {
                if lacking.is_some_and(|l| l.contains(id)) {
                    if !self.allows(&meta.route(), &view, now_ms) {
                        // It lacks it and cannot have it from us: leave it
                        // out as its set does (`lacks.rs`).
                        continue;
                    }
                    sendable_again.push(*id);
                }
                // Our own items too: the friend also announces its short
                // copies to us (`announce_short_of_author`), but that
                // announce can be lost as well. Only the full check takes
                // them: they are pushed eagerly, never pending.
                if offers_hops(&meta) && !meta.received_from().is_some_and(|r| same_peer(r, peer)) {
                    hop_candidates.push(*id);
                }
                set.insert(meta.created_ms, *id);
            }
        }
        for id in &sendable_again {
            self.lacks.forget(peer, id);
        }
        let index = &self.index;
        self.lacks.retain(peer, |id| index.contains(id));
        if set.is_empty() {
            // Nothing shared now, so nothing to check; later offers are
            // tracked one by one.
            self.hop_checks.session_started(peer);
            return;
        }
        let full_check = self.hop_checks.session_started(peer);
        self.sync.next_session += 1;
        let session = self.sync.next_session;
        let key = session_key(&self.local, peer, session, now_ms);
        let (recon, frame) = Reconciler::initiator(set, key, SYNC_FRAME_BYTES);
        let covers = self.push.queue_number();
        self.sync.outbound.insert(
            peer.to_owned(),
            OutSession {
                id: session,
                covers,
                recon,
                have: Vec::new(),
                hop_candidates,
                full_check,
                last_ms: now_ms,
            },
        );
        out.push(Output::Send {
            peer: peer.to_owned(),
            message: WireMessage::SyncQuery { session, frame },
        });
    }

    /// The responder's answer to our session.
    pub(super) fn on_sync_reply(
        &mut self,
        now_ms: u64,
        peer: &str,
        session: u64,
        frame: &[u8],
        out: &mut Vec<Output>,
    ) {
        let Some(s) = self.sync.outbound.get_mut(peer).filter(|s| s.id == session) else {
            return;
        };
        s.last_ms = now_ms;
        let mut need: Vec<ShortId> = Vec::new();
        let reconciled = s.recon.reconcile_with_ids(frame, &mut s.have, &mut need);
        if !need.is_empty() {
            // It holds what we left out as lacking after all (`need` is
            // short ids: match them against the lacks' own).
            need.sort_unstable();
            let held: Vec<ItemId> = self
                .lacks
                .of(peer)
                .into_iter()
                .flatten()
                .filter(|id| need.binary_search(&s.recon.short_id(id)).is_ok())
                .copied()
                .collect();
            for id in &held {
                self.lacks.forget(peer, id);
            }
        }
        match reconciled {
            Ok(Some(next)) => {
                out.push(Output::Send {
                    peer: peer.to_owned(),
                    message: WireMessage::SyncQuery {
                        session,
                        frame: next,
                    },
                });
            }
            Ok(None) => {
                let Some(done) = self.sync.outbound.remove(peer) else {
                    return;
                };
                let mut items = self.sendable(now_ms, peer, &done.have);
                self.statements_first(&mut items);
                self.learn_lacks(peer, &done.have, &items);
                if items.is_empty() {
                    if let Some(p) = self.peers.get_mut(peer) {
                        p.quiet_sessions = p.quiet_sessions.saturating_add(1);
                    }
                } else {
                    self.end_quiet(now_ms, peer);
                }
                // If some of them are also waiting for the live push (written
                // while this friend was away), the push now skips this friend.
                for a in &items {
                    self.note_holder(a.id, peer, a.hops);
                }
                self.begin_sending(now_ms, peer, session, items, out);
                self.hops_check(now_ms, peer, &done, out);
                let index = &self.index;
                self.hop_checks.retain_held(peer, |id| index.contains(id));
            }
            Err(e) => {
                if let Some(s) = self.sync.outbound.remove(peer) {
                    self.hop_checks.session_failed(peer, s.full_check);
                }
                out.push(abort_message(peer, session, &e));
                out.push(sync_aborted(peer, session, SyncRole::Initiator, e));
            }
        }
    }

    /// Of the ids the friend lacks, those the exact `may_send` lets it have.
    fn sendable(&self, now_ms: u64, peer: &str, have: &[ItemId]) -> Vec<Announce> {
        let Some(view) = self.friend_view(peer) else {
            return Vec::new();
        };
        have.iter()
            .filter_map(|&id| {
                let meta = self.index.get(&id)?;
                self.allows(&meta.route(), &view, now_ms)
                    .then_some(Announce {
                        id,
                        hops: meta.hops_left,
                    })
            })
            .collect()
    }

    /// What the friend lacks of our set and `sendable` refused (no hop
    /// left, mostly) it will lack again next time: remember it.
    fn learn_lacks(&mut self, peer: &str, have: &[ItemId], sent: &[Announce]) {
        if have.len() == sent.len() {
            return;
        }
        let sent: BTreeSet<ItemId> = sent.iter().map(|a| a.id).collect();
        for id in have {
            if !sent.contains(id) {
                self.lacks.add(peer, *id);
            }
        }
    }

    /// Reconciliation compares ids, not hop counts, so a friend may hold an
    /// item we share with fewer hops than we can give it (a better copy was
    /// lost on its way while a worse one arrived). After a session, the
    /// public items the friend holds (in our set, not in `have`), to which
    /// we can give at least one hop, and whose check is due (all on the
    /// first session after connect, else the unconfirmed offers: see
    /// `hop_check.rs`) are announced with our hops: the friend raises its
    /// copy if ours offers more, and counter-announces if its own offers us
    /// more. Items that came from the friend are skipped (it holds them with
    /// more hops than we do).
    fn hops_check(&mut self, now_ms: u64, peer: &str, done: &OutSession, out: &mut Vec<Output>) {
        let retry = self.hop_checks.take_retry(peer);
        if done.hop_candidates.is_empty() {
            return;
        }
        let Some(p) = self.peers.get(peer) else {
            return;
        };
        let mut first_tries = BTreeSet::new();
        let view = crate::policy::FriendView {
            peer_id: peer,
            groups: &p.groups,
        };
        let lacking: BTreeSet<ItemId> = done.have.iter().copied().collect();
        let mut announces = Vec::new();
        for id in &done.hop_candidates {
            if lacking.contains(id) {
                // The session sends it with our hops.
                self.hop_checks.confirmed(peer, id);
                continue;
            }
            let check = self.hop_checks.take(peer, id, done.full_check, &retry);
            if check == Check::Skip {
                continue;
            }
            let Some(meta) = self.index.get(id) else {
                continue;
            };
            if offers_hops(&meta) && self.allows(&meta.route(), &view, now_ms) {
                announces.push(Announce {
                    id: *id,
                    hops: meta.hops_left,
                });
                if check == Check::First {
                    first_tries.insert(*id);
                }
            }
        }
        self.hop_checks.set_retry(peer, first_tries);
        // In id order already: `hop_candidates` was collected from the
        // index, which iterates by id.
        for chunk in announces.chunks(MAX_IDS_PER_MESSAGE) {
            out.push(Output::Send {
                peer: peer.to_owned(),
                message: WireMessage::Have {
                    items: chunk.to_vec(),
                },
            });
        }
    }

    /// The friend gave up a session (either side of it).
    pub(super) fn on_sync_abort(
        &mut self,
        now_ms: u64,
        peer: &str,
        session: u64,
        reason: String,
        out: &mut Vec<Output>,
    ) {
        if self
            .sync
            .outbound
            .get(peer)
            .is_some_and(|s| s.id == session)
        {
            if let Some(s) = self.sync.outbound.remove(peer) {
                self.hop_checks.session_failed(peer, s.full_check);
            }
            out.push(sync_aborted(
                peer,
                session,
                SyncRole::Initiator,
                format!("friend aborted: {reason}"),
            ));
        }
        self.drop_sending(
            peer,
            Some(session),
            &format!("friend aborted: {reason}"),
            false,
            out,
        );
        self.sync
            .queue
            .retain(|q| !(q.peer == peer && q.id == session));
        if self.active_is(peer, session) {
            self.end_active(now_ms, peer, Some(format!("friend aborted: {reason}")), out);
        }
    }

    /// A friend disconnected: drop its sessions.
    pub(super) fn sync_peer_gone(&mut self, now_ms: u64, peer: &str, out: &mut Vec<Output>) {
        if let Some(s) = self.sync.outbound.remove(peer) {
            out.push(sync_aborted(
                peer,
                s.id,
                SyncRole::Initiator,
                "disconnected",
            ));
        }
        self.drop_sending(peer, None, "disconnected", false, out);
        self.sync.queue.retain(|q| q.peer != peer);
        if self.sync.active.contains_key(peer) {
            self.end_active(now_ms, peer, Some("disconnected".into()), out);
        }
    }

    /// Session timeouts (all idle timeouts: a session that progresses never
    /// times out): ours gone quiet while reconciling or sending, the one we
    /// serve gone quiet, queued ones whose initiator must have given up.
    pub(super) fn sync_timers(&mut self, now_ms: u64, out: &mut Vec<Output>) {
        let timeout = self.cfg.sync_timeout_ms;
        let late: Vec<String> = self
            .sync
            .outbound
            .sorted_where(|s| s.last_ms.saturating_add(timeout) <= now_ms)
            .into_iter()
            .map(|(p, _)| p.clone())
            .collect();
        let idle: Vec<String> = self
            .sync
            .sending
            .sorted_where(|s| s.last_ms.saturating_add(timeout) <= now_ms)
            .into_iter()
            .map(|(p, _)| p.clone())
            .collect();
        for peer in idle {
            self.drop_sending(&peer, None, "timed out", true, out);
        }
        for peer in late {
            if let Some(s) = self.sync.outbound.remove(&peer) {
                self.hop_checks.session_failed(&peer, s.full_check);
                out.push(abort_message(&peer, s.id, &"timed out"));
                out.push(sync_aborted(&peer, s.id, SyncRole::Initiator, "timed out"));
            }
        }
        self.sync
            .queue
            .retain(|q| q.at_ms.saturating_add(timeout) > now_ms);
        let stall = self.cfg.sync_stall_ms;
        let stalled: Vec<(String, u64)> = self
            .sync
            .active
            .sorted_where(|a| a.last_ms.saturating_add(stall) <= now_ms)
            .into_iter()
            .map(|(p, a)| (p.clone(), a.id))
            .collect();
        for (peer, id) in stalled {
            out.push(abort_message(&peer, id, &"stalled"));
            self.end_active(now_ms, &peer, Some("stalled".into()), out);
        }
    }
}

pub(super) fn abort_message(peer: &str, session: u64, e: &impl std::fmt::Display) -> Output {
    Output::Send {
        peer: peer.to_owned(),
        message: WireMessage::SyncAbort {
            session,
            reason: abort_reason(e),
        },
    }
}

pub(super) fn sync_aborted(
    peer: &str,
    session: u64,
    role: SyncRole,
    reason: impl std::fmt::Display,
) -> Output {
    Output::Event(Event::SyncAborted {
        peer: peer.to_owned(),
        session,
        role,
        reason: abort_reason(reason),
    })
}

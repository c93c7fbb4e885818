//! Live push: new items wait a short batch delay, then go to every connected
//! friend `may_send` admits — our own items eagerly as envelopes, relayed
//! ones lazily as `Have` announcements that the friend pulls with `Want`.
//! Also the answers to `Have` (pull or raise hops) and to `Want`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::Engine;
use super::hop_check::{offers_hops, travels_far};
use super::output::{Event, Output};
use crate::club::ClubBook;
use crate::devices::DeviceBook;
use crate::item::audience::Audience;
use crate::item::id::ItemId;
use crate::policy::{FriendView, ItemRoute, club_entitled, device_entitled};
use crate::wire::{Announce, MAX_IDS_PER_MESSAGE, WireMessage};

/// Items waiting for the next push, and the friends known to hold them
/// already (they sent or announced them to us) with their hops; a holder is
/// skipped unless we can offer it more hops than it has.
#[derive(Debug, Default)]
pub(super) struct PushQueue {
    /// Queued items in order, each with its queue number and whether it
    /// came by catch-up (see `catch_up_announce`).
    pending: Vec<(ItemId, u64, bool)>,
    /// The ids in `pending`, for lookups (ordered like every engine set;
    /// at most one push batch of entries).
    queued: BTreeSet<ItemId>,
    /// Number given to the last queued item (see `queue_number`).
    seq: u64,
    /// Queued id → friends holding it (lookups only; one batch of entries).
    holders: BTreeMap<ItemId, Vec<(Arc<str>, u8)>>,
    deadline: Option<u64>,
}

impl PushQueue {
    /// When the batch leaves.
    pub(super) fn deadline(&self) -> Option<u64> {
        self.deadline
    }

    /// The number of the last item queued: a catch-up session started now
    /// covers every queued item numbered up to this.
    pub(super) fn queue_number(&self) -> u64 {
        self.seq
    }
}

impl Engine {
    /// Queues a held item for the next push; the first item of a batch
    /// starts the batch delay.
    pub(super) fn queue_push(&mut self, now_ms: u64, id: ItemId) {
        self.queue_push_as(now_ms, id, false);
    }

    /// Queues an item, marked if it arrived by catch-up. The first item of
    /// a batch starts the batch delay; the item that fills the batch
    /// (`push_batch_full`) sends it at once.
    pub(super) fn queue_push_as(&mut self, now_ms: u64, id: ItemId, by_catch_up: bool) {
        self.push.seq += 1;
        if self.push.queued.insert(id) {
            self.push.pending.push((id, self.push.seq, by_catch_up));
        } else if let Some(entry) = self.push.pending.iter_mut().find(|e| e.0 == id) {
            // Queued again (hops raised): a session started since the first
            // time may not hold it as it is now, so it is not covered.
            entry.1 = self.push.seq;
            entry.2 |= by_catch_up;
        }
        if self.push.pending.len() >= self.cfg.push_batch_full {
            // Full: it leaves when this input's timers run.
            self.push.deadline = Some(now_ms);
        } else if self.push.deadline.is_none() {
            self.push.deadline = Some(now_ms.saturating_add(self.cfg.push_batch_delay_ms));
        }
    }

    /// Sends the queued batch when this input's timers run (`Input::FlushPush`).
    pub(super) fn push_now(&mut self, now_ms: u64) {
        if !self.push.pending.is_empty() {
            self.push.deadline = Some(now_ms);
        }
    }

    /// Remembers that `peer` holds a queued item with `hops` left, so the
    /// push skips it unless ours can give it more.
    /// It is no longer known to lack it either (`lacks.rs`).
    pub(super) fn note_holder(&mut self, id: ItemId, peer: &str, hops: u8) {
        self.lacks.forget(peer, &id);
        if !self.push.queued.contains(&id) {
            return;
        }
        let peer = self.index.intern(peer);
        let list = self.push.holders.entry(id).or_default();
        match list.iter_mut().find(|(p, _)| **p == *peer) {
            Some(entry) => entry.1 = entry.1.max(hops),
            None => list.push((peer, hops)),
        }
    }

    /// Sends the batch: per friend, our items as envelopes and others' as
    /// one `Have`, each only where `may_send` admits it.
    pub(super) fn flush_push(&mut self, now_ms: u64, out: &mut Vec<Output>) {
        let pending = std::mem::take(&mut self.push.pending);
        let holders = std::mem::take(&mut self.push.holders);
        self.push.queued.clear();
        self.push.deadline = None;
        let mut offered = Vec::new();
        let local = self.index.known_name(&self.local);
        for (peer, p) in self.peers.sorted() {
            let view = FriendView {
                peer_id: peer,
                groups: &p.groups,
            };
            let mut eager = Vec::new();
            let mut lazy = Vec::new();
            // Items queued before our catch-up session to this friend began
            // are in that session's set: it sends them if the friend lacks
            // them, so pushing them too would deliver them twice.
            let covered = self.sync.covered_by_session(peer);
            for (id, number, by_catch_up) in &pending {
                let Some(meta) = self.index.get(id) else {
                    continue;
                };
                if covered.is_some_and(|c| *number <= c) {
                    // The session's end checks its hops if the friend holds it.
                    if !meta.is_by(local)
                        && offers_hops(&meta)
                        && self.allows(&meta.route(), &view, now_ms)
                    {
                        offered.push((peer.clone(), *id));
                    }
                    continue;
                }
                let offer = meta.hops_left.saturating_sub(1).min(meta.max_hops);
                if holders
                    .get(id)
                    .is_some_and(|h| h.iter().any(|(x, hops)| **x == **peer && *hops >= offer))
                {
                    continue;
                }
                let admitted = self.allows(&meta.route(), &view, now_ms)
                    || (*by_catch_up
                        && catch_up_announce(
                            &self.local,
                            &meta.route(),
                            &view,
                            &self.clubs,
                            &self.devices,
                        ));
                if !admitted {
                    continue;
                }
                let announce = Announce {
                    id: *id,
                    hops: meta.hops_left,
                };
                if meta.is_by(local) {
                    eager.push(announce)
                } else {
                    if offers_hops(&meta) {
                        offered.push((peer.clone(), *id));
                    }
                    lazy.push(announce)
                }
            }
            if !eager.is_empty() {
                out.push(Output::SendItems {
                    peer: peer.clone(),
                    session: None,
                    items: eager,
                });
            }
            for chunk in lazy.chunks(MAX_IDS_PER_MESSAGE) {
                out.push(Output::Send {
                    peer: peer.clone(),
                    message: WireMessage::Have {
                        items: chunk.to_vec(),
                    },
                });
            }
        }
        for (peer, id) in offered {
            self.hop_checks.offered(&peer, id);
        }
    }

    /// A friend announced items: pull the ones we lack, raise the hops of
    /// the ones it can pass on further than our copy can, and tell it when
    /// ours can go further than its copy (it then raises its own).
    pub(super) fn on_have(
        &mut self,
        now_ms: u64,
        peer: &str,
        announces: &[Announce],
        out: &mut Vec<Output>,
    ) {
        let mut counter = Vec::new();
        for a in announces {
            // The hops it can give us: none if it has none left (it says so
            // only for items it got by catch-up, so we can counter-announce).
            let offer = a.hops.checked_sub(1);
            if let Some(meta) = self.index.get(&a.id) {
                let ours = meta.hops_left.saturating_sub(1).min(meta.max_hops);
                let admitted = self
                    .friend_view(peer)
                    .is_some_and(|view| self.allows(&meta.route(), &view, now_ms));
                if ours > a.hops && admitted {
                    counter.push(Announce {
                        id: a.id,
                        hops: meta.hops_left,
                    });
                }
                let max_hops = meta.max_hops;
                self.heard_hops(peer, &a.id, a.hops);
                self.note_holder(a.id, peer, a.hops);
                if let Some(offer) = offer {
                    self.raise_hops(now_ms, a.id, offer.min(max_hops), peer, out);
                }
            } else if let Some(offer) = offer
                && !self.is_declined(&a.id)
                && (self.wants.len() < self.cfg.max_wanted || self.wants.contains(&a.id))
            {
                self.wants.add(
                    a.id,
                    peer,
                    offer,
                    now_ms,
                    self.cfg.want_timeout_ms,
                    self.cfg.max_wants_in_flight,
                );
            }
        }
        if !counter.is_empty() {
            out.push(Output::Send {
                peer: peer.to_owned(),
                message: WireMessage::Have { items: counter },
            });
        }
    }

    /// Gives our copy of `id` `hops_left` hops if that is more than it has,
    /// records the friend it now counts as coming from, and re-announces it.
    pub(super) fn raise_hops(
        &mut self,
        now_ms: u64,
        id: ItemId,
        hops_left: u8,
        from: &str,
        out: &mut Vec<Output>,
    ) {
        if !self.index.raise_hops(&id, hops_left, from) {
            return;
        }
        out.push(Output::UpdateRoute {
            id,
            received_from: from.to_owned(),
            hops_left,
        });
        out.push(Output::Event(Event::HopsRaised {
            id,
            hops_left,
            from: from.to_owned(),
        }));
        self.queue_push(now_ms, id);
        self.note_holder(id, from, hops_left.saturating_add(1));
    }

    /// Tells a friend which of its own public items we hold with fewer hops
    /// than it gives (`max_hops - 1`), so that it answers with a
    /// counter-announce: our copy came along a longer path while the link
    /// was down, and reconciliation compares ids, not hops. Done when the
    /// friend connects and when we serve its catch-up session.
    pub(super) fn announce_short_of_author(&self, peer: &str, out: &mut Vec<Output>) {
        // In id order: the index iterates by id.
        let Some(author) = self.index.known_name(peer) else {
            return;
        };
        let short: Vec<Announce> = self
            .index
            .iter()
            .filter(|(_, m)| {
                m.is_by(Some(author))
                    && travels_far(m.audience())
                    && m.hops_left < m.max_hops.saturating_sub(1)
            })
            .map(|(id, m)| Announce {
                id: *id,
                hops: m.hops_left,
            })
            .collect();
        for chunk in short.chunks(MAX_IDS_PER_MESSAGE) {
            out.push(Output::Send {
                peer: peer.to_owned(),
                message: WireMessage::Have {
                    items: chunk.to_vec(),
                },
            });
        }
    }

    /// A friend pulls items: send each we hold and `may_send` lets it have.
    pub(super) fn on_want(
        &mut self,
        now_ms: u64,
        peer: &str,
        ids: &[ItemId],
        out: &mut Vec<Output>,
    ) {
        let Some(view) = self.friend_view(peer) else {
            return;
        };
        let mut items = Vec::new();
        let mut refused = 0;
        for id in ids {
            match self.index.get(id) {
                Some(meta) if self.allows(&meta.route(), &view, now_ms) => {
                    items.push(Announce {
                        id: *id,
                        hops: meta.hops_left,
                    });
                }
                _ => refused += 1,
            }
        }
        // It asked us, so it credits our offer even if our answer is lost.
        for a in &items {
            self.hop_checks.confirmed(peer, &a.id);
        }
        if !items.is_empty() {
            out.push(Output::SendItems {
                peer: peer.to_owned(),
                session: None,
                items,
            });
        }
        if refused > 0 {
            out.push(Output::Event(Event::WantRefused {
                peer: peer.to_owned(),
                count: refused,
            }));
        }
    }
}

/// A public item we got by catch-up is also announced where `may_send`
/// would not send it — to its author, and with hops 0 if it has none left —
/// to every friend but the one that sent it. Catch-up compares ids, not hop
/// counts, so our copy may have fewer hops than a friend (above all its
/// author) can offer; such a friend answers with a counter-announce, which
/// raises ours. A club item likewise, but only to friends entitled to it
/// (a non-member never even hears its id) and while we are a member; a
/// `devices` item only to friends entitled to it (our devices).
/// Nothing else is ever announced outside `may_send`.
fn catch_up_announce(
    local: &str,
    item: &ItemRoute<'_>,
    friend: &FriendView<'_>,
    clubs: &ClubBook,
    devices: &DeviceBook,
) -> bool {
    if item.received_from == Some(friend.peer_id) {
        return false;
    }
    match item.audience {
        Audience::Public => true,
        Audience::Club(c) => {
            clubs.is_member_now(c, local) && club_entitled(c, item, friend.peer_id, clubs)
        }
        Audience::Devices => device_entitled(local, item, friend.peer_id, devices),
        _ => false,
    }
}

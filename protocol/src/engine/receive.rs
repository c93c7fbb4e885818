//! Taking items in: from friends (dedup by id, the one-hop rule, direct
//! messages only for their addressee, hops left
//! = min(sender's hops − 1, max_hops), withdrawn and expired refused) and
//! from this node (`Publish`). Accepting a retraction or replacement removes
//! its target and remembers it; expired items are dropped on a timer, and
//! items the driver's storage forgot on its own when it says so.

use super::Engine;
use super::input::ReceivedItem;
use super::output::{DeleteReason, Event, Output, RejectReason};
use crate::devices::DeviceError;
use crate::error::ItemError;
use crate::item::audience::Audience;
use crate::item::body::Body;
use crate::item::id::ItemId;
use crate::item::record::ItemRecord;
use crate::item::verified::VerifiedItem;

impl Engine {
    /// An `Items` message from `peer`.
    pub(super) fn on_items(
        &mut self,
        now_ms: u64,
        peer: &str,
        session: Option<u64>,
        items: Vec<ReceivedItem>,
        invalid: Vec<ItemError>,
        out: &mut Vec<Output>,
    ) {
        let count = items.len() + invalid.len();
        for e in invalid {
            out.push(Output::Event(Event::Rejected {
                id: None,
                from: Some(peer.to_owned()),
                reason: RejectReason::Invalid(e),
            }));
        }
        for r in items {
            self.receive_one(now_ms, peer, r, session.is_some(), out);
        }
        if let Some(session) = session {
            self.sync_items_received(now_ms, peer, session, count, out);
        }
    }

    pub(super) fn receive_one(
        &mut self,
        now_ms: u64,
        peer: &str,
        r: ReceivedItem,
        by_catch_up: bool,
        out: &mut Vec<Output>,
    ) {
        let item = r.item;
        let id = item.id();
        let announcers = self.wants.received(&id);
        let reject = |reason| {
            Output::Event(Event::Rejected {
                id: Some(id),
                from: Some(peer.to_owned()),
                reason,
            })
        };
        if item.expires_ms().is_some_and(|e| e <= now_ms) {
            out.push(reject(RejectReason::Expired));
            return;
        }
        if let Some(meta) = self.index.get(&id) {
            let max_hops = meta.max_hops;
            out.push(Output::Event(Event::Duplicate {
                id,
                from: Some(peer.to_owned()),
            }));
            self.note_holder(id, peer, r.hops);
            if let Some(offer) = r.hops.checked_sub(1) {
                self.raise_hops(now_ms, id, offer.min(max_hops), peer, out);
            }
            self.heard_hops(peer, &id, r.hops);
            return;
        }
        let author = item.author_peer_id();
        let reason = if self.index.is_withdrawn(&id, author) {
            Some(RejectReason::Withdrawn)
        } else if *author == *self.local {
            Some(RejectReason::OwnItem)
        } else if !item.audience().admits_receiver(&self.local) {
            Some(RejectReason::NotAddressedToUs)
        } else if !matches!(
            item.audience(),
            Audience::Public | Audience::Club(_) | Audience::Devices
        ) && author != peer
        {
            Some(RejectReason::NotFromAuthor)
        } else if r.hops == 0 {
            Some(RejectReason::NoHopsLeft)
        } else {
            self.club_refusal(Some(peer), &item)
                .or_else(|| self.device_refusal(Some(peer), &item))
        };
        if let Some(reason) = reason {
            if reason == RejectReason::BadDeviceLink(DeviceError::NotOurs) {
                self.park_statement(peer, r.hops, &item);
            }
            out.push(reject(reason));
            return;
        }
        if self.over_quota(now_ms, &item) {
            out.push(reject(RejectReason::OverQuota));
            return;
        }
        if self.over_link_rate(now_ms, peer, &item) {
            out.push(reject(RejectReason::LinkRate));
            return;
        }
        // Our copy travels one hop less than the best copy offered to us:
        // the sender's, or an announcer's still waiting in the want list.
        let max_hops = item.max_hops();
        let mut hops_left = (r.hops - 1).min(max_hops);
        let mut from = peer;
        for (p, offer) in &announcers {
            if (*offer).min(max_hops) > hops_left {
                hops_left = (*offer).min(max_hops);
                from = p;
            }
        }
        out.push(Output::Event(Event::Accepted {
            id,
            from: Some(peer.to_owned()),
        }));
        let stranger_public = self.is_stranger_public(&item).then(|| item.created_ms());
        self.accept(
            now_ms,
            item,
            Some(from.to_owned()),
            hops_left,
            by_catch_up,
            out,
        );
        if let Some(created_ms) = stranger_public {
            self.shelve(created_ms, id, out);
        }
        self.note_holder(id, peer, r.hops);
        for (p, offer) in &announcers {
            self.note_holder(id, p, offer.saturating_add(1));
        }
    }

    /// An item made here.
    pub(super) fn publish(&mut self, now_ms: u64, item: VerifiedItem, out: &mut Vec<Output>) {
        let id = item.id();
        let reject = |reason| {
            Output::Event(Event::Rejected {
                id: Some(id),
                from: None,
                reason,
            })
        };
        if item.author_peer_id() != &*self.local {
            out.push(reject(RejectReason::NotOurs));
        } else if item.expires_ms().is_some_and(|e| e <= now_ms) {
            out.push(reject(RejectReason::Expired));
        } else if self.index.contains(&id) {
            out.push(Output::Event(Event::Duplicate { id, from: None }));
        } else if self.index.is_withdrawn(&id, &self.local) {
            out.push(reject(RejectReason::Withdrawn));
        } else if let Some(reason) = self
            .club_refusal(None, &item)
            .or_else(|| self.device_refusal(None, &item))
        {
            out.push(reject(reason));
        } else {
            out.push(Output::Event(Event::Accepted { id, from: None }));
            let hops = item.max_hops();
            self.accept(now_ms, item, None, hops, false, out);
        }
    }

    /// Stores a new item, applies what it withdraws and queues it for push
    /// (also with no hops left if it came by catch-up: see `catch_up_announce`).
    fn accept(
        &mut self,
        now_ms: u64,
        item: VerifiedItem,
        received_from: Option<String>,
        hops_left: u8,
        by_catch_up: bool,
        out: &mut Vec<Output>,
    ) {
        let record = ItemRecord::of(&item, hops_left, received_from.clone());
        let club_change = match item.body() {
            Body::ClubChange(c) => Some(c.clone()),
            _ => None,
        };
        let device_statement = match item.body() {
            Body::DeviceLink(s) => Some(s.clone()),
            _ => None,
        };
        self.index.insert(&record);
        out.push(Output::Store {
            item,
            received_from,
            hops_left,
        });
        if let Some(target) = record.retracts {
            self.withdraw(
                target,
                &record.author,
                DeleteReason::Retracted { by: record.id },
                out,
            );
        }
        if let Some(target) = record.replaces {
            self.withdraw(
                target,
                &record.author,
                DeleteReason::Replaced { by: record.id },
                out,
            );
        }
        if let Some(change) = club_change {
            self.apply_club_change(
                now_ms,
                record.id,
                record.created_ms,
                &record.author,
                &change,
                out,
            );
        }
        if let Some(statement) = device_statement {
            self.apply_device_statement(now_ms, &statement, out);
        }
        if hops_left > 0 || by_catch_up {
            self.queue_push_as(now_ms, record.id, by_catch_up);
        }
    }

    /// `author` withdrew `target`: remember it, and delete our copy if that
    /// author wrote it (nobody may withdraw someone else's item).
    fn withdraw(
        &mut self,
        target: ItemId,
        author: &str,
        reason: DeleteReason,
        out: &mut Vec<Output>,
    ) {
        self.index.add_tombstone(target, author);
        if self
            .index
            .get(&target)
            .is_some_and(|m| m.author() == &*author)
        {
            if let Some(meta) = self.index.remove(&target) {
                self.unshelve(meta.created_ms, &target);
            }
            let by = match &reason {
                DeleteReason::Retracted { by } | DeleteReason::Replaced { by } => *by,
                DeleteReason::Expired | DeleteReason::NotAClubMember | DeleteReason::Evicted => {
                    target
                }
            };
            out.push(Output::Delete { id: target, reason });
            out.push(Output::Event(Event::Withdrawn { target, by }));
        }
    }

    /// Drops every item whose expiry has passed.
    pub(super) fn expire_due(&mut self, now_ms: u64, out: &mut Vec<Output>) {
        for (id, created_ms) in self.index.take_expired(now_ms) {
            self.unshelve(created_ms, &id);
            out.push(Output::Delete {
                id,
                reason: DeleteReason::Expired,
            });
            out.push(Output::Event(Event::Expired { id }));
        }
    }

    /// Forgets `ids`, which the driver's storage deleted on its own (the
    /// memory's pruning): they are no longer held, so no sync set, offer
    /// or answer to a `want` names them from now on (a session already
    /// under way leaves out those it has not sent yet). Nothing is
    /// remembered of them, unlike a withdrawn item, and nothing is asked of
    /// the driver. Returns how many were held.
    pub fn forget(&mut self, ids: &[ItemId]) -> usize {
        let mut forgotten = 0;
        for id in ids {
            if let Some(meta) = self.index.remove(id) {
                self.unshelve(meta.created_ms, id);
                forgotten += 1;
            }
        }
        forgotten
    }
}

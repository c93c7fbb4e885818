//! The quota gate (`quota.rs`): who counts as trusted, the refusal of an
//! item past its author's budget at the edge (before it is stored or queued
//! for relay), and the retention bound on strangers' public items.

use std::sync::Arc;

use super::Engine;
use super::output::{DeleteReason, Output};
use super::quota::{Refused, Usage};
use crate::item::audience::Audience;
use crate::item::id::ItemId;
use crate::item::unreadable::Unreadable;
use crate::item::verified::VerifiedItem;

impl Engine {
    /// The friends the driver lets in, connected or not (it calls this at
    /// start and whenever its friend list changes). Their items, like those
    /// of the connected friends and of the members of this node's clubs,
    /// count against the trusted budget; everybody else is a stranger.
    pub fn set_trusted(&mut self, peers: impl IntoIterator<Item = String>) {
        self.trusted = peers.into_iter().map(|p| self.index.intern(&p)).collect();
        let trusted = std::mem::take(&mut self.trusted);
        self.declined.forget_where(|a| trusted.contains(a));
        self.trusted = trusted;
        self.rebuild_shelf();
    }

    /// What `author`'s items held here cost.
    pub fn usage(&self, author: &str) -> Usage {
        self.index.usage(author)
    }

    /// The authors refused since the engine started, most items first (at
    /// most `MAX_REFUSED_AUTHORS`).
    pub fn refused(&self) -> Vec<Refused> {
        self.refusals.list()
    }

    /// How many strangers' public items are held (bounded by
    /// `Quotas::strangers_kept`).
    pub fn strangers_held(&self) -> usize {
        self.shelf.len()
    }

    /// A friend (known to the driver or connected: only friends connect),
    /// one of this node's person's devices, or a fellow member of one of
    /// this node's clubs.
    fn is_trusted(&self, author: &str) -> bool {
        self.trusted.contains(author)
            || self.peers.contains_key(author)
            || self.devices.is_device(author)
            || self.clubs.clubs().any(|c| {
                self.clubs.is_member_now(c, author) && self.clubs.is_member_now(c, &self.local)
            })
    }

    /// True (and counted against its author) if `item` would take its
    /// author past the budget.
    /// True if a stranger's item from `peer` is past the link's rate.
    pub(super) fn over_link_rate(&mut self, now_ms: u64, peer: &str, item: &VerifiedItem) -> bool {
        if self.is_trusted(item.author_peer_id()) {
            return false;
        }
        let per_minute = self.cfg.quotas.stranger_items_per_link_minute;
        self.peers
            .get_mut(peer)
            .is_some_and(|p| !p.stranger_rate.take(per_minute, now_ms))
    }

    /// An item declined before (refused or evicted, and remembered) is
    /// declined again without a second look.
    pub(super) fn over_quota(&mut self, now_ms: u64, item: &VerifiedItem) -> bool {
        let author = item.author_peer_id();
        let bytes = u32::try_from(item.envelope_bytes().len()).unwrap_or(u32::MAX);
        if self.declined.author(&item.id()).is_none() {
            let trusted = self.is_trusted(author);
            if self
                .cfg
                .quotas
                .admits(trusted, self.index.usage(author), bytes)
            {
                return false;
            }
        }
        // Not interned: a flood of new authors must not grow the index.
        let name = self.refusals.count(now_ms, author, bytes);
        self.declined.remember(item.id(), item.created_ms(), name);
        true
    }

    /// True for an id declined and remembered, or remembered as a newer
    /// version's item: a `Have` of it is not answered with a `Want`.
    pub(super) fn is_declined(&self, id: &ItemId) -> bool {
        self.declined.author(id).is_some() || self.unreadable.author(id).is_some()
    }

    /// The remembered declined and unreadable items as (creation time, id):
    /// the range-sync set this node answers a friend's catch-up with counts
    /// them as held, so the friend does not send them again every resync.
    pub(super) fn declined_items(&self) -> impl Iterator<Item = (u64, ItemId)> + '_ {
        self.declined.iter().chain(self.unreadable.iter())
    }

    /// Remembers newer versions' items a friend sent (`Inbound::Items`'s
    /// `unreadable`): never kept or relayed, since the rules of an audience
    /// or kind this node does not know cannot be checked, and never asked
    /// for again. Bounded as the declined items are; a restart forgets
    /// them, so an upgraded node gets them at its first catch-up.
    pub(super) fn remember_unreadable(&mut self, items: &[Unreadable]) {
        for u in items {
            self.unreadable
                .remember(u.id, u.created_ms, Arc::from(u.author.as_str()));
        }
    }

    /// True for a public item by a stranger: one the retention bound
    /// covers.
    pub(super) fn is_stranger_public(&self, item: &VerifiedItem) -> bool {
        let author = item.author_peer_id();
        *author != *self.local
            && matches!(item.audience(), Audience::Public)
            && !self.is_trusted(author)
    }

    /// After a stranger's public item was accepted: it goes on the shelf,
    /// and past the bound the oldest stranger's item is dropped (the new
    /// one too, if it is the oldest).
    pub(super) fn shelve(&mut self, created_ms: u64, id: ItemId, out: &mut Vec<Output>) {
        self.shelf.put(created_ms, id);
        let keep = self.cfg.quotas.strangers_kept as usize;
        while self.shelf.len() > keep {
            let Some(id) = self.shelf.pop_oldest() else {
                break;
            };
            let Some((author, created_ms)) = self
                .index
                .get(&id)
                .map(|m| (m.author().to_owned(), m.created_ms))
            else {
                continue;
            };
            // A club fellow or a new friend since it was shelved: only
            // the shelf forgets it.
            if !self.is_trusted(&author) && self.index.remove(&id).is_some() {
                self.declined
                    .remember(id, created_ms, Arc::from(author.as_str()));
                out.push(Output::Delete {
                    id,
                    reason: DeleteReason::Evicted,
                });
            }
        }
    }

    /// An item left the index some other way (withdrawn, expired).
    pub(super) fn unshelve(&mut self, created_ms: u64, id: &ItemId) {
        self.shelf.remove(created_ms, id);
    }

    fn rebuild_shelf(&mut self) {
        let strangers: Vec<(u64, ItemId)> = self
            .index
            .iter()
            .filter(|(_, m)| {
                m.author() != &*self.local
                    && matches!(m.audience(), Audience::Public)
                    && !self.is_trusted(m.author())
            })
            .map(|(id, m)| (m.created_ms, *id))
            .collect();
        self.shelf.clear();
        for (created_ms, id) in strangers {
            self.shelf.put(created_ms, id);
        }
    }
}

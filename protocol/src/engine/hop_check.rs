//! Hop-count checks after catch-up. Reconciliation compares ids, not hop
//! counts, so a friend may hold an item we share with fewer hops than we can
//! give it: our `Have` (or push) was lost and a copy came along a longer
//! path, or the link was down while the item passed. After each catch-up
//! session we start, we re-announce, with our hops, the public items the
//! friend holds (in our set and not missing there) that we could pass it
//! with at least one hop left and that are still unconfirmed toward it:
//!
//! - all of them in the first session after the friend connects;
//! - later, those we offered it (push or `Have`) since the last session and
//!   that it did not confirm: it pulled the item from us (it then credits
//!   our offer even if our answer is lost), or sent or announced it to us
//!   with at least our offer.
//!
//! The friend raises its copy if ours offers more, and counter-announces if
//! its own offers us more. Raising is not answered, so a check announce
//! that is lost would leave the friend's copy short (and every friend past
//! it without the item) until the next connect: each one that the friend
//! does not confirm is announced once more at the next finished session.
//! When nothing was lost, every offer is confirmed or answered, so a resync
//! of equal sets re-announces nothing beyond those second tries.

use std::collections::BTreeSet;

use super::index::MetaRef;
use super::peer_map::PeerMap;
use crate::item::audience::Audience;
use crate::item::id::ItemId;

/// True for a public, club or devices item whose copy here lets a friend pass it on
/// at least once more (our hops − 1 ≥ 1): only then can a friend's copy be
/// short of what we offer in a way that matters further out.
pub(super) fn offers_hops(meta: &MetaRef<'_>) -> bool {
    travels_far(meta.audience()) && meta.hops_left.saturating_sub(1).min(meta.max_hops) >= 1
}

/// True for the audiences relayed beyond one hop (public, club, devices):
/// their copies' hop counts are repaired when a shorter path shows up.
pub(super) fn travels_far(audience: &Audience) -> bool {
    matches!(
        audience,
        Audience::Public | Audience::Club(_) | Audience::Devices
    )
}

/// What is still to be checked toward one connected friend.
#[derive(Debug, Default)]
struct PeerChecks {
    /// Check every shared item at the next finished session (set on connect).
    full: bool,
    /// Offered to the friend, not confirmed, not yet checked.
    pending: BTreeSet<ItemId>,
    /// Announced by the last finished session's check for the first time
    /// and not confirmed since: the next session announces them again.
    retry: BTreeSet<ItemId>,
}

/// Whether a shared item is announced at the end of a session, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Check {
    /// Not owed a check.
    Skip,
    /// Owed (full check or pending offer): a first announce.
    First,
    /// The second try of the last session's first announce.
    Again,
}

/// Hop checks still owed to each connected friend.
#[derive(Debug, Default)]
pub(super) struct HopChecks {
    peers: PeerMap<PeerChecks>,
}

impl HopChecks {
    /// A friend connected: its first finished session checks everything.
    pub(super) fn connected(&mut self, peer: &str) {
        let c = self.peers.entry(peer.to_owned()).or_default();
        c.full = true;
        c.pending.clear();
    }

    /// A friend disconnected: forget what we owed it (a reconnect checks all).
    pub(super) fn disconnected(&mut self, peer: &str) {
        self.peers.remove(peer);
    }

    /// We offered `id` to `peer` and do not know that it took our offer.
    pub(super) fn offered(&mut self, peer: &str, id: ItemId) {
        if let Some(c) = self.peers.get_mut(peer) {
            c.pending.insert(id);
        }
    }

    /// `peer` took our offer of `id`, or holds at least as much.
    pub(super) fn confirmed(&mut self, peer: &str, id: &ItemId) {
        if let Some(c) = self.peers.get_mut(peer) {
            c.pending.remove(id);
            c.retry.remove(id);
        }
    }

    /// A session toward `peer` starts: returns whether it does the full
    /// check (it gives the flag back with `session_failed` if it dies).
    pub(super) fn session_started(&mut self, peer: &str) -> bool {
        self.peers
            .get_mut(peer)
            .is_some_and(|c| std::mem::take(&mut c.full))
    }

    /// A session that was to do the full check did not finish.
    pub(super) fn session_failed(&mut self, peer: &str, full: bool) {
        if full && let Some(c) = self.peers.get_mut(peer) {
            c.full = true;
        }
    }

    /// At the end of a session, before its checks: the ids owed a second
    /// try (the caller hands back the new ones with `set_retry`).
    pub(super) fn take_retry(&mut self, peer: &str) -> BTreeSet<ItemId> {
        self.peers
            .get_mut(peer)
            .map(|c| std::mem::take(&mut c.retry))
            .unwrap_or_default()
    }

    /// The ids this session's check announced for the first time.
    pub(super) fn set_retry(&mut self, peer: &str, retry: BTreeSet<ItemId>) {
        if let Some(c) = self.peers.get_mut(peer) {
            c.retry = retry;
        }
    }

    /// At the end of a session: whether `id`, which the friend holds, must
    /// be checked, given the ids owed a second try; it is no longer pending
    /// either way.
    pub(super) fn take(
        &mut self,
        peer: &str,
        id: &ItemId,
        full: bool,
        retry: &BTreeSet<ItemId>,
    ) -> Check {
        let pending = self
            .peers
            .get_mut(peer)
            .is_some_and(|c| c.pending.remove(id));
        if full || pending {
            Check::First
        } else if retry.contains(id) {
            Check::Again
        } else {
            Check::Skip
        }
    }

    /// Drops pending ids no longer held (withdrawn, expired).
    pub(super) fn retain_held(&mut self, peer: &str, held: impl Fn(&ItemId) -> bool) {
        if let Some(c) = self.peers.get_mut(peer) {
            c.pending.retain(|id| held(id));
        }
    }
}

impl super::Engine {
    /// `peer` told us it holds `id` with `their_hops` (it sent or announced
    /// it): confirmed if that is at least what we can offer it.
    pub(super) fn heard_hops(&mut self, peer: &str, id: &ItemId, their_hops: u8) {
        let ours = self
            .index
            .get(id)
            .map(|m| m.hops_left.saturating_sub(1).min(m.max_hops));
        if ours.is_some_and(|o| their_hops >= o) {
            self.hop_checks.confirmed(peer, id);
        }
    }
}

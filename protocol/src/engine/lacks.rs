//! What each friend is known to lack and cannot get from us.
//!
//! Both sides of a catch-up session must reconcile the same set, or every
//! periodic session pays for the same differences again (an id list names
//! every item of a range that differs). Most of them are items one side
//! holds with no hop left: the friend beyond it lacks them and will never
//! get them from it. A session we start learns them (the friend lacks them,
//! `may_send` refuses them); from then on our sets toward that friend, as
//! initiator and as responder, leave them out, so in-sync friends reconcile
//! equal sets and a periodic session costs the opening fingerprints and an
//! answer of one byte.
//!
//! An entry is dropped as soon as the friend is seen to hold the item (it
//! announces or sends it: `note_holder`; or a session finds it there) or we
//! become able to send it (our hops were raised). Entries for items we no
//! longer hold are dropped at the next session's set walk. The lists
//! outlive a disconnect: a phone that comes back every twenty minutes would
//! otherwise pay for the same differences again each time (in the
//! simulated city that was a quarter of the bytes). What the friend gained
//! while away may then reach us once more from it, a duplicate that the
//! simulation counts (payload copies per delivery were 1.005 in `city`
//! with one served session). A friend removed from the friend list keeps
//! its list until the node restarts (the engine is not told of removals);
//! the bound below holds per friend.

use std::collections::BTreeSet;

use super::peer_map::PeerMap;
use crate::item::id::ItemId;

/// Most items remembered as lacking per friend; beyond it the differences
/// stay in the sessions (they cost ids on the wire, never a missed item).
/// 1,024 ids are 32 KiB per friend (about 50 KiB in the tree), so a server
/// at its 2,048-connection cap spends 100 MiB at most, and it covers the
/// edge of the hop limit in the simulated city (about 106 items per link
/// over the whole run) ten times over.
pub const MAX_LACKS_PER_FRIEND: usize = 1_024;

/// Per friend, the items it lacks that we may not send it.
#[derive(Debug, Default)]
pub(super) struct Lacks {
    per_peer: PeerMap<BTreeSet<ItemId>>,
}

impl Lacks {
    /// `peer` lacks `id` and we may not send it. Ignored past the bound.
    pub(super) fn add(&mut self, peer: &str, id: ItemId) {
        let set = match self.per_peer.get_mut(peer) {
            Some(set) => set,
            None => self.per_peer.entry(peer.to_owned()).or_default(),
        };
        if set.len() < MAX_LACKS_PER_FRIEND {
            set.insert(id);
        }
    }

    /// What `peer` is known to lack, looked up once for a walk over the
    /// whole index (a session's set) rather than once per item.
    pub(super) fn of(&self, peer: &str) -> Option<&BTreeSet<ItemId>> {
        self.per_peer.get(peer)
    }

    /// True if `peer` is known to lack `id`.
    #[cfg(test)]
    pub(super) fn contains(&self, peer: &str, id: &ItemId) -> bool {
        self.of(peer).is_some_and(|s| s.contains(id))
    }

    /// `peer` holds `id` now, or we can send it: forget the entry.
    pub(super) fn forget(&mut self, peer: &str, id: &ItemId) {
        if let Some(set) = self.per_peer.get_mut(peer) {
            set.remove(id);
            if set.is_empty() {
                self.per_peer.remove(peer);
            }
        }
    }

    /// Keeps only the entries of `peer` for which `keep` is true.
    pub(super) fn retain(&mut self, peer: &str, keep: impl FnMut(&ItemId) -> bool) {
        if let Some(set) = self.per_peer.get_mut(peer) {
            set.retain(keep);
            if set.is_empty() {
                self.per_peer.remove(peer);
            }
        }
    }

    /// How many items `peer` is known to lack.
    #[cfg(test)]
    pub(super) fn len_of(&self, peer: &str) -> usize {
        self.per_peer.get(peer).map_or(0, BTreeSet::len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u16) -> ItemId {
        ItemId::numbered(n)
    }

    #[test]
    fn entries_are_per_friend_and_forgotten_one_by_one() {
        let mut l = Lacks::default();
        l.add("bob", id(1));
        l.add("bob", id(2));
        assert!(l.contains("bob", &id(1)));
        assert!(!l.contains("carol", &id(1)));
        l.forget("bob", &id(1));
        assert!(!l.contains("bob", &id(1)));
        assert_eq!(l.len_of("bob"), 1);
        l.retain("bob", |_| false);
        assert_eq!(l.len_of("bob"), 0);
    }

    #[test]
    fn a_friend_holds_at_most_the_bound() {
        let mut l = Lacks::default();
        for n in 0..=MAX_LACKS_PER_FRIEND as u16 {
            l.add("bob", id(n));
        }
        assert_eq!(l.len_of("bob"), MAX_LACKS_PER_FRIEND);
        assert!(!l.contains("bob", &id(MAX_LACKS_PER_FRIEND as u16)));
    }
}

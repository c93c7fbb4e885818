//! [`PeerMap`]: the engine's map keyed by friend. Looked up on nearly every
//! input, so hashed (FxHash: no seed, and its keys are the authenticated
//! peer ids of friends, never chosen by a stranger); B-tree searches over
//! 52-byte peer ids that share their first 8 bytes were 14 % of a
//! 100,000-node simulation. It lets nothing walk it in hash order: a walk
//! that can reach the outputs goes in sorted peer id order ([`PeerMap::sorted`],
//! [`PeerMap::take_sorted`]), and the only unordered view
//! ([`PeerMap::values_any_order`]) is for folds whose result ignores order.

use std::collections::hash_map::Entry;

use rustc_hash::FxHashMap;

/// Values by friend peer id; see the module doc.
#[derive(Debug)]
pub(super) struct PeerMap<V> {
    map: FxHashMap<String, V>,
}

impl<V> Default for PeerMap<V> {
    fn default() -> Self {
        PeerMap {
            map: FxHashMap::default(),
        }
    }
}

impl<V> PeerMap<V> {
    pub(super) fn get(&self, peer: &str) -> Option<&V> {
        self.map.get(peer)
    }

    pub(super) fn get_mut(&mut self, peer: &str) -> Option<&mut V> {
        self.map.get_mut(peer)
    }

    pub(super) fn contains_key(&self, peer: &str) -> bool {
        self.map.contains_key(peer)
    }

    pub(super) fn insert(&mut self, peer: String, value: V) -> Option<V> {
        self.map.insert(peer, value)
    }

    pub(super) fn remove(&mut self, peer: &str) -> Option<V> {
        self.map.remove(peer)
    }

    pub(super) fn entry(&mut self, peer: String) -> Entry<'_, String, V> {
        self.map.entry(peer)
    }

    pub(super) fn len(&self) -> usize {
        self.map.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The values in no particular order: only for folds whose result does
    /// not depend on it (a minimum, a count).
    pub(super) fn values_any_order(&self) -> impl Iterator<Item = &V> {
        self.map.values()
    }

    /// Every entry, in peer id order.
    pub(super) fn sorted(&self) -> Vec<(&String, &V)> {
        self.sorted_where(|_| true)
    }

    /// The entries whose value passes `keep`, in peer id order: what
    /// `sorted()` filtered gives, but only the kept entries are collected
    /// and sorted. Timers check every session on every input, and usually
    /// none is due, so then this allocates nothing.
    pub(super) fn sorted_where(&self, keep: impl Fn(&V) -> bool) -> Vec<(&String, &V)> {
        let mut kept: Vec<(&String, &V)> = self.map.iter().filter(|(_, v)| keep(v)).collect();
        kept.sort_unstable_by(|a, b| a.0.cmp(b.0));
        kept
    }

    /// Empties the map; its entries in peer id order.
    pub(super) fn take_sorted(&mut self) -> Vec<(String, V)> {
        let mut all: Vec<(String, V)> = std::mem::take(&mut self.map).into_iter().collect();
        all.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_go_in_peer_id_order_whatever_the_insertion_order() {
        let mut m = PeerMap::default();
        for (i, p) in ["carol", "alice", "dave", "bob"].into_iter().enumerate() {
            m.insert(p.to_owned(), i);
        }
        let keys: Vec<&str> = m.sorted().into_iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["alice", "bob", "carol", "dave"]);
        let odd: Vec<&str> = m
            .sorted_where(|v| v % 2 == 1)
            .into_iter()
            .map(|(k, _)| k.as_str())
            .collect();
        assert_eq!(odd, ["alice", "bob"]);
        assert!(m.sorted_where(|v| *v > 9).is_empty());
        assert_eq!(m.values_any_order().copied().min(), Some(0));
        let taken: Vec<(String, usize)> = m.take_sorted();
        assert_eq!(taken[0], ("alice".to_owned(), 1));
        assert_eq!(taken[3], ("dave".to_owned(), 2));
        assert!(m.is_empty());
    }
}

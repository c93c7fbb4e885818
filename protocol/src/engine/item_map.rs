//! The held items' metadata by id, in id order: one sorted vector holds the
//! bulk and a small B-tree holds what changed since the vector was last
//! rebuilt (items added, and items of the vector removed).
//!
//! Why not one `BTreeMap`: a node holding a million items kept about 7 B of
//! B-tree node overhead per entry beside the entry's 72 B, and building the
//! tree at start-up needed the entries collected in a list first, so the
//! list and the tree (each about the size of the index) coexisted: a
//! start-up peak of 1.92× what the engine then held (docs/benchmarks.md).
//! Here the list *is* the index: the vector is filled once from the rows
//! (storage says how many) and sorted in place, and nothing is copied. Lookups are a binary
//! search (20 comparisons at a million) after a look in the small tree.
//!
//! Changes go to the tree until it holds [`MERGE_FRACTION`]-th of the
//! vector (at least [`MIN_MERGE_ENTRIES`]); then removed entries leave the
//! vector in place and added ones are appended and sorted in, without a
//! second copy of the vector.

use std::collections::BTreeMap;
use std::iter::Peekable;

use crate::item::id::ItemId;

/// Changes held in the tree before they are merged into the vector, as a
/// fraction of the vector: an eighth keeps the tree's own overhead (about
/// 80 B per entry) under a tenth of the index, and a merge (a pass and a
/// sort of the vector, tens of ms at a million items) comes at most once
/// per an eighth of the index's size in changes.
pub(crate) const MERGE_FRACTION: usize = 8;

/// Fewest changes that make a merge worth it on a small index: 4,096 keeps
/// merges rare on a phone with a few thousand items (each one a pass over
/// the vector) while the tree stays a few hundred KiB.
pub(crate) const MIN_MERGE_ENTRIES: usize = 4_096;

/// A map from item id to `V` in id order (see the module doc).
#[derive(Debug, Clone)]
pub(crate) struct ItemMap<V> {
    /// Sorted by id, no id twice.
    base: Vec<(ItemId, V)>,
    /// `Some`: an item not in `base`. `None`: an item of `base` removed.
    delta: BTreeMap<ItemId, Option<V>>,
    /// How many `Some` entries `delta` holds.
    added: usize,
    /// How many `None` entries `delta` holds.
    removed: usize,
    /// [`MIN_MERGE_ENTRIES`], smaller in tests.
    min_merge: usize,
}

impl<V> Default for ItemMap<V> {
    fn default() -> Self {
        ItemMap {
            base: Vec::new(),
            delta: BTreeMap::new(),
            added: 0,
            removed: 0,
            min_merge: MIN_MERGE_ENTRIES,
        }
    }
}

impl<V: Clone> ItemMap<V> {
    /// The map of `entries`, sorted in place (an unstable sort: no buffer
    /// beside the vector). Of two entries with the same id, the one
    /// `better(candidate, kept)` prefers is kept; the sort is deterministic,
    /// so ties always end the same way.
    pub(crate) fn from_vec(
        mut entries: Vec<(ItemId, V)>,
        better: impl Fn(&V, &V) -> bool,
    ) -> ItemMap<V> {
        if !entries.is_sorted_by(|a, b| a.0 < b.0) {
            entries.sort_unstable_by_key(|a| a.0);
            entries.dedup_by(|candidate, kept| {
                if candidate.0 != kept.0 {
                    return false;
                }
                if better(&candidate.1, &kept.1) {
                    std::mem::swap(candidate, kept);
                }
                true
            });
        }
        entries.shrink_to_fit();
        ItemMap {
            base: entries,
            ..ItemMap::default()
        }
    }

    fn base_index(&self, id: &ItemId) -> Result<usize, usize> {
        find(&self.base, id)
    }

    /// The value of `id`.
    pub(crate) fn get(&self, id: &ItemId) -> Option<&V> {
        match self.delta.get(id) {
            Some(entry) => entry.as_ref(),
            None => self.base_index(id).ok().map(|i| &self.base[i].1),
        }
    }

    /// The value of `id`, to change in place.
    pub(crate) fn get_mut(&mut self, id: &ItemId) -> Option<&mut V> {
        if let Some(entry) = self.delta.get_mut(id) {
            return entry.as_mut();
        }
        let i = find(&self.base, id).ok()?;
        Some(&mut self.base[i].1)
    }

    /// True if `id` is in the map.
    pub(crate) fn contains_key(&self, id: &ItemId) -> bool {
        self.get(id).is_some()
    }

    /// Entries in the map.
    pub(crate) fn len(&self) -> usize {
        self.base.len() - self.removed + self.added
    }

    /// Sets `id` to `value`; returns the value it replaced.
    pub(crate) fn insert(&mut self, id: ItemId, value: V) -> Option<V> {
        if let Some(entry) = self.delta.get_mut(&id) {
            match entry {
                Some(old) => return Some(std::mem::replace(old, value)),
                // An item of the vector, removed: it is back, in place.
                None => {
                    self.delta.remove(&id);
                    self.removed -= 1;
                    if let Ok(i) = self.base_index(&id) {
                        self.base[i].1 = value;
                    }
                    return None;
                }
            }
        }
        match self.base_index(&id) {
            Ok(i) => Some(std::mem::replace(&mut self.base[i].1, value)),
            Err(_) => {
                self.delta.insert(id, Some(value));
                self.added += 1;
                self.merge_if_due();
                None
            }
        }
    }

    /// Removes `id`; returns its value.
    pub(crate) fn remove(&mut self, id: &ItemId) -> Option<V> {
        match self.delta.get(id) {
            Some(Some(_)) => {
                self.added -= 1;
                self.delta.remove(id).flatten()
            }
            Some(None) => None,
            None => {
                let i = self.base_index(id).ok()?;
                let value = self.base[i].1.clone();
                self.delta.insert(*id, None);
                self.removed += 1;
                self.merge_if_due();
                Some(value)
            }
        }
    }

    /// Every entry, in id order.
    pub(crate) fn iter(&self) -> Iter<'_, V> {
        Iter {
            base: self.base.iter().peekable(),
            delta: self.delta.iter().peekable(),
        }
    }

    fn merge_if_due(&mut self) {
        let limit = (self.base.len() / MERGE_FRACTION).max(self.min_merge);
        if self.delta.len() >= limit {
            self.merge();
        }
    }

    /// Folds the tree into the vector: removed entries leave it, added
    /// ones are appended and sorted in (in place; the vector grows by the
    /// added entries only).
    fn merge(&mut self) {
        let delta = std::mem::take(&mut self.delta);
        if self.removed > 0 {
            self.base
                .retain(|(id, _)| !matches!(delta.get(id), Some(None)));
        }
        self.base.reserve_exact(self.added);
        self.base
            .extend(delta.into_iter().filter_map(|(id, v)| v.map(|v| (id, v))));
        // A sorted run and a sorted tail: the unstable sort needs no
        // buffer beside the vector.
        self.base.sort_unstable_by_key(|a| a.0);
        self.added = 0;
        self.removed = 0;
    }
}

/// Where `id` is (or would go) in a vector sorted by id.
fn find<V>(base: &[(ItemId, V)], id: &ItemId) -> Result<usize, usize> {
    base.binary_search_by(|(k, _)| k.cmp(id))
}

/// The entries of an [`ItemMap`] in id order: the vector's and the tree's
/// merged, the vector's removed ones skipped.
pub(crate) struct Iter<'a, V> {
    base: Peekable<std::slice::Iter<'a, (ItemId, V)>>,
    delta: Peekable<std::collections::btree_map::Iter<'a, ItemId, Option<V>>>,
}

impl<'a, V> Iterator for Iter<'a, V> {
    type Item = (&'a ItemId, &'a V);

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let from_base = match (self.base.peek(), self.delta.peek()) {
                (None, None) => return None,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (Some((b, _)), Some((d, _))) => {
                    if b == *d {
                        // A removed item of the vector (the tree holds
                        // `None` for it): skip both.
                        self.base.next();
                        self.delta.next();
                        continue;
                    }
                    b < *d
                }
            };
            if from_base {
                return self.base.next().map(|(id, v)| (id, v));
            }
            match self.delta.next() {
                Some((id, Some(v))) => return Some((id, v)),
                // A removal whose id the vector lacks cannot happen; skip.
                Some((_, None)) => continue,
                None => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn id(n: u16) -> ItemId {
        let mut b = [0u8; 32];
        b[..2].copy_from_slice(&n.to_be_bytes());
        ItemId(b)
    }

    #[derive(Debug, Clone)]
    enum Op {
        Insert(u16, u32),
        Remove(u16),
        Raise(u16),
    }

    fn op() -> impl Strategy<Value = Op> {
        // Few distinct ids, so inserts, removals and re-inserts collide.
        prop_oneof![
            (0u16..600, any::<u32>()).prop_map(|(k, v)| Op::Insert(k, v)),
            (0u16..600).prop_map(Op::Remove),
            (0u16..600).prop_map(Op::Raise),
        ]
    }

    proptest! {
        /// Whatever the operations, and whenever merges happen, the map
        /// answers as a `BTreeMap` does.
        #[test]
        fn behaves_as_a_btree_map(
            start in proptest::collection::vec((0u16..600, any::<u32>()), 0..400),
            ops in proptest::collection::vec(op(), 0..3_000),
            min_merge in 1usize..64,
        ) {
            let mut model: BTreeMap<ItemId, u32> = BTreeMap::new();
            for (k, v) in &start {
                let best = model.get(&id(*k)).map_or(*v, |kept| (*kept).max(*v));
                model.insert(id(*k), best);
            }
            let mut map = ItemMap::from_vec(
                start.iter().map(|(k, v)| (id(*k), *v)).collect(),
                |candidate, kept| candidate > kept,
            );
            // Merges every few changes, so they happen amid everything else.
            map.min_merge = min_merge;
            for op in ops {
                match op {
                    Op::Insert(k, v) => prop_assert_eq!(map.insert(id(k), v), model.insert(id(k), v)),
                    Op::Remove(k) => prop_assert_eq!(map.remove(&id(k)), model.remove(&id(k))),
                    Op::Raise(k) => {
                        if let Some(v) = map.get_mut(&id(k)) {
                            *v = v.wrapping_add(1);
                        }
                        if let Some(v) = model.get_mut(&id(k)) {
                            *v = v.wrapping_add(1);
                        }
                    }
                }
                prop_assert_eq!(map.len(), model.len());
            }
            for k in 0..600 {
                prop_assert_eq!(map.get(&id(k)), model.get(&id(k)));
                prop_assert_eq!(map.contains_key(&id(k)), model.contains_key(&id(k)));
            }
            let got: Vec<(ItemId, u32)> = map.iter().map(|(k, v)| (*k, *v)).collect();
            let want: Vec<(ItemId, u32)> = model.into_iter().collect();
            prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn unsorted_entries_are_sorted_and_the_better_of_two_wins() {
        let entries = vec![
            (id(3), 'c'),
            (id(1), 'b'),
            (id(3), 'a'),
            (id(2), 'd'),
            (id(3), 'b'),
        ];
        let map = ItemMap::from_vec(entries, |candidate, kept| candidate > kept);
        let got: Vec<(ItemId, char)> = map.iter().map(|(k, v)| (*k, *v)).collect();
        assert_eq!(got, [(id(1), 'b'), (id(2), 'd'), (id(3), 'c')]);
        assert_eq!(map.len(), 3);
    }

    #[test]
    fn changes_merge_into_the_vector_once_the_tree_is_full() {
        let mut map = ItemMap::from_vec((0..100).map(|k| (id(k), k)).collect(), |_, _| false);
        for k in 100..100 + MIN_MERGE_ENTRIES as u16 - 1 {
            map.insert(id(k), k);
        }
        assert_eq!(map.delta.len(), MIN_MERGE_ENTRIES - 1, "not yet");
        map.remove(&id(5));
        assert!(
            map.delta.is_empty(),
            "the change that fills the tree merges it"
        );
        assert_eq!(
            map.base.len(),
            100 + (MIN_MERGE_ENTRIES - 1) - 1,
            "the added entries are in, the removed one out"
        );
        assert!(map.base.is_sorted_by(|a, b| a.0 < b.0));
        assert_eq!(map.get(&id(5)), None);
        assert_eq!(map.get(&id(4_000)), Some(&4_000));
    }
}

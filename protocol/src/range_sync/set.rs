//! One side's set for a session: `(created_ms, id)` pairs sorted by time then
//! id, and, once the session key is known, the running sum of their keyed
//! hashes, so the fingerprint of any range is one subtraction.

use std::cmp::Ordering;

use siphasher::sip::SipHasher24;

use crate::item::id::ItemId;

/// Where a range ends: items below it (by time, then id) are in the range.
/// The id is compared as its first `len` bytes followed by zeros.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Bound {
    pub(super) ts: u64,
    id: ItemId,
    len: usize,
}

impl Bound {
    pub(super) fn new(ts: u64, id: ItemId, len: usize) -> Self {
        Bound { ts, id, len }
    }

    /// Above every item.
    pub(super) fn infinite() -> Self {
        Bound::new(u64::MAX, ItemId([0; 32]), 0)
    }

    pub(super) fn is_infinite(&self) -> bool {
        self.ts == u64::MAX
    }

    pub(super) fn prefix(&self) -> &[u8] {
        &self.id.0[..self.len]
    }

    /// The shortest bound above `prev` and at or below `next` (`prev` <
    /// `next`): `next`'s time alone if the times differ, else as much of
    /// `next`'s id as tells the two apart.
    pub(super) fn between(prev: &(u64, ItemId), next: &(u64, ItemId)) -> Self {
        if prev.0 != next.0 {
            return Bound::new(next.0, ItemId([0; 32]), 0);
        }
        let shared = prev
            .1
            .0
            .iter()
            .zip(next.1.0.iter())
            .take_while(|(a, b)| a == b)
            .count();
        let len = (shared + 1).min(32);
        let mut id = [0u8; 32];
        id[..len].copy_from_slice(&next.1.0[..len]);
        Bound::new(next.0, ItemId(id), len)
    }

    /// True if `item` sorts below this bound.
    fn above(&self, item: &(u64, ItemId)) -> bool {
        match item.0.cmp(&self.ts) {
            Ordering::Less => true,
            Ordering::Greater => false,
            Ordering::Equal => item.1 < self.id,
        }
    }
}

/// The session's items, sorted, with keyed hash sums once keyed.
#[derive(Debug, Default)]
pub struct SyncSet {
    items: Vec<(u64, ItemId)>,
    /// `sums[i]` is the wrapping sum of the hashes of `items[..i]`.
    sums: Vec<u64>,
    hasher: Option<SipHasher24>,
}

impl SyncSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty set with room for `n` items.
    pub fn with_capacity(n: usize) -> Self {
        SyncSet {
            items: Vec::with_capacity(n),
            ..Self::default()
        }
    }

    /// Adds an item made at `created_ms`. Order does not matter; a repeated
    /// id is kept once. The last millisecond is taken for the last but one:
    /// `u64::MAX` is the bound above every item.
    pub fn insert(&mut self, created_ms: u64, id: ItemId) {
        self.items.push((created_ms.min(u64::MAX - 1), id));
    }

    /// How many items the set holds (repeats counted until keyed).
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// True if the set holds nothing.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Sorts the items and sums their hashes under the session key.
    pub(super) fn key(&mut self, key: [u8; 16]) {
        self.items.sort_unstable();
        self.items.dedup_by(|a, b| a.1 == b.1);
        let hasher = SipHasher24::new_with_key(&key);
        self.sums = Vec::with_capacity(self.items.len() + 1);
        let mut sum = 0u64;
        self.sums.push(sum);
        for (_, id) in &self.items {
            sum = sum.wrapping_add(hasher.hash(&id.0));
            self.sums.push(sum);
        }
        self.hasher = Some(hasher);
    }

    /// The item's short id under the session key (0 before it is keyed).
    pub(super) fn short_id(&self, id: &ItemId) -> u64 {
        self.hasher.map_or(0, |h| h.hash(&id.0))
    }

    pub(super) fn item(&self, i: usize) -> &(u64, ItemId) {
        &self.items[i]
    }

    pub(super) fn items(&self, lower: usize, upper: usize) -> &[(u64, ItemId)] {
        &self.items[lower..upper]
    }

    /// Fingerprint of `items[lower..upper]`: the sum of their keyed hashes.
    pub(super) fn fingerprint(&self, lower: usize, upper: usize) -> u64 {
        self.sums[upper].wrapping_sub(self.sums[lower])
    }

    /// The first index at or after `from` whose item is not below `bound`.
    pub(super) fn lower_bound(&self, from: usize, bound: &Bound) -> usize {
        from + self.items[from..].partition_point(|item| bound.above(item))
    }
}

//! What the engine remembers about items: routing metadata only, never the
//! envelope bytes (those stay in the driver's storage). Also the tombstones
//! of retracted and replaced items and an expiry queue.

use std::collections::{BTreeMap, BTreeSet};
use std::num::{NonZeroU32, NonZeroU64};
use std::sync::Arc;

use super::item_map::ItemMap;
use super::quota::Usage;
use crate::item::audience::Audience;
use crate::item::id::ItemId;
use crate::item::kinds::ItemKind;
use crate::item::record::ItemRecord;
use crate::policy::ItemRoute;

/// A peer id interned in the index: its place in `Index::by_name`, plus one
/// (4 bytes where an `Arc<str>` takes 16, for up to 4 billion names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Name(NonZeroU32);

/// The in-memory form of a record: names and audiences interned as 4-byte
/// indices and the expiry as a `NonZeroU64` (Unix ms 0 is never an expiry),
/// so an entry is 40 bytes beside its 32-byte id (it was 88 with `Arc<str>`
/// names and an `Option<u64>`); the envelope size fills what was padding.
/// Read it through [`MetaRef`].
#[derive(Debug, Clone)]
pub(crate) struct Meta {
    pub(crate) created_ms: u64,
    expires_ms: Option<NonZeroU64>,
    author: Name,
    audience: u32,
    received_from: Option<Name>,
    club_target: Option<Name>,
    /// The envelope's size in bytes, for cutting catch-up chunks by bytes.
    pub(crate) envelope_bytes: u32,
    pub(crate) max_hops: u8,
    pub(crate) hops_left: u8,
    club_removal: bool,
    /// A `device_link` item (it fills what was padding).
    device_statement: bool,
}

// The size above is part of the per-item memory budget (issue 11: at most
// 80 B per held item with the id and the B-tree's share).
const _: () = assert!(std::mem::size_of::<Meta>() == 40);

impl Meta {
    /// The expiry, if the author set one.
    pub(crate) fn expires_ms(&self) -> Option<u64> {
        self.expires_ms.map(NonZeroU64::get)
    }

    /// True once `now_ms` reaches the expiry.
    pub(crate) fn expired(&self, now_ms: u64) -> bool {
        self.expires_ms().is_some_and(|e| e <= now_ms)
    }
}

/// A held item's metadata with the index that resolves its names.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MetaRef<'a> {
    meta: &'a Meta,
    index: &'a Index,
}

impl<'a> std::ops::Deref for MetaRef<'a> {
    type Target = Meta;
    fn deref(&self) -> &Meta {
        self.meta
    }
}

impl<'a> MetaRef<'a> {
    /// The author's peer id.
    pub(crate) fn author(&self) -> &'a str {
        self.index.name(self.meta.author)
    }

    /// Whether `name` (from [`Index::known_name`]) is its author: one
    /// integer comparison where comparing the strings compares 52 bytes
    /// that all begin alike, for every item a sync set walks.
    pub(crate) fn is_by(&self, name: Option<Name>) -> bool {
        name == Some(self.meta.author)
    }

    /// Who may receive it.
    pub(crate) fn audience(&self) -> &'a Audience {
        self.index
            .audiences
            .get(self.meta.audience as usize)
            .map_or(&Audience::Public, |a| &**a)
    }

    /// The friend this copy came from; `None` for our own items.
    pub(crate) fn received_from(&self) -> Option<&'a str> {
        self.meta.received_from.map(|n| self.index.name(n))
    }

    /// For a club change: the member it concerns.
    pub(crate) fn club_target(&self) -> Option<&'a str> {
        self.meta.club_target.map(|n| self.index.name(n))
    }

    /// The routing facts for `may_send`.
    pub(crate) fn route(&self) -> ItemRoute<'a> {
        ItemRoute {
            author: self.author(),
            audience: self.audience(),
            hops_left: self.meta.hops_left,
            received_from: self.received_from(),
            expires_ms: self.meta.expires_ms(),
            created_ms: self.meta.created_ms,
            club_target: self.club_target(),
            club_removal: self.meta.club_removal,
            device_statement: self.meta.device_statement,
        }
    }
}

/// Items held, tombstones and the expiry queue.
///
/// Every map is ordered (see the engine's module doc): `items` is walked to
/// build sync sets and hop-check candidates, whose order reaches the
/// outputs, and walking it by id keeps runs replayable. Measured with
/// 32-byte keys at a million entries, a B-tree took less memory than a
/// `HashMap` (149 vs 210 MB) but about 1 µs per lookup against 0.2 µs:
/// small next to a signature check per received item and to reading those
/// rows from SQLite. `items` is now a sorted vector plus a small B-tree of
/// changes ([`ItemMap`]): less memory again, and start-up fills the vector
/// from the rows in id order with nothing to copy. Unlike a hash table with
/// a fixed seed neither can be slowed by ids chosen to collide (retraction
/// targets and announced ids are whatever a peer sends).
#[derive(Debug, Default)]
pub(crate) struct Index {
    items: ItemMap<Meta>,
    expiry: BTreeSet<(u64, ItemId)>,
    /// Withdrawn id → the author who withdrew it; refused if offered by them.
    tombstones: BTreeMap<ItemId, Arc<str>>,
    /// Interned peer ids (as many as authors and friends): the id of each
    /// name, and the names by id.
    names: BTreeMap<Arc<str>, Name>,
    by_name: Vec<Arc<str>>,
    audiences: Vec<Arc<Audience>>,
    /// What each author's held items cost, by interned name (the quota's
    /// count, `quota.rs`): 16 bytes per name, kept in step by every insert
    /// and removal.
    usage: Vec<Usage>,
}

impl Index {
    /// One shared copy of a peer id string.
    pub(crate) fn intern(&mut self, name: &str) -> Arc<str> {
        let n = self.name_of(name);
        self.by_name[(n.0.get() - 1) as usize].clone()
    }

    /// The interned id of a peer id string.
    fn name_of(&mut self, name: &str) -> Name {
        if let Some(n) = self.names.get(name) {
            return *n;
        }
        let next = u32::try_from(self.by_name.len() + 1)
            .ok()
            .and_then(NonZeroU32::new)
            .map(Name)
            // Four billion distinct peer ids cannot be held in memory.
            .unwrap_or(Name(NonZeroU32::MAX));
        let n: Arc<str> = Arc::from(name);
        self.by_name.push(n.clone());
        self.usage.push(Usage::default());
        self.names.insert(n, next);
        next
    }

    /// The interned id of a peer id string, if it has one: a peer that is
    /// no author, sender or club target of any held item has none.
    pub(crate) fn known_name(&self, name: &str) -> Option<Name> {
        self.names.get(name).copied()
    }

    /// The peer id string of an interned name.
    fn name(&self, n: Name) -> &str {
        self.by_name
            .get((n.0.get() - 1) as usize)
            .map_or("", |s| &**s)
    }

    fn intern_audience(&mut self, audience: &Audience) -> u32 {
        if let Some(i) = self.audiences.iter().position(|a| **a == *audience) {
            return i as u32;
        }
        self.audiences.push(Arc::new(audience.clone()));
        (self.audiences.len() - 1) as u32
    }

    /// The index of the items a node holds at start-up, filled in one pass:
    /// the records' compact forms go into the vector of [`ItemMap`], which
    /// is then sorted in place. Storage never holds an id twice; given two
    /// records of one id, the copy with more hops left is kept.
    pub(crate) fn from_records(records: impl Iterator<Item = ItemRecord>) -> Index {
        let mut index = Index::default();
        // Sized once from the rows storage counted: the list is the index.
        let mut metas: Vec<(ItemId, Meta)> = Vec::with_capacity(records.size_hint().0);
        for record in records {
            metas.push((record.id, index.meta(&record)));
        }
        index.expiry = metas
            .iter()
            .filter_map(|(id, meta)| meta.expires_ms().map(|e| (e, *id)))
            .collect();
        index.items = ItemMap::from_vec(metas, |candidate, kept| {
            candidate.hops_left > kept.hops_left
        });
        let mut usage = std::mem::take(&mut index.usage);
        for (_, meta) in index.items.iter() {
            usage_of(&mut usage, meta.author).add(meta.envelope_bytes);
        }
        index.usage = usage;
        index
    }

    /// What `author`'s held items cost.
    pub(crate) fn usage(&self, author: &str) -> Usage {
        self.known_name(author)
            .and_then(|n| self.usage.get((n.0.get() - 1) as usize))
            .copied()
            .unwrap_or_default()
    }

    /// The compact form of `record`, sharing interned strings.
    fn meta(&mut self, record: &ItemRecord) -> Meta {
        Meta {
            created_ms: record.created_ms,
            expires_ms: record.expires_ms.and_then(NonZeroU64::new),
            author: self.name_of(&record.author),
            audience: self.intern_audience(&record.audience),
            received_from: record.received_from.as_deref().map(|p| self.name_of(p)),
            max_hops: record.max_hops,
            hops_left: record.hops_left,
            club_target: record.club_target.as_deref().map(|p| self.name_of(p)),
            club_removal: record.club_removal,
            device_statement: record.kind == ItemKind::DeviceLink,
            envelope_bytes: record.envelope_bytes,
        }
    }

    /// Adds (or overwrites) an item.
    pub(crate) fn insert(&mut self, record: &ItemRecord) {
        let meta = self.meta(record);
        if let Some(e) = meta.expires_ms() {
            self.expiry.insert((e, record.id));
        }
        usage_of(&mut self.usage, meta.author).add(meta.envelope_bytes);
        if let Some(old) = self.items.insert(record.id, meta) {
            usage_of(&mut self.usage, old.author).sub(old.envelope_bytes);
        }
    }

    pub(crate) fn get(&self, id: &ItemId) -> Option<MetaRef<'_>> {
        self.items.get(id).map(|meta| MetaRef { meta, index: self })
    }

    pub(crate) fn contains(&self, id: &ItemId) -> bool {
        self.items.contains_key(id)
    }

    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    /// Raises the hop count of a held item; false if not held or not higher.
    pub(crate) fn raise_hops(&mut self, id: &ItemId, hops_left: u8, from: &str) -> bool {
        let from = self.name_of(from);
        match self.items.get_mut(id) {
            Some(meta) if hops_left > meta.hops_left => {
                meta.hops_left = hops_left;
                meta.received_from = Some(from);
                true
            }
            _ => false,
        }
    }

    pub(crate) fn remove(&mut self, id: &ItemId) -> Option<Meta> {
        let meta = self.items.remove(id)?;
        if let Some(e) = meta.expires_ms() {
            self.expiry.remove(&(e, *id));
        }
        usage_of(&mut self.usage, meta.author).sub(meta.envelope_bytes);
        Some(meta)
    }

    /// Every held item, in id order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&ItemId, MetaRef<'_>)> {
        self.items
            .iter()
            .map(|(id, meta)| (id, MetaRef { meta, index: self }))
    }

    /// Remembers that `author` withdrew `target`.
    pub(crate) fn add_tombstone(&mut self, target: ItemId, author: &str) {
        let author = self.intern(author);
        self.tombstones.insert(target, author);
    }

    /// True if `author` withdrew `id`.
    pub(crate) fn is_withdrawn(&self, id: &ItemId, author: &str) -> bool {
        self.tombstones.get(id).is_some_and(|a| &**a == author)
    }

    /// True if anyone withdrew `id` (for callers that do not know the author).
    pub(crate) fn has_tombstone(&self, id: &ItemId) -> bool {
        self.tombstones.contains_key(id)
    }

    /// The earliest expiry still queued.
    pub(crate) fn next_expiry(&self) -> Option<u64> {
        self.expiry.first().map(|(t, _)| *t)
    }

    /// Removes and returns every item whose expiry is at or before `now_ms`,
    /// earliest first, with its creation time.
    pub(crate) fn take_expired(&mut self, now_ms: u64) -> Vec<(ItemId, u64)> {
        let mut out = Vec::new();
        while let Some(&(t, id)) = self.expiry.first() {
            if t > now_ms {
                break;
            }
            self.expiry.pop_first();
            if let Some(meta) = self.items.remove(&id) {
                usage_of(&mut self.usage, meta.author).sub(meta.envelope_bytes);
                out.push((id, meta.created_ms));
            }
        }
        out
    }
}

/// The usage slot of an interned name (always present: `name_of` pushes one
/// per name; the fallback only guards the saturated name).
fn usage_of(usage: &mut Vec<Usage>, name: Name) -> &mut Usage {
    let i = (name.0.get() - 1) as usize;
    if usage.len() <= i {
        usage.resize(i + 1, Usage::default());
    }
    &mut usage[i]
}

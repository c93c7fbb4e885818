//! What the engine remembers about items: routing metadata only, never the
//! envelope bytes (those stay in the driver's storage). Also the tombstones
//! of retracted and replaced items and an expiry queue.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::item::audience::Audience;
use crate::item::id::ItemId;
use crate::item::record::ItemRecord;
use crate::policy::ItemRoute;

/// The in-memory form of a record: names and audiences interned.
#[derive(Debug, Clone)]
pub(crate) struct Meta {
    pub(crate) created_ms: u64,
    pub(crate) expires_ms: Option<u64>,
    pub(crate) author: Arc<str>,
    pub(crate) audience: Arc<Audience>,
    pub(crate) received_from: Option<Arc<str>>,
    pub(crate) max_hops: u8,
    pub(crate) hops_left: u8,
    pub(crate) club_target: Option<Arc<str>>,
    pub(crate) club_removal: bool,
}

impl Meta {
    /// The routing facts for `may_send`.
    pub(crate) fn route(&self) -> ItemRoute<'_> {
        ItemRoute {
            author: &self.author,
            audience: &self.audience,
            hops_left: self.hops_left,
            received_from: self.received_from.as_deref(),
            expires_ms: self.expires_ms,
            created_ms: self.created_ms,
            club_target: self.club_target.as_deref(),
            club_removal: self.club_removal,
        }
    }

    /// True once `now_ms` reaches the expiry.
    pub(crate) fn expired(&self, now_ms: u64) -> bool {
        self.expires_ms.is_some_and(|e| e <= now_ms)
    }
}

/// Items held, tombstones and the expiry queue.
///
/// Every map is ordered (see the engine's module doc): `items` is walked to
/// build sync sets and hop-check candidates, whose order reaches the
/// outputs, and walking it by id keeps runs replayable. Measured with
/// 32-byte keys at a million entries, a B-tree took less memory than a
/// `HashMap` (149 vs 210 MB) but about 1 µs per lookup against 0.2 µs, and
/// 1.9 s against 0.6 s to fill by single inserts: small next to a signature
/// check per received item and to reading those rows from SQLite. Start-up
/// fills it in bulk ([`Index::from_records`]): `Engine::new` over 1M records
/// went from 1.05–1.19 s to 0.60–0.71 s (release build, 2 cores). Unlike a hash
/// table with a fixed seed it cannot be slowed by ids chosen to collide
/// (retraction targets and announced ids are whatever a peer sends).
#[derive(Debug, Default)]
pub(crate) struct Index {
    items: BTreeMap<ItemId, Meta>,
    expiry: BTreeSet<(u64, ItemId)>,
    /// Withdrawn id → the author who withdrew it; refused if offered by them.
    tombstones: BTreeMap<ItemId, Arc<str>>,
    /// Interned peer ids (lookups only; as many as authors and friends).
    names: BTreeSet<Arc<str>>,
    audiences: Vec<Arc<Audience>>,
}

impl Index {
    /// One shared copy of a peer id string.
    pub(crate) fn intern(&mut self, name: &str) -> Arc<str> {
        if let Some(n) = self.names.get(name) {
            return n.clone();
        }
        let n: Arc<str> = Arc::from(name);
        self.names.insert(n.clone());
        n
    }

    fn intern_audience(&mut self, audience: &Audience) -> Arc<Audience> {
        if let Some(a) = self.audiences.iter().find(|a| ***a == *audience) {
            return a.clone();
        }
        let a = Arc::new(audience.clone());
        self.audiences.push(a.clone());
        a
    }

    /// The index of the items a node holds at start-up. The maps are built
    /// in one bulk pass (`collect` sorts once, then fills the B-tree from
    /// sorted keys) rather than by a million single inserts in random id
    /// order; a later record with the same id wins, as with [`Self::insert`].
    pub(crate) fn from_records(records: &[ItemRecord]) -> Index {
        let mut index = Index::default();
        let metas: Vec<(ItemId, Meta)> = records
            .iter()
            .map(|record| (record.id, index.meta(record)))
            .collect();
        index.expiry = metas
            .iter()
            .filter_map(|(id, meta)| meta.expires_ms.map(|e| (e, *id)))
            .collect();
        index.items = metas.into_iter().collect();
        index
    }

    /// The compact form of `record`, sharing interned strings.
    fn meta(&mut self, record: &ItemRecord) -> Meta {
        Meta {
            created_ms: record.created_ms,
            expires_ms: record.expires_ms,
            author: self.intern(&record.author),
            audience: self.intern_audience(&record.audience),
            received_from: record.received_from.as_deref().map(|p| self.intern(p)),
            max_hops: record.max_hops,
            hops_left: record.hops_left,
            club_target: record.club_target.as_deref().map(|p| self.intern(p)),
            club_removal: record.club_removal,
        }
    }

    /// Adds (or overwrites) an item.
    pub(crate) fn insert(&mut self, record: &ItemRecord) {
        let meta = self.meta(record);
        if let Some(e) = meta.expires_ms {
            self.expiry.insert((e, record.id));
        }
        self.items.insert(record.id, meta);
    }

    pub(crate) fn get(&self, id: &ItemId) -> Option<&Meta> {
        self.items.get(id)
    }

    pub(crate) fn contains(&self, id: &ItemId) -> bool {
        self.items.contains_key(id)
    }

    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    /// Raises the hop count of a held item; false if not held or not higher.
    pub(crate) fn raise_hops(&mut self, id: &ItemId, hops_left: u8, from: &str) -> bool {
        let from = self.intern(from);
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
        if let Some(e) = meta.expires_ms {
            self.expiry.remove(&(e, *id));
        }
        Some(meta)
    }

    /// Every held item, in id order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&ItemId, &Meta)> {
        self.items.iter()
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
    /// earliest first.
    pub(crate) fn take_expired(&mut self, now_ms: u64) -> Vec<ItemId> {
        let mut out = Vec::new();
        while let Some(&(t, id)) = self.expiry.first() {
            if t > now_ms {
                break;
            }
            self.expiry.pop_first();
            self.items.remove(&id);
            out.push(id);
        }
        out
    }
}

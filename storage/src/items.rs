//! The replicated `items` table and the tombstones (`retractions`) it honours.
//!
//! Items are stored exactly as received (the whole signed envelope in
//! `payload`) next to copies of their routing facts, so nothing is decoded
//! to route them or to seed the replication engine. Inserting is idempotent
//! on the item id; an item its author withdrew is never accepted again; and
//! [`Store::items_for_friend`] is the single answer to "which items may this
//! friend receive", decided by [`porfiry_protocol::may_send`].

use porfiry_protocol::devices::DeviceBook;
use porfiry_protocol::{ClubBook, FriendView, ItemId, ItemKind, ItemRecord, ItemRoute, may_send};
use rusqlite::types::Type;
use rusqlite::{OptionalExtension, Row, params};

use crate::error::{Result, StorageError};
use crate::limits::MAX_ITEMS_PER_BATCH;
use crate::peers::check_peer_id;
use crate::query::int_param;
use crate::record::{item_id_from_row, item_id_to_sql};
use crate::store::Store;

/// What [`Store::insert_items_reporting`] did with a batch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Inserted {
    /// Items that were new and are now stored.
    pub new: usize,
    /// Memory versions refused because this node pruned them (at most the
    /// batch's size, itself bounded by `MAX_ITEMS_PER_BATCH`).
    pub refused_pruned: Vec<ItemId>,
}

/// One stored item: its routing record (every column but the envelope
/// bytes, the one [`ItemRecord`] the protocol crate defines) plus the
/// envelope bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredItem {
    /// Every column but the envelope.
    pub record: ItemRecord,
    /// The whole signed envelope, as received.
    pub payload: Vec<u8>,
    /// The signature (also inside the envelope; kept for quick access).
    pub signature: Vec<u8>,
}

/// Reads columns 0..=13 of [`SELECT`] (or [`META`]) as an [`ItemRecord`].
fn record_from_row(r: &Row<'_>) -> rusqlite::Result<ItemRecord> {
    let parsed = |i: usize| -> rusqlite::Result<&str> { Ok(r.get_ref(i)?.as_str()?) };
    let conv = |i: usize, e: Box<dyn std::error::Error + Send + Sync>| {
        rusqlite::Error::FromSqlConversionFailure(i, Type::Text, e)
    };
    Ok(ItemRecord {
        id: ItemId(r.get(0)?),
        author: r.get(1)?,
        kind: parsed(2)?.parse().map_err(|e| conv(2, Box::new(e)))?,
        audience: parsed(3)?.parse().map_err(|e| conv(3, Box::new(e)))?,
        created_ms: r.get(4)?,
        expires_ms: r.get(5)?,
        received_from: r.get(6)?,
        max_hops: r.get(7)?,
        hops_left: r.get(8)?,
        retracts: item_id_from_row(r, 9)?,
        replaces: item_id_from_row(r, 10)?,
        club_target: r.get(11)?,
        club_removal: r.get(12)?,
        envelope_bytes: r.get(13)?,
    })
}

impl StoredItem {
    /// Checks one record of a batch; errors name its position and id.
    fn check(&self, index: usize) -> Result<()> {
        let r = &self.record;
        let bad = |reason: String| {
            Err(StorageError::Invalid {
                what: format!("item #{index} ({})", r.id),
                reason,
            })
        };
        let peers = [
            ("author", Some(&r.author)),
            ("received_from", r.received_from.as_ref()),
        ];
        for (field, peer) in peers {
            if let Some(p) = peer
                && let Err(e) = check_peer_id(p)
            {
                return bad(format!("{field}: {e}"));
            }
        }
        if r.hops_left > r.max_hops {
            return bad(format!(
                "hops_left {} exceeds max_hops {}",
                r.hops_left, r.max_hops
            ));
        }
        if r.retracts.is_some() != (r.kind == ItemKind::Retraction) {
            return bad("retracts is set exactly on retraction items".into());
        }
        if r.club_target.is_some() != (r.kind == ItemKind::ClubChange) {
            return bad("club_target is set exactly on club_change items".into());
        }
        if let Err(e) = r.audience.check() {
            return bad(e.to_string());
        }
        if self.payload.is_empty() {
            return bad("empty payload".into());
        }
        if usize::try_from(r.envelope_bytes).ok() != Some(self.payload.len()) {
            return bad(format!(
                "envelope_bytes {} is not the payload's {} bytes",
                r.envelope_bytes,
                self.payload.len()
            ));
        }
        Ok(())
    }

    fn from_row(r: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(StoredItem {
            record: record_from_row(r)?,
            payload: r.get(14)?,
            signature: r.get(15)?,
        })
    }
}

/// Rows of [`META`] as records, knowing how many are left (counted in the
/// same snapshot); the first row that does not read ends it, its error
/// kept in `failed`.
struct CountedRows<'a, I> {
    rows: I,
    left: usize,
    failed: &'a mut Option<rusqlite::Error>,
}

impl<I: Iterator<Item = rusqlite::Result<ItemRecord>>> Iterator for CountedRows<'_, I> {
    type Item = ItemRecord;

    fn next(&mut self) -> Option<ItemRecord> {
        match self.rows.next()? {
            Ok(record) => {
                self.left = self.left.saturating_sub(1);
                Some(record)
            }
            Err(e) => {
                *self.failed = Some(e);
                self.left = 0;
                None
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        if self.failed.is_some() {
            (0, Some(0))
        } else {
            (self.left, Some(self.left))
        }
    }
}

/// The columns in [`SELECT`] order, for error messages.
const COLUMNS: [&str; 16] = [
    "id",
    "author",
    "kind",
    "audience",
    "created",
    "expires",
    "received_from",
    "max_hops",
    "hops_left",
    "retracts",
    "replaces",
    "club_target",
    "club_removal",
    "length(payload)",
    "payload",
    "signature",
];
const META: &str = "SELECT id, author, kind, audience, created, expires, received_from, max_hops, hops_left, \
                    retracts, replaces, club_target, club_removal, length(payload) FROM items";
const SELECT: &str = "SELECT id, author, kind, audience, created, expires, received_from, max_hops, hops_left, \
                      retracts, replaces, club_target, club_removal, length(payload), payload, signature \
                      FROM items";

fn read_err(e: rusqlite::Error) -> StorageError {
    StorageError::from_read("items", &COLUMNS, e)
}

impl Store {
    /// Stores items in one transaction; returns how many were new. An id
    /// already present, repeated in the batch, or withdrawn by its author is
    /// skipped without error, and so is a memory version this node pruned
    /// (see `Store::prune_mind`). A new retraction or replacing item withdraws
    /// its target in the same transaction: the target (if by the same
    /// author) is deleted and tombstoned. A malformed record refuses the
    /// whole batch, storing nothing.
    pub fn insert_items(&self, items: &[StoredItem]) -> Result<usize> {
        Ok(self.insert_items_reporting(items)?.new)
    }

    /// [`Store::insert_items`], also naming the memory versions refused as
    /// pruned: the replication engine took them and must forget them
    /// again (`Engine::forget`), or it would offer friends what this node
    /// no longer holds until it restarts.
    pub fn insert_items_reporting(&self, items: &[StoredItem]) -> Result<Inserted> {
        if items.len() > MAX_ITEMS_PER_BATCH {
            return Err(StorageError::invalid(
                "batch",
                format!("{} items, at most {MAX_ITEMS_PER_BATCH}", items.len()),
            ));
        }
        for (i, it) in items.iter().enumerate() {
            it.check(i)?;
        }
        self.transaction(|s| {
            // A one-row `INSERT … VALUES`, with the tombstone asked apart:
            // an `INSERT … SELECT` may write many rows, so SQLite opened a
            // statement journal for each one and copied every page it
            // touched into it (a tenth of a catch-up writer's time).
            let mut withdrawn = s
                .conn
                .prepare_cached("SELECT 1 FROM retractions WHERE target = ?1 AND author = ?2")?;
            let mut stmt = s.conn.prepare_cached(
                "INSERT INTO items (id, author, kind, audience, created, expires, received_from,
                                    max_hops, hops_left, retracts, replaces, payload, signature,
                                    club_target, club_removal)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)
                 ON CONFLICT (id) DO NOTHING",
            )?;
            let mut inserted = 0;
            let mut refused_pruned = Vec::new();
            let mut minds = 0;
            for stored in items {
                let it = &stored.record;
                if withdrawn.exists(params![it.id.as_bytes(), it.author])? {
                    continue;
                }
                let created = int_param("created_ms", it.created_ms)?;
                let expires = it
                    .expires_ms
                    .map(|e| int_param("expires_ms", e))
                    .transpose()?;
                let mut n = stmt
                    .execute(params![
                        it.id.as_bytes(),
                        it.author,
                        it.kind.as_str(),
                        it.audience.to_string(),
                        created,
                        expires,
                        it.received_from,
                        it.max_hops,
                        it.hops_left,
                        item_id_to_sql(&it.retracts),
                        item_id_to_sql(&it.replaces),
                        stored.payload,
                        stored.signature,
                        it.club_target,
                        it.club_removal
                    ])
                    .map_err(|e| StorageError::from_write("items", e))?;
                if n > 0 && it.kind == ItemKind::ClubChange {
                    s.record_club_change(stored)?;
                }
                if n > 0 && it.kind == ItemKind::DeviceLink {
                    s.record_device_statement(stored)?;
                }
                if n > 0 && it.kind == ItemKind::MindRecord {
                    if s.record_mind_version(stored)? {
                        minds += 1;
                    } else {
                        // A memory version pruning forgot, offered again
                        // by a device that was away: not taken back.
                        s.delete_item(&it.id)?;
                        refused_pruned.push(it.id);
                        n = 0;
                    }
                }
                if n > 0 {
                    for target in it.supersedes() {
                        s.retract(&target, &it.author, it.created_ms)?;
                    }
                }
                inserted += n;
            }
            if minds > 0 {
                s.retry_waiting_mind()?;
            }
            Ok(Inserted {
                new: inserted,
                refused_pruned,
            })
        })
    }

    /// The item with this id, if stored.
    pub fn get_item(&self, id: &ItemId) -> Result<Option<StoredItem>> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!("{SELECT} WHERE id = ?"))?;
        stmt.query_row([id.as_bytes()], StoredItem::from_row)
            .optional()
            .map_err(read_err)
    }

    /// Whether an item with this id is stored.
    pub fn has_item(&self, id: &ItemId) -> Result<bool> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT 1 FROM items WHERE id = ?")?;
        Ok(stmt.exists([id.as_bytes()])?)
    }

    /// `(created_ms, id)` of every item created at or after `since_ms`,
    /// ordered by time then id (the order set reconciliation wants).
    pub fn item_ids_since(&self, since_ms: u64) -> Result<Vec<(u64, ItemId)>> {
        let since = int_param("since_ms", since_ms)?;
        let mut stmt = self.conn.prepare_cached(
            "SELECT created, id FROM items WHERE created >= ? ORDER BY created, id",
        )?;
        let rows = stmt.query_map([since], |r| Ok((r.get(0)?, ItemId(r.get(1)?))))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| StorageError::from_read("items", &["created", "id"], e))
    }

    /// The routing facts of every stored item, oldest first, without the
    /// envelopes: what the replication engine is seeded with at start-up.
    pub fn item_records(&self) -> Result<Vec<ItemRecord>> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!("{META} ORDER BY created, id"))?;
        let rows = stmt.query_map([], record_from_row)?;
        rows.collect::<rusqlite::Result<_>>().map_err(read_err)
    }

    /// Hands `f` every stored item's record, oldest first, one row at a
    /// time, so a caller that keeps a compact form (the replication engine
    /// at start-up) never holds the whole list: about 377 B per record
    /// against the engine's 72 B per item. The iterator's `size_hint` is
    /// the exact row count, read in the same snapshot, so the engine's
    /// index is allocated once. (Oldest first follows the `items_created`
    /// index, which mostly follows the table: reading a million rows in id
    /// order instead took three times as long, random page reads.) The iterator stops at
    /// the first row that does not read; that error is returned after `f`
    /// ends, and `f`'s result is then dropped.
    pub fn with_item_records<T>(
        &self,
        f: impl FnOnce(&mut dyn Iterator<Item = ItemRecord>) -> T,
    ) -> Result<T> {
        // One snapshot for the count and the rows.
        self.read_snapshot(|| self.records_oldest_first(f))
    }

    fn records_oldest_first<T>(
        &self,
        f: impl FnOnce(&mut dyn Iterator<Item = ItemRecord>) -> T,
    ) -> Result<T> {
        let count = usize::try_from(self.item_count()?).unwrap_or(usize::MAX);
        let mut stmt = self
            .conn
            .prepare_cached(&format!("{META} ORDER BY created, id"))?;
        let rows = stmt.query_map([], record_from_row)?;
        let mut failed = None;
        let mut records = CountedRows {
            rows,
            left: count,
            failed: &mut failed,
        };
        let out = f(&mut records);
        match failed {
            Some(e) => Err(read_err(e)),
            None => Ok(out),
        }
    }

    /// Deletes an item (expiry, cleanup); it may be received again later.
    /// Returns whether it was there.
    pub fn delete_item(&self, id: &ItemId) -> Result<bool> {
        Ok(self
            .conn
            .prepare_cached("DELETE FROM items WHERE id = ?")?
            .execute([id.as_bytes()])?
            > 0)
    }

    /// Every stored item of `kind`, oldest first. It scans the table (no
    /// index covers `kind`), so it is for kinds with one live item per
    /// author read once at start: `reachable_at`, one per friend, each
    /// replacing the one before.
    pub fn items_of_kind(&self, kind: ItemKind) -> Result<Vec<StoredItem>> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!("{SELECT} WHERE kind = ? ORDER BY created, id"))?;
        let rows = stmt.query_map([kind.as_str()], StoredItem::from_row)?;
        rows.collect::<rusqlite::Result<_>>().map_err(read_err)
    }

    /// Deletes every item expired at `now_ms`; returns how many.
    pub fn delete_expired_items(&self, now_ms: u64) -> Result<usize> {
        let now = int_param("now_ms", now_ms)?;
        Ok(self
            .conn
            .prepare_cached("DELETE FROM items WHERE expires <= ?")?
            .execute([now])?)
    }

    /// Records that `author` withdrew item `target` and deletes it if it is
    /// stored and by that author; returns whether it was deleted. An item
    /// with that id by that author is never accepted again; another
    /// author's item with that id is not touched. ([`Store::insert_items`]
    /// calls this for retraction and replacing items itself.)
    pub fn retract(&self, target: &ItemId, author: &str, now_ms: u64) -> Result<bool> {
        check_peer_id(author)?;
        let now = int_param("now_ms", now_ms)?;
        self.transaction(|s| {
            s.conn
                .prepare_cached(
                    "INSERT INTO retractions (target, author, retracted) VALUES (?, ?, ?)
                     ON CONFLICT (target, author) DO NOTHING",
                )?
                .execute(params![target.as_bytes(), author, now])?;
            let n = s
                .conn
                .prepare_cached("DELETE FROM items WHERE id = ? AND author = ?")?
                .execute(params![target.as_bytes(), author])?;
            Ok(n > 0)
        })
    }

    /// Whether `author` withdrew item `id`.
    pub fn is_retracted(&self, id: &ItemId, author: &str) -> Result<bool> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT 1 FROM retractions WHERE target = ? AND author = ?")?;
        Ok(stmt.exists(params![id.as_bytes(), author])?)
    }

    /// Every stored item the friend `friend_peer_id` (tagged with
    /// `friend_groups`) may receive from this node `local_peer` (in the
    /// clubs `clubs` says, with the devices `devices` says) at `now_ms`,
    /// oldest first. Live push and catch-up both ask this; the decision is
    /// [`may_send`]'s, after an SQL prefilter that only drops rows it would
    /// refuse anyway.
    pub fn items_for_friend(
        &self,
        local_peer: &str,
        friend_peer_id: &str,
        friend_groups: &[String],
        clubs: &ClubBook,
        devices: &DeviceBook,
        now_ms: u64,
    ) -> Result<Vec<StoredItem>> {
        let friend = FriendView {
            peer_id: friend_peer_id,
            groups: friend_groups,
        };
        self.for_friend(
            SELECT,
            StoredItem::from_row,
            |r: &StoredItem| r.record.route(),
            (local_peer, &friend, clubs, devices),
            now_ms,
        )
    }

    /// The same set as [`Store::items_for_friend`], decided the same way,
    /// as `(created_ms, id)` pairs without loading any envelope: the keys
    /// set reconciliation (catch-up) works on.
    pub fn item_keys_for_friend(
        &self,
        local_peer: &str,
        friend_peer_id: &str,
        friend_groups: &[String],
        clubs: &ClubBook,
        devices: &DeviceBook,
        now_ms: u64,
    ) -> Result<Vec<(u64, ItemId)>> {
        let friend = FriendView {
            peer_id: friend_peer_id,
            groups: friend_groups,
        };
        let metas = self.for_friend(
            META,
            record_from_row,
            ItemRecord::route,
            (local_peer, &friend, clubs, devices),
            now_ms,
        )?;
        Ok(metas.into_iter().map(|m| (m.created_ms, m.id)).collect())
    }

    /// The one friend query: `select` rows passing the SQL prefilter, kept
    /// when [`may_send`] admits them (`who`: this node, the friend, the
    /// club book and the device book, as `may_send` takes them).
    fn for_friend<T>(
        &self,
        select: &str,
        from_row: fn(&Row<'_>) -> rusqlite::Result<T>,
        route: fn(&T) -> ItemRoute<'_>,
        who: (&str, &FriendView<'_>, &ClubBook, &DeviceBook),
        now_ms: u64,
    ) -> Result<Vec<T>> {
        let (local_peer, friend, clubs, devices) = who;
        let now = int_param("now_ms", now_ms)?;
        let sql = format!(
            "{select} WHERE hops_left > 0 AND (expires IS NULL OR expires > ?1)
               AND author <> ?2 AND (received_from IS NULL OR received_from <> ?2)
               AND (audience IN ('public', 'devices') OR audience GLOB 'club:*' OR author = ?3)
             ORDER BY created, id"
        );
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let mut out = Vec::new();
        let mut rows = stmt.query(params![now, friend.peer_id, local_peer])?;
        while let Some(row) = rows.next()? {
            let item = from_row(row).map_err(read_err)?;
            if may_send(local_peer, &route(&item), friend, clubs, devices, now_ms) {
                out.push(item);
            }
        }
        Ok(out)
    }

    /// Number of stored items.
    pub fn item_count(&self) -> Result<u64> {
        Ok(self
            .conn
            .query_row("SELECT count(*) FROM items", [], |r| r.get(0))?)
    }

    /// Number of stored items per kind (`note`, `retraction`, …), in kind
    /// order; kinds with no item are absent.
    pub fn item_counts_by_kind(&self) -> Result<Vec<(String, u64)>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT kind, count(*) FROM items GROUP BY kind ORDER BY kind")?;
        let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, u64>(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }
}

//! Forgetting what the memory no longer needs (issue 45; HMP's soft delete:
//! a deletion is kept for a time to live, then gone). The rule is the
//! protocol's ([`RecordVersions::prunable`]): a winning tombstone and every
//! version it beat go once [`TOMBSTONE_TTL_MS`] has passed since it was
//! written; a version dominated by one written that long ago goes too.
//! [`Store::prune_mind`] deletes those versions (`mind_versions`), their
//! items (so they are no longer held nor offered in range sync) and the
//! conflicts naming them, and remembers what it forgot in `mind_pruned`;
//! [`Store::mind_version_forgotten`] refuses an arriving version that
//! would bring any of it back.

use porfiry_protocol::ItemId;
use porfiry_protocol::mind::{
    Causality, RecordVersions, TOMBSTONE_TTL_MS, VersionRef, VersionVector,
};
use rusqlite::{OptionalExtension, params};

use super::rows::RecordKey;
use crate::error::{Result, StorageError};
use crate::query::int_param;
use crate::store::Store;

/// Records looked at per call of [`Store::prune_mind`], each in one
/// transaction: a record holds at most 64 versions
/// ([`porfiry_protocol::mind::MAX_VERSIONS_PER_RECORD`]), so a call deletes
/// at most 4,096 versions and their items, a few tens of milliseconds of
/// the writer in the worst case and about 150 rows in the usual one (a
/// version or two to forget per record), while a 50,000-record memory is
/// gone through in under 800 calls.
pub const MIND_PRUNE_BATCH: usize = 64;

/// What one call of [`Store::prune_mind`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MindPruned {
    /// Records looked at (at most [`MIND_PRUNE_BATCH`]).
    pub records: usize,
    /// Versions forgotten (`mind_versions` rows deleted).
    pub versions: usize,
    /// Their items deleted from `items`.
    pub items: usize,
    /// The ids of those items, for the replication engine to forget
    /// (`Engine::forget`), so it stops offering them to friends: at most
    /// [`MIND_PRUNE_BATCH`] ×
    /// [`porfiry_protocol::mind::MAX_VERSIONS_PER_RECORD`], 4,096 ids
    /// (128 KiB). [`MindPruned::add`] keeps none: a whole pass's would grow
    /// with the memory, and each call's are handed on as it returns.
    pub item_ids: Vec<ItemId>,
    /// Deleted records whose deletion was forgotten with every version
    /// they had.
    pub deletions: usize,
    /// Where the next call goes on (pass it as `after`); `None`: every
    /// record has been looked at.
    pub next: Option<RecordKey>,
}

impl MindPruned {
    /// Adds the counts of `other` (a later call of the same pass); its
    /// `item_ids` are not kept (see there).
    pub fn add(&mut self, other: &MindPruned) {
        self.records += other.records;
        self.versions += other.versions;
        self.items += other.items;
        self.deletions += other.deletions;
        self.next = other.next;
    }
}

/// What `mind_pruned` remembers of one record.
struct Forgotten {
    /// Every pruned version's vector, merged.
    vv: VersionVector,
    /// The rank ([`VersionRef`]'s `(at_ms, author, id)`) of the deletion
    /// forgotten, while the record stays deleted.
    deletion: Option<(u64, String, ItemId)>,
}

/// A `mind_pruned` row as read: `vv`, `deleted_at`, `deleted_by`,
/// `deleted_id`.
type ForgottenRow = (String, Option<i64>, Option<String>, Option<Vec<u8>>);

fn corrupt(column: &str) -> StorageError {
    StorageError::BadColumn {
        table: "mind_pruned",
        column: column.into(),
        reason: "malformed".into(),
    }
}

impl Store {
    /// Prunes the memory at `now_ms` (the node's clock): looks at up to
    /// [`MIND_PRUNE_BATCH`] records, in key order after `after` (`None`:
    /// from the first), in one transaction, and forgets what
    /// [`RecordVersions::prunable`] names of each. Call it again with the
    /// returned `next` until that is `None`. A record is left for a later
    /// pass while a change made here waits to be published (its
    /// [`super::MindChange::seen`] counts the versions held by arrival) or
    /// while one of its conflicts waits for its task (the task names both
    /// versions).
    pub fn prune_mind(&self, now_ms: u64, after: Option<&RecordKey>) -> Result<MindPruned> {
        // A version written at or before this has outlived the time to
        // live; a record none of whose versions is that old has nothing
        // to forget.
        let expired = i64::try_from(now_ms.saturating_sub(TOMBSTONE_TTL_MS)).unwrap_or(i64::MAX);
        self.transaction(|s| {
            let rows: Vec<(Vec<u8>, i64, i64, bool)> = s
                .conn
                .prepare_cached(
                    "SELECT key, MIN(at_ms), COUNT(*), MAX(deleted) FROM mind_versions
                     WHERE key IN (SELECT DISTINCT key FROM mind_versions
                                   WHERE ?1 IS NULL OR key > ?1 ORDER BY key LIMIT ?2)
                     GROUP BY key ORDER BY key",
                )?
                .query_map(
                    params![after.map(|k| k.as_slice()), MIND_PRUNE_BATCH as i64],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
                )?
                .collect::<rusqlite::Result<_>>()?;
            let mut report = MindPruned {
                records: rows.len(),
                ..MindPruned::default()
            };
            for (key, oldest, count, deleted) in &rows {
                // One version that is no tombstone dominates nothing and
                // beat nothing.
                if *oldest > expired || (*count < 2 && !deleted) {
                    continue;
                }
                let key =
                    RecordKey::try_from(key.as_slice()).map_err(|_| StorageError::BadColumn {
                        table: "mind_versions",
                        column: "key".into(),
                        reason: "not 16 bytes".into(),
                    })?;
                s.prune_record(&key, now_ms, &mut report)?;
            }
            report.next = if rows.len() == MIND_PRUNE_BATCH {
                rows.last()
                    .and_then(|(k, ..)| RecordKey::try_from(k.as_slice()).ok())
            } else {
                None
            };
            Ok(report)
        })
    }

    /// Prunes record `key` at `now_ms` (see [`Store::prune_mind`]).
    fn prune_record(&self, key: &RecordKey, now_ms: u64, report: &mut MindPruned) -> Result<()> {
        if self.mind_change_waits(key)? || self.mind_conflict_waits(key)? {
            return Ok(());
        }
        let versions: RecordVersions = self.record_versions(key, None)?;
        let gone = versions.prunable(now_ms);
        if gone.is_empty() {
            return Ok(());
        }
        let deletion = versions
            .winner()
            .filter(|w| w.deleted && gone.contains(&w.id))
            .map(|w| (w.at_ms, w.author.clone(), w.id));
        // A deleted record whose row is still here (its deletion not
        // shown yet) keeps its versions: the row would have none.
        if deletion.is_some() && matches!(self.mind_row_of(key)?, Some((_, Some(_)))) {
            return Ok(());
        }
        let mut forgotten = self
            .mind_forgotten(key)?
            .map_or_else(VersionVector::new, |f| f.vv);
        for v in versions.versions().iter().filter(|v| gone.contains(&v.id)) {
            if let Err(e) = forgotten.merge(&v.vv) {
                // More devices than a vector holds ever wrote this record:
                // it keeps its versions rather than be forgotten unsafely.
                tracing::warn!(error = %e, "a memory record's pruned versions name too many devices; kept");
                return Ok(());
            }
        }
        for id in &gone {
            report.versions += self
                .conn
                .prepare_cached("DELETE FROM mind_versions WHERE item_id = ?")?
                .execute([id.as_bytes()])?;
            let items = self
                .conn
                .prepare_cached("DELETE FROM items WHERE id = ? AND kind = 'mind_record'")?
                .execute([id.as_bytes()])?;
            if items > 0 {
                report.items += items;
                report.item_ids.push(*id);
            }
            // Its pair can no longer be shown; a made task stays the core's.
            self.conn
                .prepare_cached("DELETE FROM mind_conflicts WHERE a = ?1 OR b = ?1")?
                .execute([id.as_bytes()])?;
        }
        let vv = serde_json::to_string(&forgotten)
            .map_err(|e| StorageError::invalid("mind record vector", e.to_string()))?;
        let (at, by, id) = match &deletion {
            Some((at, by, id)) => (
                Some(int_param("at_ms", *at)?),
                Some(by.as_str()),
                Some(id.as_bytes().to_vec()),
            ),
            None => (None, None, None),
        };
        // A forgotten deletion is only ever replaced by a newer one: a
        // record that lives again had it cleared when its new version
        // came (see `mind_version_forgotten`).
        self.conn
            .prepare_cached(
                "INSERT INTO mind_pruned (key, vv, deleted_at, deleted_by, deleted_id) VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (key) DO UPDATE SET vv = excluded.vv,
                     deleted_at = COALESCE(excluded.deleted_at, deleted_at),
                     deleted_by = COALESCE(excluded.deleted_by, deleted_by),
                     deleted_id = COALESCE(excluded.deleted_id, deleted_id)",
            )?
            .execute(params![key.as_slice(), vv, at, by, id])?;
        if deletion.is_some() {
            // Its winner is gone with the rest; the record stays known
            // (deleted), so a reference to it is not taken for one to a
            // record still to come.
            self.conn
                .prepare_cached("UPDATE mind_records SET winner = NULL, waiting = 0 WHERE key = ?")?
                .execute([key.as_slice()])?;
            report.deletions += 1;
        }
        Ok(())
    }

    /// Whether a conflict of record `key` waits for its task.
    fn mind_conflict_waits(&self, key: &RecordKey) -> Result<bool> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT 1 FROM mind_conflicts WHERE record = ? AND task_id IS NULL LIMIT 1",
            )?
            .exists([key.as_slice()])?)
    }

    /// What pruning forgot of record `key`, if anything.
    fn mind_forgotten(&self, key: &RecordKey) -> Result<Option<Forgotten>> {
        let row: Option<ForgottenRow> = self
            .conn
            .prepare_cached(
                "SELECT vv, deleted_at, deleted_by, deleted_id FROM mind_pruned WHERE key = ?",
            )?
            .query_row([key.as_slice()], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })
            .optional()?;
        let Some((vv, at, by, id)) = row else {
            return Ok(None);
        };
        let vv: VersionVector = serde_json::from_str(&vv).map_err(|_| corrupt("vv"))?;
        let deletion = match (at, by, id) {
            (Some(at), Some(by), Some(id)) => Some((
                u64::try_from(at).map_err(|_| corrupt("deleted_at"))?,
                by,
                ItemId(id.try_into().map_err(|_| corrupt("deleted_id"))?),
            )),
            _ => None,
        };
        Ok(Some(Forgotten { vv, deletion }))
    }

    /// Whether `version` of record `key` is refused because pruning forgot
    /// it, or would forget it at once: its vector is `Before` or `Equal`
    /// to what was pruned of the record (its writer had seen no more than
    /// the pruned versions had; each of those was dominated by a version
    /// written more than the time to live ago, which then dominates this
    /// one too), or it was written apart from a forgotten deletion and
    /// ranks below it (the deletion would have won). Without this a device
    /// away longer than the time to live would bring a deleted record back
    /// by offering its old versions. A version accepted into a record
    /// whose deletion was forgotten (written later, apart from it) ends
    /// that deletion's say: the versions held decide again.
    pub(crate) fn mind_version_forgotten(
        &self,
        key: &RecordKey,
        version: &VersionRef,
    ) -> Result<bool> {
        let Some(forgotten) = self.mind_forgotten(key)? else {
            return Ok(false);
        };
        let refused = match version.vv.compare(&forgotten.vv) {
            Causality::Before | Causality::Equal => true,
            Causality::After => false,
            Causality::Concurrent => forgotten.deletion.as_ref().is_some_and(|(at, by, id)| {
                (version.at_ms, version.author.as_str(), version.id) < (*at, by.as_str(), *id)
            }),
        };
        if !refused && forgotten.deletion.is_some() {
            self.conn
                .prepare_cached(
                    "UPDATE mind_pruned SET deleted_at = NULL, deleted_by = NULL, deleted_id = NULL WHERE key = ?",
                )?
                .execute([key.as_slice()])?;
        }
        Ok(refused)
    }
}

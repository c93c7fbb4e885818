//! Recording each `mind_record` item as a version of its record, in the
//! transaction that stores the item ([`Store::insert_items`]), and showing
//! the winner: the merge rule is the protocol's
//! ([`porfiry_protocol::mind::merge`]); this file keeps its inputs
//! (`mind_versions`), writes the winning fields into the memory row (or
//! deletes it for a winning tombstone), and queues each conflict it
//! reports (`mind_conflicts`) for the node to turn into a task.

use porfiry_protocol::mind::{
    Conflict, MindRecord, MindTable, RecordVersions, VersionRef, VersionVector,
};
use porfiry_protocol::{Body, ItemId, VerifiedItem};
use rusqlite::{OptionalExtension, params};

use super::columns::sql_table;
use super::rows::{RecordKey, Written};
use crate::error::{Result, StorageError};
use crate::items::StoredItem;
use crate::query::int_param;
use crate::store::Store;

/// Most records whose winner waits for a record it refers to that are
/// retried after one batch: a catch-up sends referred records first, so
/// few wait; the rest are retried after the next batch.
pub const MAX_WAITING_RETRIES_PER_BATCH: usize = 256;

/// A conflict waiting for its task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenConflict {
    /// The conflict task record's key (the same on every device).
    pub key: RecordKey,
    /// The record in conflict: its table.
    pub table: MindTable,
    /// The record in conflict: its key.
    pub record: RecordKey,
    /// The two versions, as written.
    pub versions: [MindRecord; 2],
    /// Their writers' peer ids.
    pub authors: [String; 2],
}

fn bad(id: ItemId, reason: impl Into<String>) -> StorageError {
    StorageError::invalid(format!("mind record {id}"), reason)
}

/// The memory version a stored `mind_record` item carries. Its signature
/// was verified when it came (or made when it was signed here), so only the
/// payload is decoded ([`VerifiedItem::stored_payload`]).
fn decode(stored: &StoredItem) -> Result<MindRecord> {
    let id = stored.record.id;
    let payload =
        VerifiedItem::stored_payload(&stored.payload).map_err(|e| bad(id, e.to_string()))?;
    match payload.body {
        Body::MindRecord(r) => Ok(r),
        _ => Err(bad(id, "not a mind_record body")),
    }
}

impl Store {
    /// The versions of record `key` held here, in the order they came (the
    /// first `upto` of them; `None`: all).
    pub(super) fn record_versions(
        &self,
        key: &RecordKey,
        upto: Option<i64>,
    ) -> Result<RecordVersions> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT item_id, author, at_ms, vv, deleted, digest FROM mind_versions
             WHERE key = ?1 AND (?2 IS NULL OR seq <= ?2) ORDER BY seq",
        )?;
        let rows = stmt.query_map(params![key.as_slice(), upto], |r| {
            Ok((
                r.get::<_, Vec<u8>>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, u64>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, bool>(4)?,
                r.get::<_, Vec<u8>>(5)?,
            ))
        })?;
        let mut versions = RecordVersions::new();
        for row in rows {
            let (id, author, at_ms, vv, deleted, digest) = row?;
            let corrupt = |what: &str| StorageError::BadColumn {
                table: "mind_versions",
                column: what.into(),
                reason: "malformed".into(),
            };
            let id = ItemId(id.try_into().map_err(|_| corrupt("item_id"))?);
            let vv: VersionVector = serde_json::from_str(&vv).map_err(|_| corrupt("vv"))?;
            let content = digest.try_into().map_err(|_| corrupt("digest"))?;
            versions.insert(VersionRef {
                id,
                vv,
                at_ms,
                author,
                deleted,
                content,
            });
        }
        Ok(versions)
    }

    /// The vector of a version of record `key` by `device` that succeeds
    /// the first `seen` versions held ([`super::MindChange::seen`]): their
    /// vectors merged, bumped for `device`. A version that came after the
    /// change was made stays concurrent with it.
    pub fn next_mind_vv(&self, key: &RecordKey, device: &str, seen: i64) -> Result<VersionVector> {
        self.record_versions(key, Some(seen))?
            .next_vv(device)
            .map_err(|e| StorageError::invalid("mind record version", e.to_string()))
    }

    /// Records the `mind_record` item `stored` (just inserted) as a version
    /// of its record and shows the winner; `false`, changing nothing, for
    /// a version pruning forgot (or would forget at once), which the caller
    /// then deletes ([`Store::mind_version_forgotten`]). Called by
    /// `insert_items`.
    pub(crate) fn record_mind_version(&self, stored: &StoredItem) -> Result<bool> {
        let record = decode(stored)?;
        let id = stored.record.id;
        let author = stored.record.author.as_str();
        let version = VersionRef::of(id, author, &record);
        if self.mind_version_forgotten(&record.key, &version)? {
            return Ok(false);
        }
        let mut versions = self.record_versions(&record.key, None)?;
        let outcome = versions.insert(version.clone());
        if let Some(gone) = outcome.evicted {
            self.conn
                .prepare_cached("DELETE FROM mind_versions WHERE item_id = ?")?
                .execute([gone.as_bytes()])?;
        }
        let kept = versions.versions().iter().any(|v| v.id == id);
        if kept {
            let vv = serde_json::to_string(&record.vv).map_err(|e| bad(id, e.to_string()))?;
            self.conn
                .prepare_cached(
                    "INSERT INTO mind_versions (item_id, key, author, at_ms, vv, deleted, digest, seq)
                     VALUES (?, ?, ?, ?, ?, ?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM mind_versions WHERE key = ?2))
                     ON CONFLICT (item_id) DO NOTHING",
                )?
                .execute(params![
                    id.as_bytes(),
                    record.key.as_slice(),
                    version.author,
                    int_param("at_ms", record.at_ms)?,
                    vv,
                    record.deleted,
                    version.content.as_slice()
                ])?;
        }
        let known = self.mind_row_of(&record.key)?;
        if let Some((table, _)) = known
            && table != record.table
        {
            return Err(bad(
                id,
                format!("record is a {table}, this version a {}", record.table),
            ));
        }
        if known.is_none() {
            self.conn
                .prepare_cached(
                    "INSERT INTO mind_records (key, tbl, local_id, winner, origin) VALUES (?, ?, NULL, NULL, ?)",
                )?
                .execute(params![record.key.as_slice(), record.table.as_str(), version.author])?;
        }
        for c in &outcome.conflicts {
            self.queue_conflict(&record.key, c)?;
        }
        let own = stored.record.received_from.is_none();
        let Some(winner) = versions.winner().map(|w| w.id) else {
            return Ok(true);
        };
        // The row shows the winner already, unless the winner changed or
        // our own change (written into the row) lost to a version that
        // came while it waited.
        let lost_own = own && winner != id;
        if !outcome.winner_changed && !lost_own {
            return Ok(true);
        }
        self.conn
            .prepare_cached("UPDATE mind_records SET winner = ? WHERE key = ?")?
            .execute(params![winner.as_bytes(), record.key.as_slice()])?;
        // Our own version was written from the row it came from: the row
        // shows it already. (Our own version that lost to one that came
        // while it waited is shown below, like any winner.)
        if winner == id && own {
            return Ok(true);
        }
        // A change made here waits to be published: writing the winner now
        // would lose it; its publication settles the row.
        if !own && self.mind_change_waits(&record.key)? {
            return Ok(true);
        }
        let shown = if winner == id {
            record
        } else {
            self.mind_version(&winner)?
                .ok_or_else(|| bad(winner, "the winning version's item is not held"))?
        };
        match self.show(&shown.key.clone(), &shown, author) {
            // A device wrote fields this node cannot take (a column of a
            // newer schema, a wrong type): the version is kept, the row
            // stays as it was, and the batch's other items are stored.
            Err(e) if e.is_row_refusal() => {
                tracing::warn!(error = %e, "a device's memory record cannot be shown here");
                Ok(true)
            }
            other => other.map(|()| true),
        }
    }

    /// The record a held `mind_record` item carries.
    pub fn mind_version(&self, id: &ItemId) -> Result<Option<MindRecord>> {
        let Some(stored) = self.get_item(id)? else {
            return Ok(None);
        };
        Ok(Some(decode(&stored)?))
    }

    /// Writes the winner `shown` into the record's row, or deletes the row
    /// for a tombstone; a winner that refers to a record not here yet
    /// waits.
    fn show(&self, key: &RecordKey, shown: &MindRecord, origin: &str) -> Result<()> {
        if shown.deleted {
            return self.delete_mind_row(key, shown.table);
        }
        let written =
            self.write_mind_fields(key, shown.table, &shown.fields, origin, shown.at_ms)?;
        let waiting = !matches!(written, Written::Row(_));
        self.conn
            .prepare_cached("UPDATE mind_records SET waiting = ? WHERE key = ?")?
            .execute(params![waiting, key.as_slice()])?;
        Ok(())
    }

    /// Deletes the row of record `key` (a winning tombstone), unpublished,
    /// and forgets the row ids the deletion removes: the row's (every
    /// record mapped to it: two devices' concepts of one name share a row)
    /// and, for a concept, those of the links the schema deletes with it,
    /// so a new row that reuses an id is never taken for an old record.
    fn delete_mind_row(&self, key: &RecordKey, table: MindTable) -> Result<()> {
        let Some((_, Some(local_id))) = self.mind_row_of(key)? else {
            return Ok(());
        };
        self.transaction(|s| {
            if table == MindTable::Concept {
                s.conn
                    .prepare_cached(
                        "UPDATE mind_records SET local_id = NULL WHERE tbl = 'link' AND local_id IN
                         (SELECT id FROM links WHERE from_concept = ?1 OR to_concept = ?1)",
                    )?
                    .execute([local_id])?;
            }
            s.conn
                .execute("INSERT OR IGNORE INTO mind_applying VALUES (1)", [])?;
            s.conn.execute(
                &format!("DELETE FROM {} WHERE id = ?", sql_table(table)),
                [local_id],
            )?;
            s.conn.execute("DELETE FROM mind_applying", [])?;
            s.conn
                .prepare_cached(
                    "UPDATE mind_records SET local_id = NULL, waiting = 0 WHERE tbl = ? AND local_id = ?",
                )?
                .execute(params![table.as_str(), local_id])?;
            Ok(())
        })
    }

    /// Retries records whose winner waited for a record it refers to (at
    /// most [`MAX_WAITING_RETRIES_PER_BATCH`]).
    pub(crate) fn retry_waiting_mind(&self) -> Result<()> {
        let waiting: Vec<(Vec<u8>, Vec<u8>)> = self
            .conn
            .prepare_cached(
                "SELECT key, winner FROM mind_records WHERE waiting = 1 AND winner IS NOT NULL LIMIT ?",
            )?
            .query_map([MAX_WAITING_RETRIES_PER_BATCH as i64], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?
            .collect::<rusqlite::Result<_>>()?;
        for (key, winner) in waiting {
            let (Ok(key), Ok(winner)) = (
                RecordKey::try_from(key.as_slice()),
                <[u8; 32]>::try_from(winner.as_slice()),
            ) else {
                continue;
            };
            let winner = ItemId(winner);
            let Some(shown) = self.mind_version(&winner)? else {
                continue;
            };
            let author = self
                .get_item(&winner)?
                .map(|s| s.record.author)
                .unwrap_or_default();
            self.show(&key, &shown, &author)?;
        }
        Ok(())
    }

    fn queue_conflict(&self, record: &RecordKey, c: &Conflict) -> Result<()> {
        self.conn
            .prepare_cached(
                "INSERT INTO mind_conflicts (key, record, a, b, task_id) VALUES (?, ?, ?, ?, NULL)
                 ON CONFLICT (key) DO NOTHING",
            )?
            .execute(params![
                c.key.as_slice(),
                record.as_slice(),
                c.a.as_bytes(),
                c.b.as_bytes()
            ])?;
        Ok(())
    }

    /// Conflicts still waiting for their task, at most `limit`.
    pub fn open_mind_conflicts(&self, limit: usize) -> Result<Vec<OpenConflict>> {
        let rows: Vec<[Vec<u8>; 4]> = self
            .conn
            .prepare_cached(
                "SELECT key, record, a, b FROM mind_conflicts WHERE task_id IS NULL ORDER BY key LIMIT ?",
            )?
            .query_map([i64::try_from(limit).unwrap_or(i64::MAX)], |r| {
                Ok([r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?])
            })?
            .collect::<rusqlite::Result<_>>()?;
        let mut out = Vec::with_capacity(rows.len());
        for [key, record, a, b] in rows {
            let corrupt = || StorageError::BadColumn {
                table: "mind_conflicts",
                column: "key".into(),
                reason: "malformed".into(),
            };
            let key: RecordKey = key.try_into().map_err(|_| corrupt())?;
            let record: RecordKey = record.try_into().map_err(|_| corrupt())?;
            let ids = [
                ItemId(a.try_into().map_err(|_| corrupt())?),
                ItemId(b.try_into().map_err(|_| corrupt())?),
            ];
            let mut versions = Vec::with_capacity(2);
            let mut authors = Vec::with_capacity(2);
            for id in ids {
                let Some(stored) = self.get_item(&id)? else {
                    break;
                };
                authors.push(stored.record.author.clone());
                versions.push(decode(&stored)?);
            }
            let (Ok(versions), Ok(authors)) = (
                <[MindRecord; 2]>::try_from(versions),
                <[String; 2]>::try_from(authors),
            ) else {
                // A version was pruned before its task was made: nothing
                // to name any more.
                self.conn
                    .prepare_cached("DELETE FROM mind_conflicts WHERE key = ?")?
                    .execute([key.as_slice()])?;
                continue;
            };
            out.push(OpenConflict {
                key,
                table: versions[0].table,
                record,
                versions,
                authors,
            });
        }
        Ok(out)
    }

    /// Makes conflict `key`'s task: a pinned, open task titled `title`
    /// saying `description`, mapped to the conflict's key (so every
    /// device's copy is one record) and not published (every device that
    /// holds both versions makes the same one). A record with a conflict
    /// task still open gets `description` added to that task instead (a
    /// device that wrote twice while apart forms a pair with each of its
    /// versions: one task says them all). When the task's record has a row
    /// already (a device's edit of it arrived first), the conflict is only
    /// closed. Returns the task's row id.
    pub fn make_conflict_task(
        &self,
        key: &RecordKey,
        title: &str,
        description: &str,
        origin: &str,
        now_ms: u64,
    ) -> Result<i64> {
        let now = int_param("now_ms", now_ms)?;
        self.transaction(|s| {
            let record: Vec<u8> = s
                .conn
                .prepare_cached("SELECT record FROM mind_conflicts WHERE key = ?")?
                .query_row([key.as_slice()], |r| r.get(0))?;
            let open: Option<i64> = s
                .conn
                .prepare_cached(
                    "SELECT c.task_id FROM mind_conflicts c JOIN tasks t ON t.id = c.task_id
                     WHERE c.record = ? AND t.status IN ('open', 'in_progress') LIMIT 1",
                )?
                .query_row([record], |r| r.get(0))
                .optional()?;
            let existing = s.mind_row_of(key)?.and_then(|(_, id)| id);
            s.conn.execute("INSERT OR IGNORE INTO mind_applying VALUES (1)", [])?;
            let task_id = match (existing, open) {
                (Some(id), _) => id,
                (None, Some(id)) => {
                    s.conn
                        .prepare_cached(
                            "UPDATE tasks SET description = description || char(10) || ?, updated = ? WHERE id = ?",
                        )?
                        .execute(params![description, now, id])?;
                    id
                }
                (None, None) => {
                    s.conn
                        .prepare_cached(
                            "INSERT INTO tasks (goal_id, title, description, status, priority, pinned, tags, created, updated)
                             VALUES (NULL, ?, ?, 'open', 1, 1, '[\"conflict\"]', ?, ?)",
                        )?
                        .execute(params![title, description, now, now])?;
                    let id = s.conn.last_insert_rowid();
                    s.conn
                        .prepare_cached(
                            "INSERT INTO mind_records (key, tbl, local_id, winner, origin) VALUES (?, 'task', ?, NULL, ?)
                             ON CONFLICT (key) DO UPDATE SET local_id = excluded.local_id",
                        )?
                        .execute(params![key.as_slice(), id, origin])?;
                    id
                }
            };
            s.conn.execute("DELETE FROM mind_applying", [])?;
            s.conn
                .prepare_cached("UPDATE mind_conflicts SET task_id = ? WHERE key = ?")?
                .execute(params![task_id, key.as_slice()])?;
            Ok(task_id)
        })
    }
}

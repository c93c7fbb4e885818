//! What this device changed in its long-term memory and has not yet
//! published to its other devices: `mind_outbox`, an entry per changed row
//! and per deleted record, filled by triggers (so every writer is seen, in
//! any process) and drained by the node, which turns each change into a
//! signed `mind_record` version ([`Store::mind_outbox`],
//! [`Store::take_mind_change`]).

use std::collections::BTreeMap;

use porfiry_protocol::mind::{MindTable, MindValue};
use rusqlite::{OptionalExtension, params};

use super::columns::PUBLISH_ORDER;
use super::rows::RecordKey;
use crate::error::{Result, StorageError};
use crate::store::Store;

/// One change made here, waiting to be published.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutboxEntry {
    /// Its table.
    pub table: MindTable,
    /// The row's id here (for a deletion, the id the row had).
    pub local_id: i64,
    /// For a deletion, the record deleted; `None` for a write.
    pub deleted: Option<RecordKey>,
    /// How many of the record's versions this device held when the row
    /// first changed: the version published for it succeeds those only.
    pub seen: i64,
}

/// A change ready to be signed as a version of record `key`.
#[derive(Debug, Clone, PartialEq)]
pub struct MindChange {
    /// The row's table.
    pub table: MindTable,
    /// The record.
    pub key: RecordKey,
    /// The row's fields now; `None` for a deletion.
    pub fields: Option<BTreeMap<String, MindValue>>,
    /// The versions it succeeds (see [`OutboxEntry::seen`]).
    pub seen: i64,
}

impl Store {
    /// How many changes wait to be published.
    pub fn mind_outbox_len(&self) -> Result<u64> {
        Ok(self
            .conn
            .prepare_cached("SELECT COUNT(*) FROM mind_outbox")?
            .query_row([], |r| r.get(0))?)
    }

    /// Up to `limit` changes, the tables others refer to first (a concept
    /// before its links, a goal before its tasks), so a device that
    /// receives them in order can write each at once; within a table, in
    /// the order they were made.
    pub fn mind_outbox(&self, limit: usize) -> Result<Vec<OutboxEntry>> {
        let mut out = Vec::new();
        for table in PUBLISH_ORDER {
            if out.len() >= limit {
                break;
            }
            let left = i64::try_from(limit - out.len()).unwrap_or(i64::MAX);
            let rows: Vec<(i64, Option<Vec<u8>>, i64)> = self
                .conn
                .prepare_cached(
                    "SELECT local_id, key, seen FROM mind_outbox WHERE tbl = ? ORDER BY seq LIMIT ?",
                )?
                .query_map(params![table.as_str(), left], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                })?
                .collect::<rusqlite::Result<_>>()?;
            for (local_id, key, seen) in rows {
                let deleted = key
                    .map(|k| {
                        RecordKey::try_from(k.as_slice()).map_err(|_| StorageError::BadColumn {
                            table: "mind_outbox",
                            column: "key".into(),
                            reason: "not 16 bytes".into(),
                        })
                    })
                    .transpose()?;
                out.push(OutboxEntry {
                    table,
                    local_id,
                    deleted,
                    seen,
                });
            }
        }
        Ok(out)
    }

    /// Takes `entry` out of the outbox and says what to publish for it, as
    /// the device `origin`: the row's fields under its record key (given one
    /// if it had none), a deletion of the record it names, or nothing (a
    /// row deleted since it was queued as a write; its deletion, if it was
    /// ever published, is queued apart). Call it in the transaction that
    /// stores the signed version, so a crash between the two publishes it
    /// again instead of losing it.
    pub fn take_mind_change(&self, entry: OutboxEntry, origin: &str) -> Result<Option<MindChange>> {
        if let Some(key) = entry.deleted {
            self.conn
                .prepare_cached("DELETE FROM mind_outbox WHERE key = ?")?
                .execute([key.as_slice()])?;
            return Ok(Some(MindChange {
                table: entry.table,
                key,
                fields: None,
                seen: entry.seen,
            }));
        }
        self.conn
            .prepare_cached(
                "DELETE FROM mind_outbox WHERE tbl = ? AND local_id = ? AND key IS NULL",
            )?
            .execute(params![entry.table.as_str(), entry.local_id])?;
        let Some(fields) = self.mind_fields(origin, entry.table, entry.local_id)? else {
            return Ok(None);
        };
        let key = self.mind_key_or_new(origin, entry.table, entry.local_id)?;
        Ok(Some(MindChange {
            table: entry.table,
            key,
            fields: Some(fields),
            seen: entry.seen,
        }))
    }

    /// Whether a change made here to record `key` (its row, or its
    /// deletion) waits to be published: a received version is then not
    /// written into the row, so the change is not lost before it is
    /// signed; publishing it settles which version shows.
    pub(crate) fn mind_change_waits(&self, key: &RecordKey) -> Result<bool> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT 1 FROM mind_outbox o WHERE o.key = ?1
                 OR (o.key IS NULL AND EXISTS (SELECT 1 FROM mind_records r
                     WHERE r.key = ?1 AND r.tbl = o.tbl AND r.local_id = o.local_id))
                 LIMIT 1",
            )?
            .query_row([key.as_slice()], |_| Ok(()))
            .optional()?
            .is_some())
    }
}

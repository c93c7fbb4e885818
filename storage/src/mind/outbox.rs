//! What this device changed in its long-term memory and has not yet
//! published to its other devices: `mind_outbox`, one row per changed row,
//! filled by triggers (so every writer is seen, in any process) and drained
//! by the node, which turns each change into a signed `mind_record`
//! version ([`Store::mind_outbox`], [`Store::take_mind_change`]).

use std::collections::BTreeMap;

use porfiry_protocol::mind::{MindTable, MindValue};
use rusqlite::params;

use super::columns::PUBLISH_ORDER;
use super::rows::RecordKey;
use crate::error::{Result, StorageError};
use crate::store::Store;

/// One row changed here, waiting to be published.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutboxEntry {
    /// Its table.
    pub table: MindTable,
    /// Its row id here.
    pub local_id: i64,
    /// Whether the row was deleted.
    pub deleted: bool,
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
}

impl Store {
    /// How many changed rows wait to be published.
    pub fn mind_outbox_len(&self) -> Result<u64> {
        Ok(self
            .conn
            .prepare_cached("SELECT COUNT(*) FROM mind_outbox")?
            .query_row([], |r| r.get(0))?)
    }

    /// Up to `limit` changed rows, the tables others refer to first (a
    /// concept before its links, a goal before its tasks), so a device that
    /// receives them in order can write each at once.
    pub fn mind_outbox(&self, limit: usize) -> Result<Vec<OutboxEntry>> {
        let mut out = Vec::new();
        for table in PUBLISH_ORDER {
            if out.len() >= limit {
                break;
            }
            let left = i64::try_from(limit - out.len()).unwrap_or(i64::MAX);
            let rows: Vec<(i64, bool)> = self
                .conn
                .prepare_cached(
                    "SELECT local_id, deleted FROM mind_outbox WHERE tbl = ? ORDER BY local_id LIMIT ?",
                )?
                .query_map(params![table.as_str(), left], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<_>>()?;
            out.extend(rows.into_iter().map(|(local_id, deleted)| OutboxEntry {
                table,
                local_id,
                deleted,
            }));
        }
        Ok(out)
    }

    /// Takes `entry` out of the outbox and says what to publish for it, as
    /// the device `origin`: the row's fields under its record key (given one
    /// if it had none), a deletion of the record it was, or nothing (a row
    /// deleted before it was ever published; a row deleted since it was
    /// queued as a write, whose deletion is queued too). Call it in the
    /// transaction that stores the signed version, so a crash between the
    /// two publishes it again instead of losing it.
    pub fn take_mind_change(&self, entry: OutboxEntry, origin: &str) -> Result<Option<MindChange>> {
        self.conn
            .prepare_cached("DELETE FROM mind_outbox WHERE tbl = ? AND local_id = ?")?
            .execute(params![entry.table.as_str(), entry.local_id])?;
        if entry.deleted {
            let Some(key) = self.mind_key_of(entry.table, entry.local_id)? else {
                return Ok(None);
            };
            self.conn
                .prepare_cached("UPDATE mind_records SET local_id = NULL WHERE key = ?")?
                .execute([key.as_slice()])?;
            return Ok(Some(MindChange {
                table: entry.table,
                key,
                fields: None,
            }));
        }
        let Some(fields) = self.mind_fields(origin, entry.table, entry.local_id)? else {
            return Ok(None);
        };
        let key = self.mind_key_or_new(origin, entry.table, entry.local_id)?;
        Ok(Some(MindChange {
            table: entry.table,
            key,
            fields: Some(fields),
        }))
    }

    /// Empties the outbox without publishing (for a node that unlinks its
    /// last device: what it writes alone is its own again). Returns how
    /// many changes were dropped.
    pub fn clear_mind_outbox(&self) -> Result<usize> {
        self.conn
            .execute("DELETE FROM mind_outbox", [])
            .map_err(StorageError::from)
    }
}

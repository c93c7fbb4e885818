//! A memory row as a record's fields and back: [`Store::mind_fields`]
//! reads a local row (references turned into record keys), and
//! [`Store::write_mind_fields`] writes a received record's fields into its
//! row (keys turned back into local ids), with `mind_applying` set so the
//! write is not published again. Also the record ↔ row map
//! (`mind_records`).

use std::collections::BTreeMap;

use porfiry_protocol::mind::{MindTable, MindValue};
use rusqlite::types::Value;
use rusqlite::{OptionalExtension, params};

use super::columns::{ColumnKind, columns, sql_table};
use super::config;
use super::target::TargetHere;
use crate::error::{Result, StorageError};
use crate::store::Store;

/// A record's key: 16 bytes, the same on every device.
pub type RecordKey = [u8; 16];

/// What writing a record's fields did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// The row (new or updated) has this local id.
    Row(i64),
    /// The row was written, but a record an optional reference names (a
    /// task's goal) is not here yet: the reference is empty until it comes.
    RowWaiting(i64),
    /// A record a needed reference names (a link's concept) is not here
    /// yet: nothing was written; it is written when that record arrives.
    Waiting(RecordKey),
}

fn bad(what: &str, reason: impl Into<String>) -> StorageError {
    StorageError::invalid(format!("mind record {what}"), reason)
}

fn parse_key(text: &str) -> Result<RecordKey> {
    let mut key = [0u8; 16];
    hex::decode_to_slice(text, &mut key)
        .map_err(|_| bad("reference", format!("{text:?} is not a 32-digit hex key")))?;
    Ok(key)
}

impl Store {
    /// The record key of row `local_id` of `table`, if it has one.
    pub fn mind_key_of(&self, table: MindTable, local_id: i64) -> Result<Option<RecordKey>> {
        let key: Option<Vec<u8>> = self
            .conn
            .prepare_cached("SELECT key FROM mind_records WHERE tbl = ? AND local_id = ? LIMIT 1")?
            .query_row(params![table.as_str(), local_id], |r| r.get(0))
            .optional()?;
        key.map(|k| {
            k.try_into()
                .map_err(|_| bad("key", "stored key is not 16 bytes"))
        })
        .transpose()
    }

    /// The record key of row `local_id` of `table`, given a new random one
    /// (SQLite's `randomblob`, 128 bits: no two records ever share one,
    /// even a row that reuses a deleted row's id) if it has none yet.
    /// `origin` is this device, recorded as the record's creator.
    pub fn mind_key_or_new(
        &self,
        origin: &str,
        table: MindTable,
        local_id: i64,
    ) -> Result<RecordKey> {
        if let Some(key) = self.mind_key_of(table, local_id)? {
            return Ok(key);
        }
        let key: Vec<u8> = self
            .conn
            .prepare_cached("SELECT randomblob(16)")?
            .query_row([], |r| r.get(0))?;
        let key: RecordKey = key
            .try_into()
            .map_err(|_| bad("key", "randomblob gave not 16 bytes"))?;
        self.conn
            .prepare_cached(
                "INSERT INTO mind_records (key, tbl, local_id, winner, origin) VALUES (?, ?, ?, NULL, ?)
                 ON CONFLICT (key) DO UPDATE SET local_id = excluded.local_id",
            )?
            .execute(params![key.as_slice(), table.as_str(), local_id, origin])?;
        Ok(key)
    }

    /// The local row of record `key`: its table and row id (`None` while
    /// deleted or not yet written), or `None` if the record is unknown.
    pub fn mind_row_of(&self, key: &RecordKey) -> Result<Option<(MindTable, Option<i64>)>> {
        let row: Option<(String, Option<i64>)> = self
            .conn
            .prepare_cached("SELECT tbl, local_id FROM mind_records WHERE key = ?")?
            .query_row([key.as_slice()], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        row.map(|(t, id)| {
            let t = t
                .parse::<MindTable>()
                .map_err(|e| bad("table", e.to_string()))?;
            Ok((t, id))
        })
        .transpose()
    }

    /// Row `local_id` of `table` as a record's fields, or `None` if there
    /// is no such row. A reference to a row without a record key gets one
    /// derived from `origin`.
    pub fn mind_fields(
        &self,
        origin: &str,
        table: MindTable,
        local_id: i64,
    ) -> Result<Option<BTreeMap<String, MindValue>>> {
        let cols = columns(table);
        let names: Vec<&str> = cols.iter().map(|c| c.name).collect();
        let sql = format!(
            "SELECT {} FROM {} WHERE id = ?",
            names.join(", "),
            sql_table(table)
        );
        let values: Option<Vec<Value>> = self
            .conn
            .prepare_cached(&sql)?
            .query_row([local_id], |r| {
                (0..cols.len()).map(|i| r.get::<_, Value>(i)).collect()
            })
            .optional()?;
        let Some(values) = values else {
            return Ok(None);
        };
        let mut fields = BTreeMap::new();
        for (c, v) in cols.iter().zip(values) {
            let value = match (c.kind, v) {
                (_, Value::Null) => continue,
                (ColumnKind::Int, Value::Integer(i)) => MindValue::Int(i),
                (ColumnKind::Flag, Value::Integer(i)) => MindValue::Bool(i != 0),
                (ColumnKind::Text, Value::Text(t)) => MindValue::Text(t),
                (ColumnKind::Real, Value::Real(x)) => MindValue::Text(x.to_string()),
                (ColumnKind::Real, Value::Integer(i)) => MindValue::Text(i.to_string()),
                (ColumnKind::Ref(to), Value::Integer(id)) => {
                    MindValue::Text(hex::encode(self.mind_key_or_new(origin, to, id)?))
                }
                (ColumnKind::Target, Value::Text(t)) => {
                    MindValue::Text(self.target_to_share(origin, t)?)
                }
                (ColumnKind::Config, Value::Text(t)) => MindValue::Text(config::shared(&t)?),
                (kind, other) => {
                    return Err(bad(
                        c.name,
                        format!("{kind:?} column holds {:?}", other.data_type()),
                    ));
                }
            };
            fields.insert(c.name.to_owned(), value);
        }
        Ok(Some(fields))
    }

    /// Writes a received record `key` of `table` into its row: updates the
    /// row the record maps to, or inserts one (and maps it) when there is
    /// none. A concept whose name is taken here by another record's row
    /// maps to that row (the two devices named the same thing). Runs with
    /// `mind_applying` set, so the triggers do not publish it back. Fields
    /// not in the table's list, of the wrong type, or missing where the
    /// column needs a value are refused.
    pub fn write_mind_fields(
        &self,
        key: &RecordKey,
        table: MindTable,
        fields: &BTreeMap<String, MindValue>,
        origin: &str,
        at_ms: u64,
    ) -> Result<Written> {
        let cols = columns(table);
        if let Some(name) = fields
            .keys()
            .find(|n| !cols.iter().any(|c| c.name == n.as_str()))
        {
            return Err(bad("field", format!("{table} has no column {name:?}")));
        }
        let mut values = Vec::with_capacity(cols.len());
        let mut waits = false;
        for c in cols {
            let v = match (c.kind, fields.get(c.name)) {
                (_, None) if c.nullable => Value::Null,
                (_, None) => return Err(bad(c.name, "missing")),
                (ColumnKind::Int, Some(MindValue::Int(i))) => Value::Integer(*i),
                (ColumnKind::Flag, Some(MindValue::Bool(b))) => Value::Integer(i64::from(*b)),
                (ColumnKind::Text, Some(MindValue::Text(t))) => Value::Text(t.clone()),
                // The row's own secret keys are put back in `write_row`.
                (ColumnKind::Config, Some(MindValue::Text(t))) => {
                    Value::Text(config::received(t, None)?)
                }
                (ColumnKind::Target, Some(MindValue::Text(t))) => match self.target_here(t)? {
                    TargetHere::Text(t) => Value::Text(t),
                    TargetHere::Waiting(target) => return Ok(Written::Waiting(target)),
                },
                (ColumnKind::Real, Some(MindValue::Text(t))) => Value::Real(
                    t.parse::<f64>()
                        .ok()
                        .filter(|x| x.is_finite())
                        .ok_or_else(|| bad(c.name, format!("{t:?} is not a number")))?,
                ),
                (ColumnKind::Ref(to), Some(MindValue::Text(t))) => {
                    let target = parse_key(t)?;
                    match self.mind_row_of(&target)? {
                        Some((found, Some(id))) if found == to => Value::Integer(id),
                        Some((found, _)) if found != to => {
                            return Err(bad(c.name, format!("refers to a {found}, not a {to}")));
                        }
                        // Deleted: an optional reference is left empty.
                        Some(_) if c.nullable => Value::Null,
                        // Not here yet: an optional reference is left
                        // empty until it comes, a needed one waits.
                        None if c.nullable => {
                            waits = true;
                            Value::Null
                        }
                        _ => return Ok(Written::Waiting(target)),
                    }
                }
                (kind, Some(v)) => {
                    return Err(bad(c.name, format!("{kind:?} column cannot take {v:?}")));
                }
            };
            values.push(v);
        }
        let at = i64::try_from(at_ms).map_err(|_| bad("time", "out of range"))?;
        self.transaction(|s| {
            s.conn
                .execute("INSERT OR IGNORE INTO mind_applying VALUES (1)", [])?;
            let written = s.write_row(key, table, cols, values, origin, at);
            s.conn.execute("DELETE FROM mind_applying", [])?;
            match written? {
                Written::Row(id) if waits => Ok(Written::RowWaiting(id)),
                other => Ok(other),
            }
        })
    }

    fn write_row(
        &self,
        key: &RecordKey,
        table: MindTable,
        cols: &[super::columns::Column],
        values: Vec<Value>,
        origin: &str,
        at: i64,
    ) -> Result<Written> {
        let tbl = sql_table(table);
        let mut row = self.mind_row_of(key)?.and_then(|(_, id)| id);
        if row.is_none() && table == MindTable::Concept {
            // Two devices named the same concept: one row, two keys.
            let name = cols.iter().position(|c| c.name == "name");
            if let Some(Value::Text(name)) = name.and_then(|i| values.get(i)) {
                row = self
                    .conn
                    .prepare_cached("SELECT id FROM concepts WHERE name = ?")?
                    .query_row([name], |r| r.get(0))
                    .optional()?;
            }
        }
        let id = match row {
            Some(id) => {
                let values = self.keep_local_config(tbl, cols, values, id)?;
                let sets: Vec<String> = cols.iter().map(|c| format!("{} = ?", c.name)).collect();
                let sql = format!(
                    "UPDATE {tbl} SET {}, updated = ? WHERE id = ?",
                    sets.join(", ")
                );
                let mut params: Vec<Value> = values.clone();
                params.push(Value::Integer(at));
                params.push(Value::Integer(id));
                let n = self
                    .conn
                    .prepare_cached(&sql)?
                    .execute(rusqlite::params_from_iter(params))
                    .map_err(|e| StorageError::from_write("mind record", e))?;
                if n == 1 {
                    id
                } else {
                    // The row was deleted here and its tombstone not yet
                    // published: the record lives on in a new row.
                    self.insert_row(tbl, cols, values, at)?
                }
            }
            None => self.insert_row(tbl, cols, values, at)?,
        };
        self.conn
            .prepare_cached(
                "INSERT INTO mind_records (key, tbl, local_id, winner, origin) VALUES (?, ?, ?, NULL, ?)
                 ON CONFLICT (key) DO UPDATE SET local_id = excluded.local_id",
            )?
            .execute(params![key.as_slice(), table.as_str(), id, origin])?;
        Ok(Written::Row(id))
    }

    /// `values` with each config column's local keys (its secret) taken
    /// from row `id` of `tbl` as it is here, so a received version never
    /// overwrites or empties them.
    fn keep_local_config(
        &self,
        tbl: &str,
        cols: &[super::columns::Column],
        mut values: Vec<Value>,
        id: i64,
    ) -> Result<Vec<Value>> {
        for (c, v) in cols.iter().zip(values.iter_mut()) {
            if c.kind != ColumnKind::Config {
                continue;
            }
            let Value::Text(received) = v else {
                continue;
            };
            let local: Option<String> = self
                .conn
                .prepare_cached(&format!("SELECT {} FROM {tbl} WHERE id = ?", c.name))?
                .query_row([id], |r| r.get(0))
                .optional()?;
            *received = config::received(received, local.as_deref())?;
        }
        Ok(values)
    }

    fn insert_row(
        &self,
        tbl: &str,
        cols: &[super::columns::Column],
        mut values: Vec<Value>,
        at: i64,
    ) -> Result<i64> {
        let names: Vec<&str> = cols.iter().map(|c| c.name).collect();
        let marks = vec!["?"; cols.len() + 1].join(", ");
        let sql = format!(
            "INSERT INTO {tbl} ({}, updated) VALUES ({marks})",
            names.join(", ")
        );
        values.push(Value::Integer(at));
        self.conn
            .prepare_cached(&sql)?
            .execute(rusqlite::params_from_iter(values))
            .map_err(|e| StorageError::from_write("mind record", e))?;
        Ok(self.conn.last_insert_rowid())
    }
}

//! Generic operations every [`Record`] table shares: add, get, list, count,
//! update, delete, set tags, pin / unpin. Table modules build on the
//! crate-internal `select` and `set_columns` helpers for their own queries.

use rusqlite::ToSql;
use rusqlite::params_from_iter;
use rusqlite::types::{ToSqlOutput, Value, ValueRef};

use crate::error::{Result, StorageError};
use crate::limits::MAX_TEXT_BYTES;
use crate::query::{Filter, ListQuery, int_param, resolve_limit};
use crate::record::{Pinnable, Record, Stored, Tagged, check_tags, json_to_sql};
use crate::store::Store;

/// Refuses text values over [`MAX_TEXT_BYTES`], naming the column.
fn check_lengths<T: Record>(values: &[ToSqlOutput<'_>]) -> Result<()> {
    for (v, &column) in values.iter().zip(T::COLUMNS) {
        let len = match v {
            ToSqlOutput::Borrowed(ValueRef::Text(t)) => t.len(),
            ToSqlOutput::Owned(Value::Text(t)) => t.len(),
            _ => 0,
        };
        if len > MAX_TEXT_BYTES {
            return Err(StorageError::TooLong {
                table: T::TABLE,
                column,
                len,
                max: MAX_TEXT_BYTES,
            });
        }
    }
    Ok(())
}

/// `INSERT INTO <table> (<columns>, created, updated) VALUES (…) <tail>`.
pub(crate) fn insert_sql<T: Record>(tail: &str) -> String {
    let cols = T::COLUMNS.join(", ");
    let marks = vec!["?"; T::COLUMNS.len() + 2].join(", ");
    format!(
        "INSERT INTO {} ({cols}, created, updated) VALUES ({marks}) {tail}",
        T::TABLE
    )
}

fn not_found<T: Record>(id: i64) -> StorageError {
    StorageError::NotFound {
        table: T::TABLE,
        key: format!("id {id}"),
    }
}

impl Store {
    /// Adds a row, stamped `created = updated = now_ms`; returns its id.
    pub fn add<T: Record>(&self, row: &T, now_ms: u64) -> Result<i64> {
        let mut stmt = self.conn.prepare_cached(&insert_sql::<T>(""))?;
        let id = self.insert_prepared(&mut stmt, row, now_ms)?;
        id.ok_or_else(|| StorageError::Sqlite(rusqlite::Error::StatementChangedRows(0)))
    }

    /// Runs a statement prepared from [`insert_sql`] for `row`, stamped
    /// `created = updated = now_ms`; `None` when its tail skipped the row.
    /// A batch prepares the statement once for all its rows.
    pub(crate) fn insert_prepared<T: Record>(
        &self,
        stmt: &mut rusqlite::Statement<'_>,
        row: &T,
        now_ms: u64,
    ) -> Result<Option<i64>> {
        let mut values = row.values()?;
        check_lengths::<T>(&values)?;
        let now = int_param("time", now_ms)?;
        values.push(ToSqlOutput::Owned(now.clone()));
        values.push(ToSqlOutput::Owned(now));
        let n = stmt
            .execute(params_from_iter(values.iter()))
            .map_err(|e| StorageError::from_write(T::TABLE, e))?;
        Ok((n > 0).then(|| self.conn.last_insert_rowid()))
    }

    /// Adds all rows in one transaction (all or none); returns their ids in order.
    pub fn add_many<T: Record>(&self, rows: &[T], now_ms: u64) -> Result<Vec<i64>> {
        self.transaction(|s| rows.iter().map(|r| s.add(r, now_ms)).collect())
    }

    /// The row with this id, or [`StorageError::NotFound`].
    pub fn get<T: Record>(&self, id: i64) -> Result<Stored<T>> {
        let mut f = Filter::default();
        f.and("id = ?", [Value::Integer(id)]);
        self.select::<T>(&f, "id", 1, 0)?
            .pop()
            .ok_or_else(|| not_found::<T>(id))
    }

    /// Rows matching `q`, newest first unless `q.oldest_first`.
    pub fn list<T: Record>(&self, q: &ListQuery) -> Result<Vec<Stored<T>>> {
        let limit = resolve_limit(q.limit)?;
        let mut f = Filter::default();
        if let Some(tag) = &q.tag {
            if !T::COLUMNS.contains(&"tags") {
                return Err(StorageError::invalid(
                    "filter",
                    format!("{} has no tags", T::TABLE),
                ));
            }
            f.json_contains("tags", tag);
        }
        if let Some(p) = q.pinned {
            if !T::COLUMNS.contains(&"pinned") {
                return Err(StorageError::invalid(
                    "filter",
                    format!("{} has no pins", T::TABLE),
                ));
            }
            f.and("pinned = ?", [Value::Integer(p.into())]);
        }
        if let Some(text) = &q.text {
            if T::SEARCH.is_empty() {
                return Err(StorageError::invalid(
                    "filter",
                    format!("{} has no searchable text", T::TABLE),
                ));
            }
            f.text_in(T::SEARCH, text);
        }
        if let Some(since) = q.since_ms {
            f.and("created >= ?", [int_param("since_ms", since)?]);
        }
        let order = if q.oldest_first {
            "created, id"
        } else {
            "created DESC, id DESC"
        };
        self.select::<T>(&f, order, limit, q.offset)
    }

    /// Number of rows in `T`'s table.
    pub fn count<T: Record>(&self) -> Result<u64> {
        Ok(self
            .conn
            .query_row(&format!("SELECT count(*) FROM {}", T::TABLE), [], |r| {
                r.get(0)
            })?)
    }

    /// Number of rows in `T`'s table created at or after `since_ms`.
    pub fn count_since<T: Record>(&self, since_ms: u64) -> Result<u64> {
        let since = i64::try_from(since_ms).unwrap_or(i64::MAX);
        Ok(self.conn.query_row(
            &format!("SELECT count(*) FROM {} WHERE created >= ?1", T::TABLE),
            [since],
            |r| r.get(0),
        )?)
    }

    /// Replaces the row's content columns and sets `updated = now_ms`.
    pub fn update<T: Record>(&self, id: i64, row: &T, now_ms: u64) -> Result<()> {
        let values = row.values()?;
        check_lengths::<T>(&values)?;
        let sets = T::COLUMNS
            .iter()
            .map(|c| format!("{c} = ?"))
            .collect::<Vec<_>>()
            .join(", ");
        let params: Vec<&dyn ToSql> = values.iter().map(|v| v as &dyn ToSql).collect();
        self.set_columns::<T>(id, &sets, &params, now_ms)
    }

    /// Deletes the row, or [`StorageError::NotFound`]. Rows that refer to it
    /// follow the table's foreign-key rule (cascade or set null), and a
    /// row still referred to under a restricting key gives [`StorageError::ForeignKey`].
    pub fn delete<T: Record>(&self, id: i64) -> Result<()> {
        let sql = format!("DELETE FROM {} WHERE id = ?", T::TABLE);
        let n = self
            .conn
            .prepare_cached(&sql)?
            .execute([id])
            .map_err(|e| StorageError::from_write(T::TABLE, e))?;
        if n == 0 {
            Err(not_found::<T>(id))
        } else {
            Ok(())
        }
    }

    /// Replaces the row's tags.
    pub fn set_tags<T: Tagged>(&self, id: i64, tags: &[String], now_ms: u64) -> Result<()> {
        check_tags(tags)?;
        let json = json_to_sql(T::TABLE, "tags", tags)?;
        self.set_columns::<T>(id, "tags = ?", &[&json], now_ms)
    }

    /// Pins (`true`) or unpins the row: pinned rows stay in the agent's attention.
    pub fn set_pinned<T: Pinnable>(&self, id: i64, pinned: bool, now_ms: u64) -> Result<()> {
        self.set_columns::<T>(id, "pinned = ?", &[&pinned], now_ms)
    }

    /// Pins (or unpins) every row of `T` carrying `tag` that is not so
    /// already (seed 003: attention held "by means of tags"); returns how
    /// many changed.
    pub fn set_pinned_by_tag<T: Pinnable + Tagged>(
        &self,
        tag: &str,
        pinned: bool,
        now_ms: u64,
    ) -> Result<usize> {
        check_tags(&[tag.to_owned()])?;
        let now = int_param("time", now_ms)?;
        let sql = format!(
            "UPDATE {t} SET pinned = ?1, updated = ?2 WHERE pinned <> ?1 \
             AND EXISTS (SELECT 1 FROM json_each({t}.tags) AS j WHERE j.value = ?3)",
            t = T::TABLE
        );
        Ok(self
            .conn
            .prepare_cached(&sql)?
            .execute(rusqlite::params![pinned, now, tag])?)
    }

    /// `SELECT id, created, updated, <columns> FROM <table> <filter> ORDER BY <order> LIMIT OFFSET`.
    pub(crate) fn select<T: Record>(
        &self,
        f: &Filter,
        order: &str,
        limit: u32,
        offset: u32,
    ) -> Result<Vec<Stored<T>>> {
        let sql = format!(
            "SELECT id, created, updated, {} FROM {}{} ORDER BY {order} LIMIT {limit} OFFSET {offset}",
            T::COLUMNS.join(", "),
            T::TABLE,
            f.where_sql()
        );
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(params_from_iter(f.params.iter()), Stored::<T>::from_row)?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| StorageError::from_read(T::TABLE, &Stored::<T>::column_names(), e))
    }

    /// `UPDATE <table> SET <sets>, updated = now WHERE id = ?`; NotFound when no row.
    pub(crate) fn set_columns<T: Record>(
        &self,
        id: i64,
        sets: &str,
        params: &[&dyn ToSql],
        now_ms: u64,
    ) -> Result<()> {
        self.set_columns_by::<T>("id", &id, || format!("id {id}"), sets, params, now_ms)
    }

    /// `UPDATE <table> SET <sets>, updated = now WHERE <key_col> = key`;
    /// NotFound (described by `key_desc`) when no row matches.
    pub(crate) fn set_columns_by<T: Record>(
        &self,
        key_col: &str,
        key: &dyn ToSql,
        key_desc: impl FnOnce() -> String,
        sets: &str,
        params: &[&dyn ToSql],
        now_ms: u64,
    ) -> Result<()> {
        let now = int_param("time", now_ms)?;
        let mut params = params.to_vec();
        params.push(&now);
        params.push(key);
        let sql = format!(
            "UPDATE {} SET {sets}, updated = ? WHERE {key_col} = ?",
            T::TABLE
        );
        let n = self
            .conn
            .prepare_cached(&sql)?
            .execute(params.as_slice())
            .map_err(|e| StorageError::from_write(T::TABLE, e))?;
        if n == 0 {
            Err(StorageError::NotFound {
                table: T::TABLE,
                key: key_desc(),
            })
        } else {
            Ok(())
        }
    }
}

//! Rows that travel over the mesh: notes and the shareable strategies,
//! thinking methods, ratings and LLM addresses.
//!
//! A local row that was published records its item id in `item_id`. A row
//! merged from a friend's item records `origin_author` and `origin_item_id`
//! (unique, so merging the same item twice keeps one row), and is deleted
//! again when its author retracts the item.

use porfiry_protocol::ItemId;
use rusqlite::OptionalExtension;
use rusqlite::types::Value;

use crate::crud::insert_sql;
use crate::error::{Result, StorageError};
use crate::query::{Filter, resolve_limit};
use crate::record::{Record, Stored};
use crate::store::Store;

/// What a merge does with an item merged before: keeps the row it made.
const MERGE_CONFLICT: &str = "ON CONFLICT (origin_item_id) DO NOTHING";

/// A table whose rows can be published as items or merged from them.
pub trait Publishable: Record {
    /// SQL condition selecting local rows that should be published but have
    /// not been yet.
    const TO_PUBLISH: &'static str;
    /// The item a merged row came from; `None` for local rows.
    fn origin_item_id(&self) -> Option<&ItemId>;
    /// The author of the item a merged row came from.
    fn origin_author(&self) -> Option<&str>;
}

/// Whether [`Store::merge_from_item`] added a row or found it already there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Merged {
    /// A new row with this id.
    Added(i64),
    /// The item was merged before, as this row.
    Existing(i64),
}

impl Merged {
    /// The row id either way.
    pub fn id(self) -> i64 {
        match self {
            Merged::Added(id) | Merged::Existing(id) => id,
        }
    }
}

impl Store {
    /// Records that local row `id` was published as item `item_id`.
    pub fn mark_published<T: Publishable>(
        &self,
        id: i64,
        item_id: &ItemId,
        now_ms: u64,
    ) -> Result<()> {
        self.set_columns::<T>(id, "item_id = ?", &[&item_id.as_bytes()], now_ms)
    }

    /// Local rows waiting to be published (shareable, or a note with an
    /// audience), oldest first, at most `limit` (`None` = default).
    pub fn to_publish<T: Publishable>(&self, limit: Option<u32>) -> Result<Vec<Stored<T>>> {
        let mut f = Filter::default();
        f.and(T::TO_PUBLISH, []);
        self.select::<T>(&f, "created, id", resolve_limit(limit)?, 0)
    }

    /// Adds a row received from a friend's item, stamped with the author's
    /// `created_ms`. The row must carry `origin_author` and `origin_item_id`;
    /// merging the same item again returns [`Merged::Existing`].
    pub fn merge_from_item<T: Publishable>(&self, row: &T, created_ms: u64) -> Result<Merged> {
        self.transaction(|s| {
            let mut insert = s.conn.prepare_cached(&insert_sql::<T>(MERGE_CONFLICT))?;
            s.merge_one(&mut insert, row, created_ms)
        })
    }

    /// Merges many friends' rows of one table in one transaction: what
    /// [`Store::merge_from_item`] does for each `(row, created_ms)`, without
    /// a savepoint per row (one INSERT is atomic by itself) and with the
    /// INSERT prepared once. A row refused on its own (invalid, too long, a
    /// constraint) gets its error in the answer, in input order, and costs
    /// no other row; a failure of the file itself (I/O, lock, corruption)
    /// rolls the whole batch back and is returned.
    pub fn merge_from_items<T: Publishable>(
        &self,
        rows: &[(T, u64)],
    ) -> Result<Vec<Result<Merged>>> {
        self.transaction(|s| {
            let mut insert = s.conn.prepare_cached(&insert_sql::<T>(MERGE_CONFLICT))?;
            let mut out = Vec::with_capacity(rows.len());
            for (row, created_ms) in rows {
                match s.merge_one(&mut insert, row, *created_ms) {
                    Err(e) if !e.is_row_refusal() => return Err(e),
                    other => out.push(other),
                }
            }
            Ok(out)
        })
    }

    /// One merge with `insert` (from `insert_sql::<T>(MERGE_CONFLICT)`), no
    /// transaction of its own: the caller holds one.
    fn merge_one<T: Publishable>(
        &self,
        insert: &mut rusqlite::Statement<'_>,
        row: &T,
        created_ms: u64,
    ) -> Result<Merged> {
        let (Some(origin), Some(_)) = (row.origin_item_id(), row.origin_author()) else {
            return Err(StorageError::invalid(
                format!("{} row", T::TABLE),
                "a merged row needs origin_author and origin_item_id",
            ));
        };
        match self.insert_prepared(insert, row, created_ms)? {
            Some(id) => Ok(Merged::Added(id)),
            None => {
                let sql = format!("SELECT id FROM {} WHERE origin_item_id = ?", T::TABLE);
                self.conn
                    .prepare_cached(&sql)?
                    .query_row([origin.as_bytes()], |r| r.get(0))
                    .optional()?
                    .map(Merged::Existing)
                    .ok_or_else(|| StorageError::NotFound {
                        table: T::TABLE,
                        key: "origin item".into(),
                    })
            }
        }
    }

    /// The row published as, or merged from, this item.
    pub fn find_by_item<T: Publishable>(&self, item_id: &ItemId) -> Result<Option<Stored<T>>> {
        let mut f = Filter::default();
        let id = Value::Blob(item_id.as_bytes().to_vec());
        f.and("(item_id = ? OR origin_item_id = ?)", [id.clone(), id]);
        Ok(self.select::<T>(&f, "id", 1, 0)?.pop())
    }

    /// Deletes the row merged from this item (its author retracted it);
    /// returns whether there was one.
    pub fn delete_merged<T: Publishable>(&self, origin_item_id: &ItemId) -> Result<bool> {
        let sql = format!("DELETE FROM {} WHERE origin_item_id = ?", T::TABLE);
        let n = self
            .conn
            .prepare_cached(&sql)?
            .execute([origin_item_id.as_bytes()])
            .map_err(|e| StorageError::from_write(T::TABLE, e))?;
        Ok(n > 0)
    }
}

/// Implements [`Publishable`] for a row struct with `origin_author` and
/// `origin_item_id` fields.
macro_rules! publishable {
    ($name:ident, $to_publish:literal) => {
        impl $crate::published::Publishable for $name {
            const TO_PUBLISH: &'static str = $to_publish;
            fn origin_item_id(&self) -> Option<&porfiry_protocol::ItemId> {
                self.origin_item_id.as_ref()
            }
            fn origin_author(&self) -> Option<&str> {
                self.origin_author.as_deref()
            }
        }
    };
}

pub(crate) use publishable;

//! A person's devices on disk: every device link and unlink statement held
//! (`device_links`, written by [`Store::insert_items`] in the same
//! transaction as its `device_link` item, like club changes), from which
//! [`Store::device_book`] rebuilds the [`DeviceBook`] the replication
//! engine routes `devices` items by.

use porfiry_protocol::devices::{DeviceBook, DeviceStatement};
use porfiry_protocol::{Body, ItemId, VerifiedItem};
use rusqlite::{OptionalExtension, params};

use crate::error::{Result, StorageError};
use crate::items::StoredItem;
use crate::query::int_param;
use crate::store::Store;

/// One statement held, with the item that carried it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceStatementRow {
    /// The `device_link` item.
    pub item_id: ItemId,
    /// Its author's peer id.
    pub author: String,
    /// What it says.
    pub statement: DeviceStatement,
}

/// The statement a stored `device_link` item carries (its signature was
/// verified when it came; the book verifies the statement's own two).
fn decode(stored: &StoredItem) -> Result<DeviceStatement> {
    let id = stored.record.id;
    let bad = |reason: String| StorageError::invalid(format!("device link {id}"), reason);
    let payload = VerifiedItem::stored_payload(&stored.payload).map_err(|e| bad(e.to_string()))?;
    match payload.body {
        Body::DeviceLink(s) => Ok(s),
        _ => Err(bad("not a device_link body".into())),
    }
}

impl Store {
    /// Records the `device_link` item `stored` (just inserted). Called by
    /// `insert_items`.
    pub(crate) fn record_device_statement(&self, stored: &StoredItem) -> Result<()> {
        let statement = decode(stored)?;
        let (action, a, b, at) = match &statement {
            DeviceStatement::Link(l) => ("link", &l.a, &l.b, l.since_ms),
            DeviceStatement::Unlink(u) => ("unlink", &u.by, &u.other, u.at_ms),
        };
        self.conn
            .prepare_cached(
                "INSERT INTO device_links (item_id, action, a, b, at_ms, author)
                 VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (item_id) DO NOTHING",
            )?
            .execute(params![
                stored.record.id.as_bytes(),
                action,
                a,
                b,
                int_param("at_ms", at)?,
                stored.record.author
            ])?;
        Ok(())
    }

    /// Every statement held, oldest first.
    pub fn device_statements(&self) -> Result<Vec<DeviceStatementRow>> {
        let ids: Vec<Vec<u8>> = self
            .conn
            .prepare_cached("SELECT item_id FROM device_links ORDER BY at_ms, item_id")?
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            let id = ItemId(id.try_into().map_err(|_| StorageError::BadColumn {
                table: "device_links",
                column: "item_id".into(),
                reason: "not 32 bytes".into(),
            })?);
            // Withdrawn items take their row with them only through the
            // item; a statement without its item is skipped.
            let Some(stored) = self.get_item(&id)? else {
                continue;
            };
            out.push(DeviceStatementRow {
                item_id: id,
                author: stored.record.author.clone(),
                statement: decode(&stored)?,
            });
        }
        Ok(out)
    }

    /// The device book of the node `local`, rebuilt from every statement
    /// held. A statement about devices the book does not know yet (a link
    /// of two other devices that came before the link making one of them
    /// ours) is tried again after the others, until nothing more is taken;
    /// one the book refuses (not about us, a bound reached) is left out.
    pub fn device_book(&self, local: &str) -> Result<DeviceBook> {
        let mut book = DeviceBook::new(local);
        let mut left: Vec<DeviceStatement> = self
            .device_statements()?
            .into_iter()
            .map(|r| r.statement)
            .collect();
        loop {
            let before = left.len();
            left.retain(|s| book.insert(s).is_err());
            if left.len() == before || left.is_empty() {
                break;
            }
        }
        Ok(book)
    }

    /// How many memory versions `author` (this node) wrote after `since_ms`
    /// (Unix ms; `None`: ever): what a device last seen then has yet to get.
    pub fn mind_versions_since(&self, author: &str, since_ms: Option<u64>) -> Result<u64> {
        let since = int_param("since_ms", since_ms.unwrap_or(0))?;
        Ok(self
            .conn
            .prepare_cached(
                "SELECT COUNT(*) FROM items WHERE kind = 'mind_record' AND author = ? AND created > ?",
            )?
            .query_row(params![author, since], |r| r.get(0))?)
    }

    /// Which other device wrote what row `local_id` of `table` shows now:
    /// the author of its record's winning version, for each of `local_ids`
    /// whose winner is not by `me` (a row written here, published or not,
    /// is left out).
    pub fn mind_writers(
        &self,
        table: porfiry_protocol::mind::MindTable,
        local_ids: &[i64],
        me: &str,
    ) -> Result<std::collections::BTreeMap<i64, String>> {
        let mut out = std::collections::BTreeMap::new();
        let mut stmt = self.conn.prepare_cached(
            "SELECT i.author FROM mind_records r JOIN items i ON i.id = r.winner
             WHERE r.tbl = ? AND r.local_id = ?",
        )?;
        for id in local_ids {
            let author: Option<String> = stmt
                .query_row(params![table.as_str(), id], |r| r.get(0))
                .optional()?;
            if let Some(author) = author.filter(|a| a != me) {
                out.insert(*id, author);
            }
        }
        Ok(out)
    }
}

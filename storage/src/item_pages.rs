//! Loading the envelopes of one page of items, for a catch-up session that
//! sends its items chunk by chunk: one query per page, and never more than
//! [`MAX_PAGE_IDS`] payloads in memory for it, however large the session.

use std::collections::HashMap;

use porfiry_protocol::ItemId;

use crate::error::{Result, StorageError};
use crate::store::Store;

/// Most ids one [`Store::item_page`] call takes: 1,024 payloads of at most
/// 64 KiB are 64 MiB, the most one page may hold in memory; a session's
/// chunk (64 ids) is far below it, and SQLite's default limit on bound
/// parameters (32,766) is further still.
pub const MAX_PAGE_IDS: usize = 1_024;

impl Store {
    /// The stored envelope (`payload`) of each id of one page, in the order
    /// asked; `None` where the item is not (or no longer) stored. Refuses a
    /// page of more than [`MAX_PAGE_IDS`] ids (a caller's bug: pages are
    /// what keeps a big catch-up from loading everything at once).
    pub fn item_page(&self, ids: &[ItemId]) -> Result<Vec<Option<Vec<u8>>>> {
        if ids.len() > MAX_PAGE_IDS {
            return Err(StorageError::invalid(
                "item page",
                format!("{} ids, at most {MAX_PAGE_IDS}", ids.len()),
            ));
        }
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let marks = vec!["?"; ids.len()].join(",");
        let sql = format!("SELECT id, payload FROM items WHERE id IN ({marks})");
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let rows = stmt
            .query_map(
                rusqlite::params_from_iter(ids.iter().map(|id| id.as_bytes().as_slice())),
                |r| Ok((r.get::<_, Vec<u8>>(0)?, r.get::<_, Vec<u8>>(1)?)),
            )
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
            .map_err(|e| StorageError::from_read("items", &["id", "payload"], e))?;
        let found: HashMap<Vec<u8>, Vec<u8>> = rows.into_iter().collect();
        Ok(ids
            .iter()
            .map(|id| found.get(id.as_bytes().as_slice()).cloned())
            .collect())
    }
}

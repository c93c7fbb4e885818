//! Item operations on the replication hot path that avoid whole-record
//! round trips: changing one copy's route in place and finding this node's own items
//! another process stored.

use porfiry_protocol::ItemId;
use rusqlite::params;

use crate::error::{Result, StorageError};
use crate::peers::check_peer_id;
use crate::query::int_param;
use crate::store::Store;

impl Store {
    /// Records that item `id` is now held via friend `received_from` with
    /// `hops_left` more hops (capped at the item's `max_hops`), in place.
    /// Returns whether the item was stored; an unknown id changes nothing.
    pub fn update_item_route(
        &self,
        id: &ItemId,
        received_from: &str,
        hops_left: u8,
    ) -> Result<bool> {
        check_peer_id(received_from).map_err(|e| {
            StorageError::invalid(format!("route of item {id}"), format!("received_from: {e}"))
        })?;
        let n = self
            .conn
            .prepare_cached(
                "UPDATE items SET received_from = ?1, hops_left = min(?2, max_hops) WHERE id = ?3",
            )?
            .execute(params![received_from, hops_left, id.as_bytes()])
            .map_err(|e| StorageError::from_write("items", e))?;
        Ok(n > 0)
    }

    /// Ids of every item `author` created at or after `since_ms` that
    /// holds no route (`received_from` is empty: written by this node, not
    /// received), oldest first, in one query. Ids only: a caller that
    /// already holds most of them (the running node, polling for items
    /// another process signed) reads the envelopes of the rest with
    /// [`Store::item_page`].
    pub fn own_item_ids_since(&self, author: &str, since_ms: u64) -> Result<Vec<ItemId>> {
        let since = int_param("since_ms", since_ms)?;
        let mut stmt = self.conn.prepare_cached(
            "SELECT id FROM items
             WHERE created >= ?1 AND author = ?2 AND received_from IS NULL
             ORDER BY created, id",
        )?;
        let rows = stmt.query_map(params![since, author], |r| Ok(ItemId(r.get(0)?)))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| StorageError::from_read("items", &["id"], e))
    }
}

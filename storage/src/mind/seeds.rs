//! The rows every node seeds for itself (the seed's stagnation strategies
//! and thinking methods, written by `porfiry init` and at each start) are
//! one record on all of a person's devices, not one per device: each
//! device gives its seeded row the record key every device derives for
//! that seed ([`Store::mind_adopt_seed`]), and nothing of it is published
//! until the person changes it. An edit or a deletion of a seeded row then
//! travels under that key and reaches the other devices' own copies,
//! instead of adding a second copy beside them.

use porfiry_protocol::mind::MindTable;
use rusqlite::params;

use super::rows::RecordKey;
use crate::error::Result;
use crate::store::Store;

/// `mind_records.origin` of an adopted seed: every device wrote its own
/// copy, so no one device created the record.
pub const SEED_ORIGIN: &str = "seed";

impl Store {
    /// Makes row `local_id` of `table` record `key`, derived alike on every
    /// device for the same seed, and drops the row's waiting write if it
    /// was never published (the other devices seeded theirs). Does nothing
    /// and returns `false` when the row already is a record (it was
    /// published, or adopted before) or another row already is record
    /// `key` (a device's edit of this seed arrived before this node seeded
    /// it).
    pub fn mind_adopt_seed(
        &self,
        table: MindTable,
        local_id: i64,
        key: &RecordKey,
    ) -> Result<bool> {
        if self.mind_key_of(table, local_id)?.is_some() || self.mind_row_of(key)?.is_some() {
            return Ok(false);
        }
        self.transaction(|s| {
            s.conn
                .prepare_cached(
                    "INSERT INTO mind_records (key, tbl, local_id, winner, origin) VALUES (?, ?, ?, NULL, ?)",
                )?
                .execute(params![key.as_slice(), table.as_str(), local_id, SEED_ORIGIN])?;
            s.conn
                .prepare_cached(
                    "DELETE FROM mind_outbox WHERE tbl = ? AND local_id = ? AND key IS NULL AND seen = 0",
                )?
                .execute(params![table.as_str(), local_id])?;
            Ok(true)
        })
    }
}

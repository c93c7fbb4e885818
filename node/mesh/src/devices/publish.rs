//! This device's memory changes as signed versions for its other devices,
//! and the conflicts that arrived as tasks for its core. Both run in one
//! database transaction per batch: a change leaves the outbox only with
//! its signed version stored, so a crash publishes it again rather than
//! losing it. Nothing is published while the node has no device: the
//! outbox keeps every changed row (one entry per row, so it is bounded by
//! the tables) until the first link, which then publishes the whole memory.

use porfiry_protocol::mind::MindRecord;
use porfiry_protocol::{Body, NodeKey, VerifiedItem};
use porfiry_skills::Language;
use porfiry_storage::{StorageError, Store};

use super::statements::{DevicesError, devices_item};
use super::texts::conflict_task;
use crate::sharing::item_rows::stored_record;

/// Changes signed per transaction: one `insert_items` batch. Signing and
/// storing 256 versions takes tens of milliseconds, short enough not to
/// hold the database from the core or the API for long; a 50,000-entry
/// diary is published in 200 of them.
pub const MIND_PUBLISH_BATCH: usize = 256;

/// Conflicts turned into tasks per call: each is one small write; a
/// partition that made more is drained over the next calls.
pub const CONFLICTS_PER_CALL: usize = 64;

/// What [`publish_mind`] did.
#[derive(Debug, Clone, Default)]
pub struct MindPublished {
    /// Versions signed and stored, for the engine to send.
    pub versions: Vec<VerifiedItem>,
    /// Conflict tasks made.
    pub conflicts: usize,
}

/// Publishes up to [`MIND_PUBLISH_BATCH`] changes and makes up to
/// [`CONFLICTS_PER_CALL`] conflict tasks, as the node `key` at `now_ms`,
/// in the node's language. Call it only while the node has a device (the
/// replication loop asks its engine's device book, so a node without one
/// does no work per scan and keeps its outbox for its first link).
pub fn publish_mind(
    store: &Store,
    key: &NodeKey,
    now_ms: u64,
) -> Result<MindPublished, DevicesError> {
    let me = key.peer_id().to_string();
    let versions = store.transaction(|s| {
        let mut items = Vec::new();
        for entry in s.mind_outbox(MIND_PUBLISH_BATCH)? {
            let Some(change) = s.take_mind_change(entry, &me)? else {
                continue;
            };
            let record = MindRecord {
                table: change.table,
                key: change.key,
                vv: s.next_mind_vv(&change.key, &me, change.seen)?,
                at_ms: now_ms,
                deleted: change.fields.is_none(),
                fields: change.fields.unwrap_or_default(),
            };
            let item = devices_item(key, Body::MindRecord(record), now_ms).map_err(|e| {
                StorageError::Invalid {
                    what: "mind record".into(),
                    reason: e.to_string(),
                }
            })?;
            // Stored at once, in this transaction: the outbox entry it
            // replaces is gone only together with it.
            s.insert_items(&[stored_record(&item, item.max_hops(), None)])?;
            items.push(item);
        }
        Ok(items)
    })?;
    let mut conflicts = 0;
    let open = store.open_mind_conflicts(CONFLICTS_PER_CALL)?;
    let language = if open.is_empty() {
        Language::En
    } else {
        crate::language::node_language(store)?
    };
    for c in open {
        let (title, description) = conflict_task(language, &c);
        store.make_conflict_task(&c.key, &title, &description, &me, now_ms)?;
        conflicts += 1;
    }
    Ok(MindPublished {
        versions,
        conflicts,
    })
}

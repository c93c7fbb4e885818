//! Process rows left running by an earlier run of the node: their process
//! died with it, so nothing will ever finish them. At start the core marks
//! them `offline` (seed §1 status) with a result saying why, so the model
//! sees them once and does not wait for ever.

use porfiry_storage::{ProcessEntry, ProcessStatus, Result, Store};

/// The result written into an orphaned row.
pub const ORPHAN_RESULT: &str = "the node stopped while this ran; no result";

/// Marks every running row (`warning` without a result) `offline`;
/// returns how many.
pub fn mark_orphans_offline(store: &Store, now_ms: u64) -> Result<usize> {
    let mut marked = 0;
    for p in store.processes_open()? {
        if p.row.status == ProcessStatus::Warning && p.row.result.is_none() {
            let row = ProcessEntry {
                status: ProcessStatus::Offline,
                result: Some(ORPHAN_RESULT.into()),
                ..p.row
            };
            store.update(p.id, &row, now_ms)?;
            marked += 1;
        }
    }
    Ok(marked)
}

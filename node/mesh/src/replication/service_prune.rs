//! The replication loop prunes the memory shared with this person's
//! devices (`Store::prune_mind`) on its own timer, by the node's clock, as
//! [`crate::devices::prune::PruneSchedule`] says: nothing while the node
//! has no device (as publishing does nothing then), a pass a day
//! otherwise, a few batches per turn of the loop.
//!
//! The engine forgets each batch's items as soon as it is committed
//! (`Engine::forget`), so no catch-up lists them from then on (a session
//! already under way skips them at `SendChunk`, as it skips any item gone
//! meanwhile). One a device not pruned yet offers back is refused by
//! storage (`Store::insert_items_reporting` names it), and the loop makes
//! the engine, which took it, forget it again once the write is committed.

use super::Node;
use crate::devices::prune::{MIND_PRUNE_BATCHES_PER_TURN, MIND_PRUNED_AT_KEY};
use crate::replication::error::ReplicationError;

impl Node {
    /// When the next pruning batch is due, if any.
    pub(super) fn mind_prune_due(&self) -> Option<u64> {
        self.mind_prune
            .due_ms(self.engine.devices().device_count() > 0)
    }

    /// Runs up to [`MIND_PRUNE_BATCHES_PER_TURN`] pruning batches at the
    /// node's time now and logs a finished pass. A failure is logged and
    /// the pass tried again the next day.
    pub(super) async fn prune_mind(&mut self) -> Result<(), ReplicationError> {
        let now = self.now();
        for _ in 0..MIND_PRUNE_BATCHES_PER_TURN {
            let after = self.mind_prune.after();
            let batch = self
                .db
                .write(move |s| s.prune_mind(now, after.as_ref()))
                .await?;
            let batch = match batch {
                Ok(b) => b,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot prune the memory shared with this person's devices");
                    self.mind_prune.failed(now);
                    return Ok(());
                }
            };
            self.engine.forget(&batch.item_ids);
            let Some(pass) = self.mind_prune.done(now, &batch) else {
                continue;
            };
            let saved = self
                .db
                .write(move |s| s.config_set(MIND_PRUNED_AT_KEY, &now, now))
                .await?;
            if let Err(e) = saved {
                // The next start prunes again; nothing is lost.
                tracing::warn!(error = %e, "cannot note when the memory was pruned");
            }
            if pass.versions > 0 {
                tracing::info!(
                    records = pass.records,
                    versions = pass.versions,
                    items = pass.items,
                    deletions = pass.deletions,
                    "memory pruned: deletions and superseded versions past their time to live"
                );
            } else {
                tracing::debug!(records = pass.records, "memory pruning: nothing to forget");
            }
            return Ok(());
        }
        Ok(())
    }
}

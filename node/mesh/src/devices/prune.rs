//! When the replication loop prunes the memory it shares with the person's
//! devices (`Store::prune_mind`: a deletion and the versions it beat after
//! the time to live, superseded versions likewise): a pass over every
//! record once a day, a few batches per turn of the loop, by the node's
//! clock. Pure: the loop asks [`PruneSchedule::due_ms`] for its timer and
//! tells [`PruneSchedule::done`] what each batch did.

use porfiry_storage::mind::{MindPruned, RecordKey};

/// How often a pass starts: deletions live for 90 days
/// (`TOMBSTONE_TTL_MS`), so a day late costs about 1% more time on disk,
/// while a pass a day over a 50,000-record memory is a few hundred short
/// transactions. The last pass's time is kept ([`MIND_PRUNED_AT_KEY`]), so
/// a phone whose app is started many times a day passes once a day, and
/// one that never runs a whole day still prunes at its next start.
pub const MIND_PRUNE_EVERY_MS: u64 = 24 * 60 * 60 * 1000;

/// The node setting (`config` table) holding when the last pass ended
/// (Unix ms, the node's clock).
pub const MIND_PRUNED_AT_KEY: &str = "mind.pruned_at_ms";

/// Batches (`MIND_PRUNE_BATCH` records each) one turn of the loop prunes
/// before it answers friends again: 512 records, about 8 ms of a release
/// build on a day with nothing to forget and 115 ms on one that forgets
/// two versions of each (`mind_prune_measure`, docs/benchmarks.md); the
/// next turn goes on at once.
pub const MIND_PRUNE_BATCHES_PER_TURN: usize = 8;

/// Where the pruning pass stands.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PruneSchedule {
    /// When the next batch is due (Unix ms, the node's clock).
    due_ms: u64,
    /// Where the pass goes on; `None` at its start.
    after: Option<RecordKey>,
    /// What the pass did so far.
    pass: MindPruned,
}

impl PruneSchedule {
    /// The schedule at the node's start (`now_ms`): the next pass a day
    /// after the last one ended (`last_pass_ms`, from
    /// [`MIND_PRUNED_AT_KEY`]), at once when there was none or it was a
    /// day ago. A last pass in the future (a clock set back) counts as
    /// ending now, so the wait is never longer than a day.
    pub fn new(now_ms: u64, last_pass_ms: Option<u64>) -> PruneSchedule {
        let due_ms = last_pass_ms.map_or(now_ms, |last| {
            last.min(now_ms).saturating_add(MIND_PRUNE_EVERY_MS)
        });
        PruneSchedule {
            due_ms,
            ..PruneSchedule::default()
        }
    }

    /// When the next batch is due; `None` while the node has no device
    /// (nothing of the memory is shared then, so nothing is pruned).
    pub fn due_ms(&self, has_devices: bool) -> Option<u64> {
        has_devices.then_some(self.due_ms)
    }

    /// Where the next batch starts (`Store::prune_mind`'s `after`).
    pub fn after(&self) -> Option<RecordKey> {
        self.after
    }

    /// Takes what the batch run at `now_ms` did. Returns the whole pass
    /// when it is over (the next due [`MIND_PRUNE_EVERY_MS`] later);
    /// otherwise the next batch is due at once.
    pub fn done(&mut self, now_ms: u64, batch: &MindPruned) -> Option<MindPruned> {
        self.pass.add(batch);
        match batch.next {
            Some(next) => {
                self.after = Some(next);
                self.due_ms = now_ms;
                None
            }
            None => Some(self.restart(now_ms)),
        }
    }

    /// A batch failed at `now_ms`: the pass is dropped and the next starts
    /// [`MIND_PRUNE_EVERY_MS`] later (a failed write is logged; pruning
    /// a day late loses nothing).
    pub fn failed(&mut self, now_ms: u64) {
        self.restart(now_ms);
    }

    fn restart(&mut self, now_ms: u64) -> MindPruned {
        self.after = None;
        self.due_ms = now_ms.saturating_add(MIND_PRUNE_EVERY_MS);
        std::mem::take(&mut self.pass)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(versions: usize, next: Option<u8>) -> MindPruned {
        MindPruned {
            records: 64,
            versions,
            items: versions,
            deletions: 0,
            item_ids: Vec::new(),
            next: next.map(|n| [n; 16]),
        }
    }

    #[test]
    fn nothing_is_due_without_a_device() {
        let s = PruneSchedule::new(1_000, None);
        assert_eq!(s.due_ms(false), None);
        assert_eq!(s.due_ms(true), Some(1_000));
        assert_eq!(s.after(), None);
    }

    #[test]
    fn a_pass_goes_on_at_once_from_where_it_stopped_then_waits_a_day() {
        let mut s = PruneSchedule::new(1_000, None);
        assert_eq!(s.done(1_000, &batch(3, Some(7))), None);
        assert_eq!(s.after(), Some([7; 16]));
        assert_eq!(s.due_ms(true), Some(1_000));
        assert_eq!(s.done(1_005, &batch(2, Some(9))), None);
        assert_eq!(s.after(), Some([9; 16]));
        let pass = s.done(1_010, &batch(4, None)).unwrap();
        assert_eq!((pass.records, pass.versions, pass.items), (192, 9, 9));
        assert_eq!(
            s.after(),
            None,
            "the next pass starts from the first record"
        );
        assert_eq!(s.due_ms(true), Some(1_010 + MIND_PRUNE_EVERY_MS));
        // The next pass counts afresh.
        let again = s
            .done(1_010 + MIND_PRUNE_EVERY_MS, &batch(1, None))
            .unwrap();
        assert_eq!(again.versions, 1);
    }

    #[test]
    fn a_start_after_a_recent_pass_waits_for_the_rest_of_the_day() {
        let day = MIND_PRUNE_EVERY_MS;
        // The last pass ended an hour before this start: due 23 hours on.
        let s = PruneSchedule::new(10 * day, Some(10 * day - 3_600_000));
        assert_eq!(s.due_ms(true), Some(11 * day - 3_600_000));
        // Two days ago: due at once (a time in the past).
        let s = PruneSchedule::new(10 * day, Some(8 * day));
        assert!(s.due_ms(true).is_some_and(|due| due <= 10 * day));
        // A clock set back: no longer than a day from now.
        let s = PruneSchedule::new(10 * day, Some(20 * day));
        assert_eq!(s.due_ms(true), Some(11 * day));
    }

    #[test]
    fn a_failed_batch_drops_the_pass_until_the_next_day() {
        let mut s = PruneSchedule::new(1_000, None);
        s.done(1_000, &batch(3, Some(7)));
        s.failed(2_000);
        assert_eq!(s.after(), None);
        assert_eq!(s.due_ms(true), Some(2_000 + MIND_PRUNE_EVERY_MS));
        assert_eq!(s.done(3_000, &batch(0, None)).unwrap().versions, 0);
    }
}

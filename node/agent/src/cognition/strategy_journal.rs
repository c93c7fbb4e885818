//! The anti-stagnation reflex's strategies, journaled while they apply
//! (issue 46 §3): the reflex acts after its tick is recorded, and a
//! strategy's mechanism writes (a note to friends, a fetch, pinned tasks,
//! notes marked read, the notes mode). Before the first applies, the
//! journal ([`crate::cognition::journal`], part
//! [`JournalPart::Stagnation`]) holds every chosen strategy; each outcome is
//! written as it ends, and the reflex's `stagnation_strategy` rows are
//! written in the transaction that removes the journal, by the same code
//! that records them from a journal left at start.

use porfiry_skills::{Clock, Language};
use porfiry_storage::Store;
use porfiry_storage::db::Db;

use crate::cognition::error::CoreError;
use crate::cognition::journal::{
    JournalCommand, JournalOutcome, JournalPart, TickJournal, add_rows, clear, save,
};
use crate::cognition::limits::MAX_STORED_RESULT_CHARS;
use crate::cognition::load::clip;

/// The anti-stagnation reflex's strategies, journaled while they apply
/// ([`JournalPart::Stagnation`]): strategies are applied one after another,
/// so the first entry without an outcome is the one applying.
pub(crate) struct StrategyJournal {
    journal: TickJournal,
}

impl StrategyJournal {
    /// Writes the journal of tick `tick`'s reflex about to apply
    /// `strategies` (each its `stagnation_strategy` row's command), before
    /// the first applies.
    pub async fn begin(
        db: &Db,
        clock: &dyn Clock,
        tick: u64,
        model: &str,
        strategies: &[serde_json::Value],
    ) -> Result<Self, CoreError> {
        let now = clock.now().unix_ms();
        let mut journal = TickJournal {
            tick,
            part: JournalPart::Stagnation,
            started_ms: now,
            updated_ms: now,
            model: model.to_owned(),
            mode: String::new(),
            reply: String::new(),
            prompt_tokens: 0,
            model_calls: 0,
            shown_processes: Vec::new(),
            commands: strategies.iter().map(JournalCommand::strategy).collect(),
        };
        save(db, clock, &mut journal).await?;
        Ok(Self { journal })
    }

    /// The strategy applying did: `result` (its row's result).
    pub async fn applied(
        &mut self,
        db: &Db,
        clock: &dyn Clock,
        result: &str,
    ) -> Result<(), CoreError> {
        if let Some(entry) = self.applying() {
            entry.outcome = Some(JournalOutcome {
                ok: true,
                output: clip(result, MAX_STORED_RESULT_CHARS),
            });
        }
        save(db, clock, &mut self.journal).await
    }

    /// The strategy applying could not act now: it leaves no row.
    pub async fn passed_over(&mut self, db: &Db, clock: &dyn Clock) -> Result<(), CoreError> {
        let applying = self
            .journal
            .commands
            .iter()
            .position(|c| c.outcome.is_none());
        if let Some(i) = applying {
            self.journal.commands.remove(i);
        }
        save(db, clock, &mut self.journal).await
    }

    /// Writes the applied strategies' rows and removes the journal, in one
    /// transaction.
    pub async fn record(self, db: &Db, language: Language, now_ms: u64) -> Result<(), CoreError> {
        let journal = self.journal;
        db.write(move |s: &Store| {
            s.transaction(|s| {
                add_rows(s, &journal, language, now_ms)?;
                clear(s)
            })
        })
        .await??;
        Ok(())
    }

    /// The first strategy without an outcome: the one applying.
    fn applying(&mut self) -> Option<&mut JournalCommand> {
        self.journal
            .commands
            .iter_mut()
            .find(|c| c.outcome.is_none())
    }
}

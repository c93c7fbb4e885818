//! The write-ahead journal of a tick's commands (issue 46 §3). A command
//! writes to the store through its own tool before its tick is recorded:
//! a node stopped in between (killed, or its tick cancelled at shutdown)
//! used to leave the command's effect with no `process_log` row and no
//! tick, and the model never saw that command's result.
//!
//! So before a tick runs its commands, it writes in one transaction a
//! [`TickJournal`] under [`TICK_JOURNAL_CONFIG_KEY`]: the tick's number,
//! start, main model, reply and the commands about to run; after each
//! command it writes that command's outcome. [`record_tick`] removes the
//! journal in the tick's own transaction, so a recorded tick never leaves
//! one. A journal found when the core starts is a tick that did not finish:
//! [`recover`] records it under its own number (numbering goes on from it)
//! with one row per command: its result where the journal has it, else a
//! warning saying the node stopped while it ran (its outcome unknown), or,
//! for the commands after that one, before it started.
//!
//! The anti-stagnation reflex acts after its tick is recorded, and its
//! strategies' mechanisms write too (a note to friends, a fetch, pinned
//! tasks, notes marked read, the notes mode): before they apply,
//! `strategy_journal` writes the same journal with
//! [`JournalPart::Stagnation`], one entry per chosen strategy, and each
//! application's outcome as it ends; the reflex's `stagnation_strategy`
//! rows are written in the transaction that removes it. [`recover`] records
//! such a journal's rows the same way (the tick itself is already recorded).
//!
//! [`record_tick`]: crate::cognition::record::record_tick

use porfiry_skills::cognition::commands::Command;
use porfiry_skills::cognition::tick::{RunResult, raw_args};
use porfiry_skills::{Clock, Language};
use porfiry_storage::db::Db;
use porfiry_storage::{ProcessEntry, ProcessStatus, RecentResponse, Result, Store, TickRecord};
use serde::{Deserialize, Serialize};

use crate::cognition::error::CoreError;
use crate::cognition::limits::{KEEP_RECENT_RESPONSES, MAX_STORED_RESULT_CHARS};
use crate::cognition::load::clip;
use crate::cognition::record::command_value;
use crate::cognition::run_commands::CommandRunner;
use crate::cognition::trace::Trace;

pub use crate::cognition::limits::TICK_JOURNAL_CONFIG_KEY;
pub use crate::cognition::texts::{command_interrupted, command_not_started};

/// The `process_log` name of a strategy the anti-stagnation reflex applied.
pub const STRATEGY_ROW: &str = "stagnation_strategy";

/// Which part of a tick a journal's commands belong to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JournalPart {
    /// The tick's own commands, run before the tick is recorded (a journal
    /// written before this field existed is one of these).
    #[default]
    Commands,
    /// The anti-stagnation reflex's strategies, applied after the tick was
    /// recorded: each entry is one strategy, its tool [`STRATEGY_ROW`] and
    /// its arguments the row's `command` JSON; the reply, mode, prompt and
    /// shown processes are empty.
    Stagnation,
}

/// A tick whose commands are running: what recording it needs if the node
/// stops before the tick does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TickJournal {
    /// The tick's number (`agent_log.tick`).
    pub tick: u64,
    /// Whose commands these are: the tick's or its reflex's.
    #[serde(default)]
    pub part: JournalPart,
    /// When it started (Unix ms).
    pub started_ms: u64,
    /// When the journal was last written: the last moment the tick is known
    /// to have been running.
    pub updated_ms: u64,
    /// The main model's registry name.
    pub model: String,
    /// The tick's notes mode (`auto`, `manual`).
    pub mode: String,
    /// The model's reply.
    pub reply: String,
    /// The prompt's estimated size in tokens.
    pub prompt_tokens: u32,
    /// Model calls made before the commands.
    pub model_calls: u32,
    /// Finished process rows the prompt showed (closed when recorded: the
    /// model answered having seen them).
    pub shown_processes: Vec<i64>,
    /// The commands to run, in order, each with its outcome once it ended.
    pub commands: Vec<JournalCommand>,
}

/// One command of a journaled tick.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JournalCommand {
    /// The tool's name.
    pub tool: String,
    /// The arguments as the tool binds them (the raw line, or one JSON object).
    pub args: String,
    /// The model's id for the command.
    #[serde(default)]
    pub cmd_id: Option<String>,
    /// The model's description of the command.
    #[serde(default)]
    pub description: Option<String>,
    /// What it returned, once it ended; `None` while it runs or waits.
    #[serde(default)]
    pub outcome: Option<JournalOutcome>,
}

impl JournalCommand {
    /// `command`, not run yet.
    pub fn of(command: &Command) -> Self {
        Self {
            tool: command.tool.clone(),
            args: raw_args(command),
            cmd_id: command.cmd_id.clone(),
            description: command.description.clone(),
            outcome: None,
        }
    }

    /// A strategy about to be applied, `command` being its row's `command`.
    pub fn strategy(command: &serde_json::Value) -> Self {
        Self {
            tool: STRATEGY_ROW.to_owned(),
            args: command.to_string(),
            cmd_id: None,
            description: None,
            outcome: None,
        }
    }
}

/// A finished command's result, as `process_log` keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JournalOutcome {
    /// The tool's verdict.
    pub ok: bool,
    /// Its reply, clipped to what `process_log.result` keeps.
    pub output: String,
}

/// The tick a journal left at start was recorded as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovered {
    /// Its number.
    pub tick: u64,
    /// Whether the tick's commands or its reflex's strategies were
    /// recorded (the tick itself then was already).
    pub part: JournalPart,
    /// Its commands whose outcome the journal had.
    pub finished: usize,
    /// Its commands in total.
    pub commands: usize,
}

/// Writes `journal` (replacing any other).
pub fn write(store: &Store, journal: &TickJournal, now_ms: u64) -> Result<()> {
    store.config_set(TICK_JOURNAL_CONFIG_KEY, journal, now_ms)
}

/// The journal left by a tick that was not recorded, if any. A value that
/// does not read as a journal is logged and dropped: it cannot be
/// recovered, and it must not keep the core from starting.
pub fn left(store: &Store) -> Result<Option<TickJournal>> {
    let Some(value) = store.config_value(TICK_JOURNAL_CONFIG_KEY)? else {
        return Ok(None);
    };
    match serde_json::from_value(value) {
        Ok(journal) => Ok(Some(journal)),
        Err(e) => {
            tracing::warn!("dropping an unreadable tick journal: {e}");
            clear(store)?;
            Ok(None)
        }
    }
}

/// Removes the journal.
pub fn clear(store: &Store) -> Result<()> {
    store.config_delete(TICK_JOURNAL_CONFIG_KEY)?;
    Ok(())
}

/// Records what a journal was left by, in one transaction, then removes
/// the journal. A tick's commands ([`JournalPart::Commands`]): its reply,
/// one `process_log` row per command, the process rows its prompt showed
/// closed, its `agent_log` row under its own number. A reflex's strategies
/// ([`JournalPart::Stagnation`], its tick already recorded): one
/// `stagnation_strategy` row per strategy. `None` when no journal was left.
/// A journal of a tick already recorded (which
/// [`record_tick`](crate::cognition::record::record_tick) never leaves) is
/// removed without recording anything twice.
pub fn recover(store: &Store, language: Language, now_ms: u64) -> Result<Option<Recovered>> {
    store.transaction(|store| {
        let Some(journal) = left(store)? else {
            return Ok(None);
        };
        let recovered = match journal.part {
            JournalPart::Commands => recover_tick(store, &journal, language, now_ms)?,
            JournalPart::Stagnation => {
                add_rows(store, &journal, language, now_ms)?;
                Some(recovered(&journal))
            }
        };
        clear(store)?;
        Ok(recovered)
    })
}

/// What recording `journal` recovered.
fn recovered(journal: &TickJournal) -> Recovered {
    Recovered {
        tick: journal.tick,
        part: journal.part,
        finished: journal
            .commands
            .iter()
            .filter(|c| c.outcome.is_some())
            .count(),
        commands: journal.commands.len(),
    }
}

/// [`recover`] of a tick's commands: everything but removing the journal.
fn recover_tick(
    store: &Store,
    journal: &TickJournal,
    language: Language,
    now_ms: u64,
) -> Result<Option<Recovered>> {
    let tick = i64::try_from(journal.tick).unwrap_or(i64::MAX);
    if store.last_tick()?.is_some_and(|t| t.row.tick >= tick) {
        tracing::warn!(tick, "dropping the journal of a tick already recorded");
        return Ok(None);
    }
    let response_id = Some(store.add(
        &RecentResponse {
            content: journal.reply.clone(),
            llm_id: Some(journal.model.clone()),
            ..Default::default()
        },
        now_ms,
    )?);
    let executed = add_rows(store, journal, language, now_ms)?;
    for &id in &journal.shown_processes {
        // A row deleted meanwhile is fine to miss.
        let _ = store.process_set_status(id, ProcessStatus::Close, now_ms);
    }
    let done = recovered(journal);
    let (finished, total) = (done.finished, done.commands);
    store.add(
        &TickRecord {
            tick,
            mode: journal.mode.clone(),
            response_id,
            commands_total: u32::try_from(total).unwrap_or(u32::MAX),
            commands_executed: executed,
            duration_ms: journal.updated_ms.saturating_sub(journal.started_ms),
            summary: format!(
                "interrupted: the node stopped during the tick's commands \
                 ({finished} of {total} finished); recorded at restart"
            ),
            llm_id: Some(journal.model.clone()),
            error: None,
            prompt_tokens: journal.prompt_tokens,
            model_calls: journal.model_calls,
        },
        now_ms,
    )?;
    store.responses_keep_latest(KEEP_RECENT_RESPONSES)?;
    Ok(Some(done))
}

/// Adds one `process_log` row per command of `journal`, in order: its
/// result where the journal has it, else a warning that the node stopped
/// while it ran (the first without one: commands run one after another) or
/// before it started (the rest). How many were started.
pub(crate) fn add_rows(
    store: &Store,
    journal: &TickJournal,
    language: Language,
    now_ms: u64,
) -> Result<u32> {
    let mut executed = 0u32;
    let mut stopped = false;
    for command in &journal.commands {
        let (status, result) = match &command.outcome {
            Some(JournalOutcome { ok, output }) => {
                executed += 1;
                let status = if *ok {
                    ProcessStatus::Ok
                } else {
                    ProcessStatus::Error
                };
                (status, output.as_str())
            }
            None if !stopped => {
                stopped = true;
                executed += 1;
                (ProcessStatus::Warning, command_interrupted(language))
            }
            None => (ProcessStatus::Warning, command_not_started(language)),
        };
        store.add(&process_row(journal, command, status, result), now_ms)?;
    }
    Ok(executed)
}

/// The `process_log` row of one journaled command: a tick's command as
/// [`record_tick`](crate::cognition::record::record_tick) writes it, a
/// strategy as the reflex does (its command JSON, no model).
fn process_row(
    journal: &TickJournal,
    command: &JournalCommand,
    status: ProcessStatus,
    result: &str,
) -> ProcessEntry {
    let result = Some(clip(result, MAX_STORED_RESULT_CHARS));
    match journal.part {
        JournalPart::Commands => ProcessEntry {
            name: command.tool.clone(),
            cmd_id: command.cmd_id.clone(),
            command: command_value(&command.tool, &command.args, command.description.as_deref()),
            result,
            status,
            llm_id: Some(journal.model.clone()),
            ..Default::default()
        },
        JournalPart::Stagnation => ProcessEntry {
            name: command.tool.clone(),
            command: serde_json::from_str(&command.args)
                .unwrap_or_else(|_| serde_json::Value::String(command.args.clone())),
            result,
            status,
            ..Default::default()
        },
    }
}

/// What running a journaled tick's commands uses.
pub(crate) struct JournalIo<'a> {
    /// Where the journal is written.
    pub db: &'a Db,
    /// Runs each command.
    pub runner: &'a CommandRunner,
    /// Each command's trace line.
    pub trace: &'a Trace,
    /// The journal's times.
    pub clock: &'a dyn Clock,
}

/// Runs `commands` of `journal`'s tick in order: the journal with every
/// command is written before the first starts, and again with each
/// command's outcome as soon as it ends (before its trace line). One
/// result per command; only a database failure is an `Err`.
pub(crate) async fn run_journaled(
    io: &JournalIo<'_>,
    mut journal: TickJournal,
    commands: &[Command],
) -> std::result::Result<Vec<RunResult>, CoreError> {
    journal.commands = commands.iter().map(JournalCommand::of).collect();
    save(io.db, io.clock, &mut journal).await?;
    let now = io.clock.now();
    let mut results = Vec::with_capacity(commands.len());
    for (i, command) in commands.iter().enumerate() {
        let result = io.runner.run(command, journal.tick, now.clone()).await;
        if let Some(entry) = journal.commands.get_mut(i) {
            entry.outcome = Some(JournalOutcome {
                ok: result.ok,
                output: clip(&result.output, MAX_STORED_RESULT_CHARS),
            });
        }
        save(io.db, io.clock, &mut journal).await?;
        io.trace.command(command, &result);
        results.push(result);
    }
    Ok(results)
}

/// Writes `journal` stamped with the clock's now.
pub(crate) async fn save(
    db: &Db,
    clock: &dyn Clock,
    journal: &mut TickJournal,
) -> std::result::Result<(), CoreError> {
    let now = clock.now().unix_ms();
    journal.updated_ms = now;
    let copy = journal.clone();
    db.write(move |s: &Store| write(s, &copy, now)).await??;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_journal_written_before_parts_existed_is_a_ticks_commands() {
        let old = serde_json::json!({
            "tick": 7, "started_ms": 1, "updated_ms": 2, "model": "main",
            "mode": "auto", "reply": "r", "prompt_tokens": 3, "model_calls": 1,
            "shown_processes": [], "commands": [{"tool": "diary_add", "args": "x"}]
        });
        let journal: TickJournal = serde_json::from_value(old).unwrap();
        assert_eq!(journal.part, JournalPart::Commands);
        assert_eq!(journal.commands[0].outcome, None);
        let reflex = TickJournal {
            part: JournalPart::Stagnation,
            ..journal
        };
        let value = serde_json::to_value(&reflex).unwrap();
        assert_eq!(value["part"], "stagnation");
        assert_eq!(
            serde_json::from_value::<TickJournal>(value).unwrap(),
            reflex
        );
    }
}

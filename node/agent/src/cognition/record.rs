//! Writing one tick's report (seed §5–7) in one transaction: the reply (or
//! the short record of a fired reflex) in `llm_recent_responses`, one
//! `process_log` row per command and per malformed command block, the
//! `agent_log` row, a grown emotion list, the records the model read, and
//! the process rows it has now seen closed; the tick's write-ahead journal
//! ([`crate::cognition::journal`]) is removed in the same transaction.
//!
//! process_log statuses (the seed has no "running"): a command that ran is
//! `ok` or `error` with the tool's reply as its result; a command that was
//! not validated is `warning` with the reason as its result; a process
//! still running is `warning` with no result yet. A finished row is shown
//! to the model once (context 2) and closed after that tick: "processed by
//! the LLM" (seed §1) is having been shown to it.

use porfiry_skills::cognition::reflex::{EMOTIONS_CONFIG_KEY, emotion_entries, reflex_record};
use porfiry_skills::cognition::tick::{CommandOutcome, CommandRecord, TickReport, raw_args};
use porfiry_storage::{
    ProcessEntry, ProcessStatus, RecentResponse, Result, Store, TickRecord, ValidatorVote,
};

use crate::cognition::limits::{
    KEEP_RECENT_RESPONSES, MAX_STORED_RESULT_CHARS, REQUESTED_CONFIG_KEY,
};
use crate::cognition::load::clip;
use crate::cognition::requested::{RecordKind, RecordRef, Requested};
use crate::cognition::texts;

/// The facts of the tick besides its report.
#[derive(Debug, Clone)]
pub struct TickFacts<'a> {
    /// The main model's registry name.
    pub model: &'a str,
    /// `auto`, `manual` or `idle`.
    pub mode: &'a str,
    /// Finished process rows the prompt showed; closed when the model
    /// answered.
    pub shown_processes: &'a [i64],
    /// The language of the reflex record.
    pub language: porfiry_skills::Language,
    /// When the tick ended (Unix ms).
    pub now_ms: u64,
}

/// What recording wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// The `agent_log` row.
    pub tick_row: i64,
    /// The `llm_recent_responses` row, when one was written.
    pub response_id: Option<i64>,
}

/// Records `report` in one transaction.
pub fn record_tick(store: &Store, report: &TickReport, facts: &TickFacts<'_>) -> Result<Recorded> {
    store.transaction(|store| {
        let now = facts.now_ms;
        let response_id = match &report.reply {
            None => None,
            Some(reply) => Some(store.add(&response_row(report, reply, facts), now)?),
        };
        let mut requested: Requested = store.config_get(REQUESTED_CONFIG_KEY)?.unwrap_or_default();
        let requested_before = requested.clone();
        for record in &report.commands {
            if let Some(entry) = process_row(record, facts.model) {
                store.add(&entry, now)?;
            }
            if let (CommandOutcome::Ran { ok: true, output }, Some(kind)) = (
                &record.outcome,
                RecordKind::of_read_tool(&record.command.tool),
            ) && let Some(id) = shown_id(output).or_else(|| record_id(record))
            {
                requested.add(RecordRef { kind, id });
            }
        }
        if requested != requested_before {
            store.config_set(REQUESTED_CONFIG_KEY, &requested, now)?;
        }
        for problem in &report.problems {
            store.add(
                &ProcessEntry {
                    name: "command_block".into(),
                    command: serde_json::json!({ "snippet": problem.snippet }),
                    result: Some(problem.what.clone()),
                    status: ProcessStatus::Error,
                    llm_id: Some(facts.model.to_owned()),
                    ..Default::default()
                },
                now,
            )?;
        }
        if let Some(list) = report.reflex.as_ref().and_then(|r| r.emotion_list.as_ref()) {
            store.config_set(EMOTIONS_CONFIG_KEY, list, now)?;
        }
        if report.reply.is_some() {
            for &id in facts.shown_processes {
                // A row the model deleted meanwhile is fine to miss.
                let _ = store.process_set_status(id, ProcessStatus::Close, now);
            }
        }
        let tick_row = store.add(
            &TickRecord {
                tick: i64::try_from(report.tick).unwrap_or(i64::MAX),
                mode: facts.mode.to_owned(),
                response_id,
                commands_total: u32::try_from(report.commands.len()).unwrap_or(u32::MAX),
                commands_executed: u32::try_from(report.executed()).unwrap_or(u32::MAX),
                duration_ms: report.duration_ms,
                summary: summary(report),
                llm_id: Some(facts.model.to_owned()),
                error: report.error.clone(),
                prompt_tokens: u32::try_from(report.prompt_tokens).unwrap_or(u32::MAX),
                model_calls: report.model_calls,
            },
            now,
        )?;
        store.responses_keep_latest(KEEP_RECENT_RESPONSES)?;
        // The tick is recorded: its write-ahead journal is done with.
        crate::cognition::journal::clear(store)?;
        Ok(Recorded {
            tick_row,
            response_id,
        })
    })
}

/// The `llm_recent_responses` row: the reply with its findings, or the
/// short record of the reflex when the reply repeated the last one.
fn response_row(report: &TickReport, reply: &str, facts: &TickFacts<'_>) -> RecentResponse {
    if report.repeat {
        return RecentResponse {
            content: reflex_record(facts.language).to_owned(),
            reflection: texts::reflex_reflection(facts.language),
            novelty_score: Some(0.0),
            stagnation_reflex: true,
            llm_id: Some(facts.model.to_owned()),
            ..Default::default()
        };
    }
    let mut row = RecentResponse {
        content: reply.to_owned(),
        llm_id: Some(facts.model.to_owned()),
        ..Default::default()
    };
    if let Some(reflex) = &report.reflex {
        row.reflection = reflex.reflection.clone();
        row.novelty_score = reflex.evaluation.novelty;
        row.new_ideas = reflex.evaluation.new_ideas.clone();
        row.refined_ideas = reflex.evaluation.refined_ideas.clone();
        row.discarded_ideas = reflex.evaluation.discarded_ideas.clone();
        row.tags = reflex.evaluation.tags.clone();
        row.emotions = emotion_entries(&reflex.emotions);
    }
    if let Some(v) = &report.validation {
        row.auto_pass = v.auto_pass;
        row.self_validation = v.self_validation;
        row.rating = v.rating;
        row.distribution = v.distribution.clone();
        row.validators = v
            .validators
            .iter()
            .map(|(llm, rating)| ValidatorVote {
                llm: llm.clone(),
                rating: *rating,
                // Self-validation is one vote, the main model's (under its
                // name or another at its endpoint and model).
                self_validation: v.self_validation,
            })
            .collect();
    }
    row
}

/// The `process_log` row of one command; none for a skipped repeat.
fn process_row(record: &CommandRecord, model: &str) -> Option<ProcessEntry> {
    let (status, result) = match &record.outcome {
        CommandOutcome::SkippedRepeat => return None,
        CommandOutcome::Ran { ok: true, output } => (ProcessStatus::Ok, output.clone()),
        CommandOutcome::Ran { ok: false, output } => (ProcessStatus::Error, output.clone()),
        CommandOutcome::NotValidated { rating, needed } => (
            ProcessStatus::Warning,
            format!("not validated: rating {rating:+.2} is below {needed:+.2}; not run"),
        ),
        CommandOutcome::UnknownTool => (
            ProcessStatus::Error,
            format!(
                "unknown command {:?}: `help` lists the command sets",
                record.command.tool
            ),
        ),
    };
    Some(ProcessEntry {
        name: record.command.tool.clone(),
        cmd_id: record.command.cmd_id.clone(),
        command: command_value(
            &record.command.tool,
            &raw_args(&record.command),
            record.command.description.as_deref(),
        ),
        result: Some(clip(&result, MAX_STORED_RESULT_CHARS)),
        status,
        llm_id: Some(model.to_owned()),
        ..Default::default()
    })
}

/// `process_log.command` of a command of the model's: its tool, raw
/// arguments and description.
pub(crate) fn command_value(
    tool: &str,
    args: &str,
    description: Option<&str>,
) -> serde_json::Value {
    serde_json::json!({ "type": tool, "args": args, "description": description })
}

/// The id argument of a read command (`diary_read|12`, `{"id": 12}`).
/// The id a read tool's output starts with (`#12 mesh: …`): the record it
/// read, whether the call named it by id, by name (`concepts_read|mesh`) or
/// in a JSON block (`{"concept": 3}`).
fn shown_id(output: &str) -> Option<i64> {
    let digits: String = output
        .trim_start()
        .strip_prefix('#')?
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

fn record_id(record: &CommandRecord) -> Option<i64> {
    use porfiry_skills::cognition::commands::CommandArgs;
    match &record.command.args {
        CommandArgs::Line(raw) => raw
            .split('|')
            .next()
            .map(|s| s.trim().trim_start_matches("id=").trim_start_matches('#'))
            .and_then(|s| s.parse().ok()),
        CommandArgs::Json(map) => map.get("id").and_then(|v| match v {
            serde_json::Value::Number(n) => n.as_i64(),
            serde_json::Value::String(s) => s.trim().trim_start_matches('#').parse().ok(),
            _ => None,
        }),
    }
}

/// One line on the tick for `agent_log.summary`.
fn summary(report: &TickReport) -> String {
    if let Some(error) = &report.error {
        return format!("model call failed: {}", clip(error, 200));
    }
    if report.repeat {
        return "anti-stagnation reflex: the reply repeated the previous one".into();
    }
    let not_validated = report
        .commands
        .iter()
        .filter(|c| matches!(c.outcome, CommandOutcome::NotValidated { .. }))
        .count();
    format!(
        "{} commands, {} ran, {} not validated, {} malformed blocks, novelty {}",
        report.commands.len(),
        report.executed(),
        not_validated,
        report.problems.len(),
        novelty_text(report)
    )
}

/// The reply's novelty with two decimals, or `unknown` when the evaluation
/// judged none (an unknown novelty is not 0).
fn novelty_text(report: &TickReport) -> String {
    match report.reflex.as_ref().and_then(|r| r.evaluation.novelty) {
        Some(n) => format!("{n:.2}"),
        None => "unknown".to_owned(),
    }
}

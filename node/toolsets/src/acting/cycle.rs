//! The `cycle` set (seed 003 § "Настройки цикла"): the model steers its own
//! thinking cycle — how many recent replies context 1 shows, concentration
//! mode, how incoming notes reach context 4, the pause between ticks and
//! idle mode with its wake conditions — and `cycle_cleanup`, which forgets
//! old replies of `llm_recent_responses`. Each settings command reads [`CycleSettings`]
//! under [`CYCLE_CONFIG_KEY`], changes one part and writes it back in one
//! writer call (so two commands never lose each other's change); a bad value
//! is refused before anything is written, and a stored value that no longer
//! reads is left as it is.

use porfiry_skills::cognition::settings::{MAX_PAUSE_SECS, MAX_RECENT_RESPONSES};
use porfiry_skills::cognition::{
    CYCLE_CONFIG_KEY, Concentration, CycleSettings, IdleSettings, MatchKind, NotesMode,
};
use porfiry_skills::{ArgSpec, Args, CallContext, Language, ToolEffect, ToolOutput, ToolSpec};
use porfiry_storage::{ProcessEntry, StorageError};

use porfiry_skills::cognition::KEEP_RECENT_RESPONSES;

use super::common::{db_failed, write};
use super::cycle_parse::{
    FILTER_KEYS, MAX_FILTER_TAGS, Problem, bounded_list, describe_emotions, describe_filter,
    names_any, parse_emotions, parse_ids, parse_note_filter,
};
use super::texts;
use crate::StoreTools;
use crate::dispatch::{run_toolset, unknown_tool};

/// The set's name and its tools' prefix.
pub const CYCLE: &str = "cycle";
/// `cycle_responses|n`.
pub const CYCLE_RESPONSES: &str = "cycle_responses";
/// `cycle_concentration|state|[tags]|[emotions]|[mode]`.
pub const CYCLE_CONCENTRATION: &str = "cycle_concentration";
/// `cycle_mode|mode|[filter]`.
pub const CYCLE_MODE: &str = "cycle_mode";
/// `cycle_pause|seconds`.
pub const CYCLE_PAUSE: &str = "cycle_pause";
/// `cycle_idle|state|[timeout]|[processes]|[notes]`.
pub const CYCLE_IDLE: &str = "cycle_idle";

/// `cycle_cleanup|keep`: forget all but the newest `keep` replies.
pub const CYCLE_CLEANUP: &str = "cycle_cleanup";

/// The shortest pause between ticks: a cycle with no pause at all would
/// keep a phone's model busy flat out (the seed's pause is "seconds").
pub const MIN_PAUSE_SECS: u64 = 1;

/// The longest idle timeout: a week; a node meant to sleep longer is better
/// stopped.
pub const MAX_IDLE_TIMEOUT_SECS: u64 = 7 * 86_400;

/// Idle mode switched on with no wake condition at all sleeps this long at
/// most (and says so in its reply): an hour is a real rest, and a model that
/// forgot its conditions is back within the hour, not deaf for ever.
pub const DEFAULT_IDLE_TIMEOUT_SECS: u64 = 3_600;

/// One change to the settings.
enum Change {
    Responses(u32),
    Concentration(Option<Concentration>),
    Notes(NotesMode),
    Pause(u64),
    Idle(Option<IdleSettings>),
}

/// What the writer call found.
enum Outcome {
    Saved(Box<CycleSettings>),
    /// Idle mode named processes that are not in `process_log`.
    Missing(Vec<i64>),
    /// The stored settings do not read; left untouched.
    Unreadable(String),
}

/// Steers the thinking cycle.
pub struct CycleToolset {
    tools: StoreTools,
    specs: Vec<ToolSpec>,
}

impl CycleToolset {
    /// The set over `tools`.
    pub fn new(tools: StoreTools) -> Self {
        let lang = tools.language;
        let on_off = || ArgSpec::choice("state", &["on", "off"]);
        let specs = vec![
            ToolSpec::new(
                CYCLE_RESPONSES,
                texts::cycle_responses_desc(lang),
                vec![ArgSpec::int("n")],
                ToolEffect::Write,
            ),
            ToolSpec::new(
                CYCLE_CONCENTRATION,
                texts::cycle_concentration_desc(lang),
                vec![
                    on_off(),
                    ArgSpec::text("tags").optional(),
                    ArgSpec::text("emotions").optional(),
                    ArgSpec::choice("mode", &["and", "or"]).optional(),
                ],
                ToolEffect::Write,
            ),
            ToolSpec::new(
                CYCLE_MODE,
                texts::cycle_mode_desc(lang),
                vec![
                    ArgSpec::choice("mode", &["auto", "manual"]),
                    ArgSpec::text("filter").optional(),
                ],
                ToolEffect::Write,
            ),
            ToolSpec::new(
                CYCLE_PAUSE,
                texts::cycle_pause_desc(lang),
                vec![ArgSpec::int("seconds")],
                ToolEffect::Write,
            ),
            ToolSpec::new(
                CYCLE_IDLE,
                texts::cycle_idle_desc(lang),
                vec![
                    on_off(),
                    ArgSpec::int("timeout").optional(),
                    ArgSpec::text("processes").optional(),
                    ArgSpec::text("notes").optional(),
                ],
                ToolEffect::Write,
            ),
            ToolSpec::new(
                CYCLE_CLEANUP,
                texts::cycle_cleanup_desc(lang),
                vec![ArgSpec::int("keep")],
                ToolEffect::Write,
            ),
        ];
        Self { tools, specs }
    }

    /// Checks the arguments of `tool` and says what to change.
    fn change(&self, tool: &str, args: &Args, ctx: &CallContext) -> Result<Change, String> {
        let lang = ctx.language;
        let problem = |p: Problem| problem_text(lang, &p);
        let on = args.get("state") == Some("on");
        match tool {
            CYCLE_RESPONSES => {
                let n = args.int("n").unwrap_or(0);
                let max = i64::from(MAX_RECENT_RESPONSES);
                match u32::try_from(n) {
                    Ok(n) if n >= 1 && i64::from(n) <= max => Ok(Change::Responses(n)),
                    _ => Err(texts::cycle_out_of_range(lang, "n", 1, max, n)),
                }
            }
            CYCLE_CONCENTRATION if !on => Ok(Change::Concentration(None)),
            CYCLE_CONCENTRATION => {
                let tags =
                    bounded_list(args.text("tags"), "tags", MAX_FILTER_TAGS).map_err(problem)?;
                let emotions = parse_emotions(args.text("emotions")).map_err(problem)?;
                if tags.is_empty() && emotions.is_empty() {
                    return Err(texts::cycle_concentration_empty(lang).to_owned());
                }
                let mode = match args.get("mode") {
                    Some("or") => MatchKind::Or,
                    _ => MatchKind::And,
                };
                Ok(Change::Concentration(Some(Concentration {
                    tags,
                    emotions,
                    mode,
                })))
            }
            CYCLE_MODE if args.get("mode") == Some("manual") => {
                Ok(Change::Notes(NotesMode::Manual))
            }
            CYCLE_MODE => {
                let filter = parse_note_filter(args.text("filter")).map_err(problem)?;
                Ok(Change::Notes(NotesMode::Auto { filter }))
            }
            CYCLE_PAUSE => {
                let secs = args.int("seconds").unwrap_or(-1);
                match u64::try_from(secs) {
                    Ok(s) if (MIN_PAUSE_SECS..=MAX_PAUSE_SECS).contains(&s) => Ok(Change::Pause(s)),
                    _ => Err(texts::cycle_out_of_range(
                        lang,
                        "seconds",
                        MIN_PAUSE_SECS as i64,
                        MAX_PAUSE_SECS as i64,
                        secs,
                    )),
                }
            }
            CYCLE_IDLE if !on => Ok(Change::Idle(None)),
            CYCLE_IDLE => {
                let timeout_secs = match args.int("timeout") {
                    None => None,
                    Some(t) => match u64::try_from(t) {
                        Ok(t) if (1..=MAX_IDLE_TIMEOUT_SECS).contains(&t) => Some(t),
                        _ => {
                            return Err(texts::cycle_out_of_range(
                                lang,
                                "timeout",
                                1,
                                MAX_IDLE_TIMEOUT_SECS as i64,
                                t,
                            ));
                        }
                    },
                };
                let any_process = names_any(args.text("processes"));
                let processes = parse_ids(args.text("processes")).map_err(problem)?;
                let notes = match args.get("notes") {
                    None => None,
                    Some(text) => Some(parse_note_filter(text).map_err(problem)?),
                };
                let no_condition = !any_process
                    && processes.is_empty()
                    && notes.is_none()
                    && timeout_secs.is_none();
                Ok(Change::Idle(Some(IdleSettings {
                    processes,
                    any_process,
                    notes,
                    timeout_secs: if no_condition {
                        Some(DEFAULT_IDLE_TIMEOUT_SECS)
                    } else {
                        timeout_secs
                    },
                    since_ms: ctx.now.unix_ms(),
                })))
            }
            other => Err(unknown_tool(lang, other, CYCLE, &self.specs)),
        }
    }

    /// Seed 003: "инициализация очистки … llm_recent_responses": keeps the
    /// newest `keep` replies (at least the ones context 1 can show).
    async fn cleanup(&self, args: &Args, ctx: &CallContext) -> ToolOutput {
        let lang = ctx.language;
        let keep = args.int("keep").unwrap_or(-1);
        let min = i64::from(MAX_RECENT_RESPONSES);
        let max = i64::from(KEEP_RECENT_RESPONSES);
        let Some(keep) = u32::try_from(keep)
            .ok()
            .filter(|k| (min..=max).contains(&i64::from(*k)))
        else {
            return ToolOutput::failed(texts::cycle_out_of_range(lang, "keep", min, max, keep));
        };
        match write(&self.tools.db, move |s| s.responses_keep_latest(keep)).await {
            Ok(n) => ToolOutput::ok(texts::cycle_cleaned(lang, n, keep)),
            Err(e) => db_failed(lang, &e),
        }
    }

    async fn run(&self, tool: &str, args: &Args, ctx: &CallContext) -> ToolOutput {
        let lang = ctx.language;
        if tool == CYCLE_CLEANUP {
            return self.cleanup(args, ctx).await;
        }
        let change = match self.change(tool, args, ctx) {
            Ok(c) => c,
            Err(text) => return ToolOutput::failed(text),
        };
        let now = ctx.now.unix_ms();
        let reply_of = reply_maker(&change);
        // Said in the reply: the model did not set this timeout itself.
        let defaulted = matches!(&change, Change::Idle(Some(idle))
            if idle.timeout_secs == Some(DEFAULT_IDLE_TIMEOUT_SECS)
                && args.int("timeout").is_none());
        let outcome = write(&self.tools.db, move |s| apply(s, change, now)).await;
        match outcome {
            Ok(Outcome::Saved(settings)) => {
                let mut reply = reply_of(lang, &settings);
                if defaulted {
                    reply.push_str(&texts::cycle_idle_default_timeout(
                        lang,
                        DEFAULT_IDLE_TIMEOUT_SECS,
                    ));
                }
                ToolOutput::ok(reply)
            }
            Ok(Outcome::Missing(ids)) => {
                let ids: Vec<String> = ids.iter().map(|i| format!("#{i}")).collect();
                ToolOutput::failed(texts::cycle_unknown_processes(lang, &ids.join(", ")))
            }
            Ok(Outcome::Unreadable(e)) => {
                ToolOutput::failed(texts::cycle_unreadable(lang, CYCLE_CONFIG_KEY, &e))
            }
            Err(e) => db_failed(lang, &e),
        }
    }
}

/// Reads, changes and writes the settings on the writer connection.
fn apply(s: &porfiry_storage::Store, change: Change, now: u64) -> porfiry_storage::Result<Outcome> {
    let mut settings = match s.config_get::<CycleSettings>(CYCLE_CONFIG_KEY) {
        Ok(v) => v.unwrap_or_default(),
        Err(e @ StorageError::BadColumn { .. }) => return Ok(Outcome::Unreadable(e.to_string())),
        Err(e) => return Err(e),
    };
    match change {
        Change::Responses(n) => settings.responses = n,
        Change::Concentration(c) => settings.concentration = c,
        Change::Notes(n) => settings.notes = n,
        Change::Pause(p) => settings.pause_secs = p,
        Change::Idle(idle) => {
            if let Some(idle) = &idle {
                let mut missing = Vec::new();
                for id in &idle.processes {
                    match s.get::<ProcessEntry>(*id) {
                        Ok(_) => {}
                        Err(StorageError::NotFound { .. }) => missing.push(*id),
                        Err(e) => return Err(e),
                    }
                }
                if !missing.is_empty() {
                    return Ok(Outcome::Missing(missing));
                }
            }
            settings.idle = idle;
        }
    }
    s.config_set(CYCLE_CONFIG_KEY, &settings, now)?;
    Ok(Outcome::Saved(Box::new(settings)))
}

/// The reply for a change, given the settings as saved.
fn reply_maker(change: &Change) -> fn(Language, &CycleSettings) -> String {
    match change {
        Change::Responses(_) => |lang, s| texts::cycle_responses_set(lang, s.responses),
        Change::Concentration(_) => |lang, s| match &s.concentration {
            None => texts::cycle_concentration_off(lang).to_owned(),
            Some(c) => {
                let mode = match c.mode {
                    MatchKind::And => "and",
                    MatchKind::Or => "or",
                };
                let desc = format!(
                    "tags=[{}] emotions=[{}] mode={mode}",
                    c.tags.join(", "),
                    describe_emotions(&c.emotions)
                );
                texts::cycle_concentration_on(lang, &desc)
            }
        },
        Change::Notes(_) => |lang, s| match &s.notes {
            NotesMode::Manual => texts::cycle_mode_manual(lang).to_owned(),
            NotesMode::Auto { filter } => texts::cycle_mode_auto(lang, &describe_filter(filter)),
        },
        Change::Pause(_) => |lang, s| texts::cycle_pause_set(lang, s.pause_secs),
        Change::Idle(_) => |lang, s| match &s.idle {
            None => texts::cycle_idle_off(lang).to_owned(),
            Some(idle) => {
                let ids: Vec<String> = idle.processes.iter().map(|i| format!("#{i}")).collect();
                let notes = idle.notes.as_ref().map(describe_filter);
                texts::cycle_idle_on(
                    lang,
                    idle.any_process,
                    &ids.join(", "),
                    notes.as_deref(),
                    idle.timeout_secs,
                )
            }
        },
    }
}

/// A parse problem in the caller's language.
fn problem_text(lang: Language, p: &Problem) -> String {
    match p {
        Problem::BadEmotion(item) => texts::cycle_bad_emotion(lang, item),
        Problem::TooMany { what, max } => texts::cycle_too_many(lang, what, *max),
        Problem::BadFilterKey(key) => texts::cycle_bad_filter_key(lang, key, FILTER_KEYS),
        Problem::BadFilterValue { key, value } => texts::cycle_bad_filter_value(lang, key, value),
        Problem::BadId(item) => texts::cycle_bad_id(lang, item),
    }
}

run_toolset!(CycleToolset, CYCLE, texts::cycle_summary, tools);

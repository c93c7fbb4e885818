//! The cognitive core's limits and config keys, each with why.

use std::time::Duration;

/// `system_prompts.name` of the core's context 0 (one row per language);
/// the seed writes it.
pub use porfiry_mesh::seed::SYSTEM_PROMPT_NAME;

/// `config` key of the records the model asked to see (context 3, kept
/// between ticks).
pub const REQUESTED_CONFIG_KEY: &str = "context.requested";

/// `config` key of the journal of the tick whose commands are running
/// ([`crate::cognition::journal`]); gone once the tick is recorded.
pub const TICK_JOURNAL_CONFIG_KEY: &str = "core.tick_journal";

/// Records context 3 keeps asking for: the budget would cut more anyway
/// on a phone, and the model re-reads what it needs.
pub const MAX_REQUESTED_RECORDS: usize = 20;

/// Goals shown in context 1: open goals are few in practice; more would
/// crowd out the replies the budget keeps first.
pub const MAX_CONTEXT_GOALS: u32 = 20;

/// Pinned tasks, diary entries and concepts shown, each: pinning is the
/// model's way to keep something in view, and it unpins to make room.
pub const MAX_CONTEXT_PINNED: u32 = 20;

/// Open processes shown in context 2.
pub const MAX_CONTEXT_PROCESSES: u32 = 30;

/// A process result longer than this is clipped in context 2; the model
/// reads the whole with `process_list`.
pub const MAX_RESULT_CHARS: usize = 600;

/// Notes context 4 loads (ids in manual mode, whole notes in auto mode):
/// the budget keeps the newest that fit.
pub const MAX_CONTEXT_NOTES: u32 = 100;

/// Identities (roles) context 5 shows: an agent has one or a few.
pub const MAX_CONTEXT_ROLES: u32 = 5;

/// Config parameters context 5 lists (by key): a node sets a handful; more
/// would be noise the budget cuts anyway.
pub const MAX_CONTEXT_CONFIG: usize = 16;

/// A config value in context 5 is clipped to this: a parameter, not a document.
pub const MAX_CONFIG_VALUE_CHARS: usize = 120;

/// llm_memory rows context 6 loads, newest.
pub const MAX_CONTEXT_MEMORY: u32 = 30;

/// Scripts and tables each listed in context 0.
pub const MAX_CONTEXT_UTILITIES: u32 = 20;

/// Replies kept in `llm_recent_responses` (defined where the `cycle` set
/// sees it too).
pub use porfiry_skills::cognition::KEEP_RECENT_RESPONSES;

/// The main model's whole call; the HTTP client's own deadlines (first
/// token 120 s, total 10 min) usually end it first.
pub const MODEL_DEADLINE: Duration = Duration::from_secs(11 * 60);

/// The short calls of a tick (evaluations and validators), run together:
/// a validator that has not answered by then abstains.
pub const REFLECT_DEADLINE: Duration = Duration::from_secs(90);

/// Commands run per tick at most; the parser caps the reply already, this
/// keeps one tick from holding the database actor for long.
pub const MAX_COMMANDS_RUN: usize = 16;

/// A tool's reply stored in `process_log.result` is clipped to this.
pub const MAX_STORED_RESULT_CHARS: usize = 4_000;

/// The session name of the core's tool calls.
pub const CORE_SESSION: &str = "core";

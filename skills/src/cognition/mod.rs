//! The HMP cognitive core's pure parts (seed 003): everything the thinking
//! cycle decides without touching a socket, a file or the clock. The node
//! (`node/src/cognition/`) loads rows, calls models and runs commands; this
//! module says what to ask, what the answers mean and what to do next.
//!
//! - [`budget`]: the token estimate and the fitting of whole records into a budget.
//! - [`context`]: contexts 0–6 of a tick's prompt under the budget.
//! - [`commands`]: the commands of a reply (`TOOL_CALL` lines, `# Commands:` blocks).
//! - [`settings`]: the cycle settings the model steers (`cycle_*` commands).
//! - [`texts`]: every text the core shows a model, English and Russian.

pub mod budget;
pub mod commands;
pub mod context;
pub mod settings;
pub mod texts;

pub use budget::{DEFAULT_CONTEXT_TOKENS, estimate_tokens};
pub use commands::{
    Command, CommandArgs, CommandProblem, Extracted, MAX_COMMANDS_PER_REPLY, extract_commands,
};
pub use context::{
    BuiltPrompt, ContextBlock, ContextData, Line, NoteLine, NotesView, ProcessLine, RecentLine,
    build_prompt,
};
pub use settings::{
    CYCLE_CONFIG_KEY, Concentration, CycleSettings, EmotionAtLeast, IdleSettings, MatchKind,
    NoteFilter, NotesMode,
};

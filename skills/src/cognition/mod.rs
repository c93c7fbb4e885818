//! The HMP cognitive core's pure parts (seed 003): everything the thinking
//! cycle decides without touching a socket, a file or the clock. The node
//! (`node/src/cognition/`) loads rows, calls models and runs commands; this
//! module says what to ask, what the answers mean and what to do next.
//!
//! - [`commands`]: the commands of a reply (`TOOL_CALL` lines, `# Commands:` blocks).
//! - [`settings`]: the cycle settings the model steers (`cycle_*` commands).
//! - [`texts`]: every text the core shows a model, English and Russian.

pub mod commands;
pub mod settings;
pub mod texts;

pub use commands::{
    Command, CommandArgs, CommandProblem, Extracted, MAX_COMMANDS_PER_REPLY, extract_commands,
};
pub use settings::{
    CYCLE_CONFIG_KEY, Concentration, CycleSettings, EmotionAtLeast, IdleSettings, MatchKind,
    NoteFilter, NotesMode,
};

//! The HMP cognitive core's pure parts (seed 003): everything the thinking
//! cycle decides without touching a socket, a file or the clock. The node
//! (`node/agent/src/cognition/`) loads rows, calls models and runs commands; this
//! module says what to ask, what the answers mean and what to do next.
//!
//! - [`budget`]: the token estimate and the fitting of whole records into a budget.
//! - [`context`]: contexts 0–6 of a tick's prompt under the budget.
//! - [`commands`]: the commands of a reply (`TOOL_CALL` lines, `# Commands:` blocks).
//! - [`settings`]: the cycle settings the model steers (`cycle_*` commands).
//! - [`texts`]: every text the core shows a model, English and Russian.
//! - [`reflex`]: the anti-stagnation reflex's evaluations and reflection line.
//! - [`emotions`]: the emotional evaluation's answer and the emotion list.
//! - [`votes`]: cognitive validation — the validators' question, votes, thresholds.
//! - [`detectors`]: stagnation detectors and the stall counter.
//! - [`strategy`]: diagnosing a stall and choosing strategies, rating them.
//! - [`tick`]: one tick as a sans-IO state machine.
//! - [`seeds`]: the strategies, thinking methods and emotions a fresh node starts with.

pub mod budget;
pub mod commands;
pub mod context;
pub mod detectors;
pub mod emotions;
pub mod reflex;
pub mod seeds;
pub mod settings;
pub mod similarity;
pub mod strategy;
pub mod texts;
pub mod tick;
pub mod votes;

pub use budget::{DEFAULT_CONTEXT_TOKENS, estimate_tokens};
pub use commands::{
    Command, CommandArgs, CommandProblem, Extracted, MAX_COMMANDS_PER_REPLY, extract_commands,
};
pub use context::{
    BuiltPrompt, ContextBlock, ContextData, Line, NoteLine, NotesView, ProcessLine, RecentLine,
    build_prompt,
};
pub use settings::{
    CYCLE_CONFIG_KEY, Concentration, CycleSettings, EmotionAtLeast, IdleSettings,
    KEEP_RECENT_RESPONSES, MatchKind, NoteFilter, NotesMode, THINKING_PAUSED_KEY,
};

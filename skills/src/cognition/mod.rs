//! The HMP cognitive core's pure parts (seed 003): everything the thinking
//! cycle decides without touching a socket, a file or the clock. The node
//! (`node/src/cognition/`) loads rows, calls models and runs commands; this
//! module says what to ask, what the answers mean and what to do next.
//!
//! - [`settings`]: the cycle settings the model steers (`cycle_*` commands).
//! - [`texts`]: every text the core shows a model, English and Russian.
//! - [`reflex`]: the anti-stagnation reflex's evaluations and reflection line.
//! - [`emotions`]: the emotional evaluation's answer and the emotion list.
//! - [`votes`]: cognitive validation — the validators' question, votes, thresholds.
//! - [`detectors`]: stagnation detectors and the stall counter.
//! - [`strategy`]: diagnosing a stall and choosing strategies, rating them.
//! - [`seeds`]: the strategies, thinking methods and emotions a fresh node starts with.

pub mod detectors;
pub mod emotions;
pub mod reflex;
pub mod seeds;
pub mod settings;
pub mod strategy;
pub mod texts;
pub mod votes;

pub use settings::{
    CYCLE_CONFIG_KEY, Concentration, CycleSettings, EmotionAtLeast, IdleSettings, MatchKind,
    NoteFilter, NotesMode,
};

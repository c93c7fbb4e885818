//! What the anti-stagnation mechanisms leave for the coming ticks: prompts
//! for the next one, a switched-to model, raised sampling, an extra pause,
//! frozen tasks and a changed setting to return to.
//! [`crate::cognition::mechanisms`] writes it, [`crate::cognition::stagnation`]
//! reads it out to the core.

use std::time::Duration;

use porfiry_skills::Language;
use porfiry_skills::cognition::NotesMode;
use porfiry_storage::LlmEntry;

/// Ticks a switched-to model thinks before the main one returns.
pub const SWITCH_TICKS: u64 = 3;

/// Ticks raised sampling lasts before the model's own values return.
pub const TUNE_TICKS: u64 = 3;

/// How long a task switch freezes the pinned tasks before the core returns
/// to them (seed: "временное замораживание задачи с возвращением через N
/// часов"): two hours, long enough for a fresh look, short enough that the
/// task is not forgotten.
pub const TASK_RETURN_AFTER: Duration = Duration::from_secs(2 * 3_600);

/// A task switch waiting to return to the frozen tasks.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TaskReturn {
    /// The tasks that were pinned and are frozen now.
    pub frozen: Vec<i64>,
    /// The task pinned instead.
    pub switched_to: i64,
    /// When to return (Unix ms).
    pub at_ms: u64,
}

/// Ticks a change of setting lasts before the usual notes mode returns:
/// long enough to think a few times in the other setting, short enough to
/// compare before and after.
pub const ENVIRONMENT_TICKS: u64 = 5;

/// A change of setting waiting to be undone.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EnvironmentReturn {
    /// The notes mode before the change (restored).
    pub previous: NotesMode,
    /// The mode the change set: restored only if it is still the one in
    /// force (a mode the model chose meanwhile is its own and stays).
    pub set: NotesMode,
    /// The tick the usual setting returns at.
    pub until_tick: u64,
}

/// The radical pause: half an hour added to the next wait.
pub const LONG_PAUSE: Duration = Duration::from_secs(30 * 60);

/// The mechanisms' effects on the coming ticks (in memory).
pub struct Effects {
    /// The language of the hints.
    pub language: Language,
    /// Prompts for the next tick.
    pub hints: Vec<String>,
    /// The switched-to model and the tick it lasts until (exclusive).
    pub switched: Option<(LlmEntry, u64)>,
    /// The tick raised sampling lasts until (exclusive).
    pub tuned_until: Option<u64>,
    /// A pause to add to the next wait, once.
    pub extra_pause: Option<Duration>,
    /// The frozen tasks to return to.
    pub task_return: Option<TaskReturn>,
    /// The change of setting to undo.
    pub environment: Option<EnvironmentReturn>,
    /// When the outside world was last checked (Unix ms): the next check
    /// shows what came since.
    pub world_checked_ms: Option<u64>,
}

impl Effects {
    /// No effects yet.
    pub fn new(language: Language) -> Self {
        Self {
            language,
            hints: Vec::new(),
            switched: None,
            tuned_until: None,
            extra_pause: None,
            task_return: None,
            environment: None,
            world_checked_ms: None,
        }
    }
}

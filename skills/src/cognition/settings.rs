//! The cycle settings the model steers with its `cycle_*` commands (seed 003
//! § "Настройки цикла"): how many recent replies context 1 shows, the
//! concentration filter, how incoming notes reach context 4 (manual or auto
//! with a filter), the pause between ticks and idle mode with its wake
//! conditions. Stored as one JSON value under [`CYCLE_CONFIG_KEY`] in the
//! `config` table; every field has a default, so an old or partial value
//! still reads.

use serde::{Deserialize, Serialize};

/// The `config` key holding [`CycleSettings`].
pub const CYCLE_CONFIG_KEY: &str = "cycle";

/// The `config` key holding whether a person paused the node's thinking
/// (`true`/`false`; absent = thinking). The user's switch, not the model's:
/// the daemon's core starts no tick while it is `true`, across restarts.
pub const THINKING_PAUSED_KEY: &str = "thinking_paused";

/// Context 1 shows this many recent replies on a fresh node: enough to see
/// a repetition, few enough for a 3K-token phone context.
pub const DEFAULT_RECENT_RESPONSES: u32 = 5;

/// `cycle_responses` accepts at most this many: more would not fit a small
/// model's context anyway (the budget would cut them).
pub const MAX_RECENT_RESPONSES: u32 = 50;

/// Replies kept in `llm_recent_responses`: short-term memory, read by the
/// detectors' window and concentration mode; older rows are deleted after
/// each tick so the table does not grow for ever. The core's tick and the
/// `cycle_cleanup` command both bound by it.
pub const KEEP_RECENT_RESPONSES: u32 = 1_000;

/// Pause between ticks on a fresh node, in seconds: a thinking cycle that
/// runs flat out would keep a phone's model busy and its battery draining.
pub const DEFAULT_PAUSE_SECS: u64 = 30;

/// `cycle_pause` accepts at most a day; longer is what idle mode is for.
pub const MAX_PAUSE_SECS: u64 = 86_400;

/// Note priorities by name, for filters (seed 003 §2: "по приоритету
/// (например, ≥ `important`)"). A note's priority is a number, 0 normal and
/// higher more urgent; these names are its steps, in English and Russian
/// (masculine, feminine and neuter forms, as a model writes them).
pub const PRIORITY_NAMES: &[(&str, i64)] = &[
    ("low", -1),
    ("normal", 0),
    ("important", 1),
    ("high", 1),
    ("urgent", 2),
    ("critical", 3),
    ("низкий", -1),
    ("низкая", -1),
    ("низкое", -1),
    ("обычный", 0),
    ("обычная", 0),
    ("обычное", 0),
    ("важный", 1),
    ("важная", 1),
    ("важное", 1),
    ("высокий", 1),
    ("высокая", 1),
    ("высокое", 1),
    ("срочный", 2),
    ("срочная", 2),
    ("срочное", 2),
    ("критический", 3),
    ("критическая", 3),
    ("критическое", 3),
];

/// A priority as a number or one of [`PRIORITY_NAMES`] (any case, quotes
/// and backticks dropped); `None` when it is neither.
pub fn parse_priority(text: &str) -> Option<i64> {
    let word = text.trim().trim_matches(['`', '"', '\'', '«', '»']).trim();
    if let Ok(n) = word.parse::<i64>() {
        return Some(n);
    }
    let word = word.to_lowercase();
    PRIORITY_NAMES
        .iter()
        .find(|(name, _)| *name == word)
        .map(|(_, n)| *n)
}

/// How the conditions of a filter combine (seed: "и" / "или").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MatchKind {
    /// Every condition must hold.
    #[default]
    And,
    /// Any one condition is enough.
    Or,
}

/// One emotion condition of concentration mode: `"anxiety:≥2"`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmotionAtLeast {
    /// The emotion's name as stored (`"тревожность"`, `"joy"`).
    pub emotion: String,
    /// The least strength that matches, 1 ..= 5.
    pub min: u8,
}

/// Concentration mode: context 1 shows the last replies carrying these tags
/// and/or emotions instead of simply the last K.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Concentration {
    /// Tags a reply must carry.
    pub tags: Vec<String>,
    /// Emotions with a least strength.
    pub emotions: Vec<EmotionAtLeast>,
    /// How the conditions combine.
    pub mode: MatchKind,
}

/// Which incoming notes the model sees in context 4 in auto mode, and which
/// new notes wake an idle core. Empty fields do not filter.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct NoteFilter {
    /// Notes carrying any of these hashtags or local tags.
    pub tags: Vec<String>,
    /// Notes of at least this priority.
    pub min_priority: Option<i64>,
    /// Notes not older than this many seconds.
    pub max_age_secs: Option<u64>,
    /// Notes from these sources (`user`, `llm`, `cli`, `system`) or authors
    /// (a friend's peer id or name).
    pub sources: Vec<String>,
    /// Notes mentioning any of these (`@name` in the text: a peer id or a
    /// name; seed 003: auto mode filters "by priority, tags and mentions").
    pub mentions: Vec<String>,
}

/// How context 4 presents incoming notes (seed §2, context 4).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum NotesMode {
    /// Counts per priority and the explicit ids; the model reads what it
    /// wants with `notes_read`.
    #[default]
    Manual,
    /// The notes matching the model's filter, whole, newest first.
    Auto {
        /// The filter the model set.
        #[serde(default)]
        filter: NoteFilter,
    },
}

/// Idle mode: the tick skips steps 2–5 and waits for one of these (seed
/// §4: a finished process, a matching note, a timeout). A note from the
/// user, or one a friend addressed to this node alone, wakes it whatever the
/// conditions, so idle mode can never go deaf.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct IdleSettings {
    /// Wake when one of these processes finishes.
    pub processes: Vec<i64>,
    /// Wake when any process finishes (the model wrote `any`).
    pub any_process: bool,
    /// Wake on a new note matching this filter; `None` = notes do not wake.
    pub notes: Option<NoteFilter>,
    /// Wake after this many seconds at the latest; `None` = no timeout.
    pub timeout_secs: Option<u64>,
    /// When idle mode was switched on (Unix ms), so the timeout has a start.
    pub since_ms: u64,
}

/// Everything the model can steer about its own cycle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct CycleSettings {
    /// How many recent replies context 1 shows (K).
    pub responses: u32,
    /// Concentration mode; `None` = off.
    pub concentration: Option<Concentration>,
    /// How context 4 shows incoming notes.
    pub notes: NotesMode,
    /// Seconds between ticks.
    pub pause_secs: u64,
    /// Idle mode; `None` = awake.
    pub idle: Option<IdleSettings>,
}

impl Default for CycleSettings {
    fn default() -> Self {
        Self {
            responses: DEFAULT_RECENT_RESPONSES,
            concentration: None,
            notes: NotesMode::Manual,
            pause_secs: DEFAULT_PAUSE_SECS,
            idle: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_or_partial_value_reads_with_defaults() {
        let empty: CycleSettings = serde_json::from_str("{}").unwrap();
        assert_eq!(empty, CycleSettings::default());
        let partial: CycleSettings =
            serde_json::from_str(r#"{"responses": 9, "notes": {"kind": "auto"}}"#).unwrap();
        assert_eq!(partial.responses, 9);
        assert_eq!(
            partial.notes,
            NotesMode::Auto {
                filter: NoteFilter::default()
            }
        );
        assert_eq!(partial.pause_secs, DEFAULT_PAUSE_SECS);
    }

    #[test]
    fn priorities_read_as_numbers_or_the_seeds_names() {
        assert_eq!(parse_priority("2"), Some(2));
        assert_eq!(parse_priority(" `important` "), Some(1));
        assert_eq!(parse_priority("Urgent"), Some(2));
        assert_eq!(parse_priority("важное"), Some(1));
        assert_eq!(parse_priority("Срочный"), Some(2));
        assert_eq!(parse_priority("low"), Some(-1));
        assert_eq!(parse_priority("soonish"), None);
        assert_eq!(parse_priority(""), None);
    }

    #[test]
    fn settings_round_trip_through_json() {
        let settings = CycleSettings {
            responses: 3,
            concentration: Some(Concentration {
                tags: vec!["mesh".into()],
                emotions: vec![EmotionAtLeast {
                    emotion: "тревожность".into(),
                    min: 2,
                }],
                mode: MatchKind::Or,
            }),
            notes: NotesMode::Auto {
                filter: NoteFilter {
                    min_priority: Some(2),
                    ..Default::default()
                },
            },
            pause_secs: 5,
            idle: Some(IdleSettings {
                processes: vec![4],
                any_process: false,
                notes: Some(NoteFilter::default()),
                timeout_secs: Some(600),
                since_ms: 1_000,
            }),
        };
        let json = serde_json::to_string(&settings).unwrap();
        assert!(json.contains(r#""mode":"or""#), "{json}");
        assert_eq!(
            serde_json::from_str::<CycleSettings>(&json).unwrap(),
            settings
        );
    }
}

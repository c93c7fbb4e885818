//! The rows a tick's prompt is built from (loaded by the node, every list
//! oldest first) and the built prompt itself.

use crate::cognition::settings::CycleSettings;
use crate::{Language, ModelRequest, ZonedTime};

/// One whole record: a goal, a pinned task, a notebook record, a utility.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// Its id in its table.
    pub id: i64,
    /// Its text. For requested records (context 3) the text carries the
    /// kind and id itself (`diary #12: …`) and is shown as given.
    pub text: String,
}

/// One of the model's recent replies with its anti-stagnation reflection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecentLine {
    /// The `llm_recent_responses` id.
    pub id: i64,
    /// The reply.
    pub content: String,
    /// The reflection line (`new ideas: …`), possibly empty.
    pub reflection: String,
    /// Its semantic tags.
    pub tags: Vec<String>,
    /// Its emotions, `"joy:3"`.
    pub emotions: Vec<String>,
}

/// An open process of `process_log` (status other than `close`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessLine {
    /// The `process_log` id.
    pub id: i64,
    /// The command or process name.
    pub name: String,
    /// The seed's status (`ok`, `warning`, `error`, `timeout`, `offline`).
    pub status: String,
    /// Its result; `None` with status `warning` means still running.
    pub result: Option<String>,
}

/// An incoming note shown whole (auto mode).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteLine {
    /// The `notes` id.
    pub id: i64,
    /// Its priority.
    pub priority: i64,
    /// Its source or author (`user`, a friend's name).
    pub from: String,
    /// Its text.
    pub text: String,
    /// Its tags and hashtags.
    pub tags: Vec<String>,
}

/// One unread note of manual mode: its id with what the seed lists beside
/// it (priority, hashtags, source), not its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnreadNote {
    /// The note's id.
    pub id: i64,
    /// Its priority.
    pub priority: i64,
    /// Who it is from: `user`, `cli`, `system`, or a friend's name or id.
    pub from: String,
    /// Its hashtags (without `#`).
    pub hashtags: Vec<String>,
}

/// How context 4 shows incoming notes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotesView {
    /// Counts per priority and the explicit unread ids with priorities.
    Manual {
        /// `(priority, count)`, in the order to show.
        per_priority: Vec<(i64, u64)>,
        /// The unread notes, oldest first.
        unread: Vec<UnreadNote>,
    },
    /// The notes matching the model's filter, oldest first.
    Auto {
        /// The notes.
        notes: Vec<NoteLine>,
    },
}

impl Default for NotesView {
    fn default() -> Self {
        NotesView::Manual {
            per_priority: Vec::new(),
            unread: Vec::new(),
        }
    }
}

/// Everything a tick's prompt shows, loaded by the node.
#[derive(Debug, Clone)]
pub struct ContextData {
    /// The tick id (context 5).
    pub tick: u64,
    /// Now (context 5).
    pub now: ZonedTime,
    /// The language of every text added here.
    pub language: Language,
    /// Context 0: the core system prompt from `system_prompts`.
    pub system_prompt: String,
    /// Context 0: one line per command set (`diary — cognitive diary: …`).
    pub catalogue: Vec<String>,
    /// Context 0: the agent's scripts and tables, `name — description`.
    pub utilities: Vec<String>,
    /// Context 1: the recent replies, or the concentration selection.
    pub recent: Vec<RecentLine>,
    /// Context 1 mode and concentration, context 5 pause.
    pub cycle: CycleSettings,
    /// Context 1: the goals.
    pub goals: Vec<Line>,
    /// Context 1: how many tasks exist.
    pub tasks_total: u64,
    /// Context 1: the pinned tasks.
    pub pinned_tasks: Vec<Line>,
    /// Context 2: open processes.
    pub processes: Vec<ProcessLine>,
    /// Context 3: the records the model asked for.
    pub requested: Vec<Line>,
    /// Context 4: incoming notes.
    pub notes: NotesView,
    /// Context 5: further settings, `key = value` (model, budget, …).
    pub settings: Vec<(String, String)>,
    /// Context 6: the model's notebook.
    pub memory: Vec<Line>,
    /// Anti-stagnation hints for this tick; never cut.
    pub hints: Vec<String>,
}

/// A tick's prompt, ready to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuiltPrompt {
    /// System = context 0; one user message = contexts 1–6.
    pub request: ModelRequest,
    /// The estimated tokens of both messages and their template overhead.
    pub tokens: usize,
    /// What was cut (`3 of 10 recent replies`), in the prompt's language,
    /// for the trace; empty when everything fit.
    pub cut: Vec<String>,
    /// The ids of the processes context 2 shows (the newest that fit):
    /// only these count as seen by the model.
    pub shown_processes: Vec<i64>,
}

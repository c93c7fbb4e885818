//! The agent's `goals` and the `tasks` serving them. Deleting a goal keeps
//! its tasks (their `goal_id` becomes empty).

use rusqlite::types::Value;

use crate::error::{Result, StorageError};
use crate::query::{Filter, resolve_limit};
use crate::record::{Stored, record};
use crate::store::Store;
use crate::values::Progress;

record! {
    /// A goal of the agent.
    pub struct Goal in "goals" search ["title", "description"] marks [Tagged] check check_goal {
        /// Short title.
        pub title: String,
        /// Details.
        pub description: String,
        /// Progress.
        pub status: Progress,
        /// Higher is more important.
        pub priority: i64,
        /// Tags.
        pub tags: Vec<String> as tags,
        /// The LLM that set it.
        pub llm_id: Option<String>,
    }
}

fn check_goal(g: &Goal) -> Result<()> {
    if g.title.trim().is_empty() {
        return Err(StorageError::invalid("goal", "title is empty"));
    }
    Ok(())
}

record! {
    /// A task, optionally serving a goal. Pinned tasks are shown in every context.
    pub struct Task in "tasks" search ["title", "description"] marks [Tagged, Pinnable] check check_task {
        /// The goal it serves, if any (must exist).
        pub goal_id: Option<i64>,
        /// Short title.
        pub title: String,
        /// Details.
        pub description: String,
        /// Progress.
        pub status: Progress,
        /// Higher is more important.
        pub priority: i64,
        /// Held in attention.
        pub pinned: bool,
        /// Tags.
        pub tags: Vec<String> as tags,
        /// The LLM that set it.
        pub llm_id: Option<String>,
    }
}

fn check_task(t: &Task) -> Result<()> {
    if t.title.trim().is_empty() {
        return Err(StorageError::invalid("task", "title is empty"));
    }
    Ok(())
}

/// The progress of a goal still pursued: context 1 shows only these, so a
/// finished goal (done, cancelled) never takes the place of an open one.
const PURSUED: [Progress; 2] = [Progress::Open, Progress::InProgress];

impl Store {
    /// The newest `limit` goals still pursued (open or in progress), newest
    /// first. The status is filtered in the query, before the limit: any
    /// number of newer finished goals cannot hide an older open one. `limit`
    /// is checked like a list's (1 ..= [`crate::limits::MAX_LIST_LIMIT`]).
    pub fn goals_pursued(&self, limit: u32) -> Result<Vec<Stored<Goal>>> {
        let limit = resolve_limit(Some(limit))?;
        let mut f = Filter::default();
        let marks = vec!["?"; PURSUED.len()].join(", ");
        f.and(
            format!("status IN ({marks})"),
            PURSUED.map(|p| Value::Text(p.as_str().to_owned())),
        );
        self.select::<Goal>(&f, "created DESC, id DESC", limit, 0)
    }

    /// Sets a goal's progress.
    pub fn set_goal_status(&self, id: i64, status: Progress, now_ms: u64) -> Result<()> {
        self.set_columns::<Goal>(id, "status = ?", &[&status], now_ms)
    }

    /// Sets a task's progress.
    pub fn set_task_status(&self, id: i64, status: Progress, now_ms: u64) -> Result<()> {
        self.set_columns::<Task>(id, "status = ?", &[&status], now_ms)
    }

    /// The tasks of one goal, oldest first.
    pub fn tasks_of_goal(&self, goal_id: i64) -> Result<Vec<Stored<Task>>> {
        let mut f = Filter::default();
        f.and("goal_id = ?", [Value::Integer(goal_id)]);
        self.select::<Task>(&f, "created, id", u32::MAX, 0)
    }

    /// Task counts per status, in [`Progress::ALL`] order (context 1 shows
    /// the total and the pinned tasks).
    pub fn task_counts(&self) -> Result<Vec<(Progress, u64)>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT count(*) FROM tasks WHERE status = ?")?;
        Progress::ALL
            .iter()
            .map(|&p| Ok((p, stmt.query_row([p], |r| r.get(0))?)))
            .collect()
    }
}

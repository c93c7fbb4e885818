//! What `GET /api/mind` shows, read from the database the cognitive core
//! writes: whether thinking is paused, the newest goals, tasks, ticks and
//! diary entries, and which of the person's other devices wrote each goal,
//! task and entry it did not write itself (`written_on`).

use porfiry_protocol::mind::MindTable;
use porfiry_skills::cognition::THINKING_PAUSED_KEY;
use porfiry_storage::{DiaryEntry, Goal, ListQuery, StorageError, Store, Task, TickRecord};

use crate::limits::{MIND_DIARY, MIND_GOALS, MIND_TASKS, MIND_TICKS};

/// The mind view of the node `me` whose database is `s`.
pub(crate) fn mind_view(s: &Store, me: &str) -> Result<serde_json::Value, StorageError> {
    let paused: Option<bool> = s.config_get(THINKING_PAUSED_KEY)?;
    let goals = s.list::<Goal>(&ListQuery::recent(MIND_GOALS))?;
    let tasks = s.list::<Task>(&ListQuery::recent(MIND_TASKS))?;
    let diary = s.list::<DiaryEntry>(&ListQuery::recent(MIND_DIARY))?;
    let goal_ids: Vec<i64> = goals.iter().map(|r| r.id).collect();
    let task_ids: Vec<i64> = tasks.iter().map(|r| r.id).collect();
    let diary_ids: Vec<i64> = diary.iter().map(|r| r.id).collect();
    let written_on = serde_json::json!({
        "goals": s.mind_writers(MindTable::Goal, &goal_ids, me)?,
        "tasks": s.mind_writers(MindTable::Task, &task_ids, me)?,
        "diary": s.mind_writers(MindTable::Diary, &diary_ids, me)?,
    });
    Ok(serde_json::json!({
        "paused": paused.unwrap_or(false),
        "goals": goals,
        "tasks": tasks,
        "ticks": s.list::<TickRecord>(&ListQuery::recent(MIND_TICKS))?,
        "diary": diary,
        "written_on": written_on,
    }))
}

//! The anti-stagnation mechanisms (seed 003, "Классы механизмов разрыва
//! цикла"), each really acting: a note to friends, a distant diary entry or
//! a forgotten topic brought into the next prompt, meta-analysis and
//! rationale prompts, goal reformulation, a switch to another registry
//! model or raised sampling for a few ticks, a task switch (pins, returned to
//! after two hours with a reminder), a random
//! allowed read command, a long pause, a question for the user. Each
//! returns what it did, or `None` when it cannot act now (no friends to
//! ask, no other model…), so the next chosen strategy is tried.

use porfiry_skills::cognition::commands::{Command, CommandArgs};
use porfiry_skills::cognition::reflex::lexical_similarity;
use porfiry_skills::cognition::strategy::Mechanism;
use porfiry_skills::cognition::tick::{TickReport, raw_args};
use porfiry_storage::{
    Concept, DiaryEntry, Goal, ListQuery, LlmEntry, Progress, Store, Stored, Task,
};

use crate::cognition::asker::FriendsAsker;
use crate::cognition::effects::{
    Effects, LONG_PAUSE, SWITCH_TICKS, TASK_RETURN_AFTER, TUNE_TICKS, TaskReturn,
};
use crate::cognition::error::CoreError;
use crate::cognition::load::clip;
use crate::cognition::run_commands::CommandRunner;
use crate::cognition::texts;
use crate::cognition::trace::Trace;
use porfiry_skills::Clock;
use porfiry_storage::db::Db;

/// Diary entries a flashback looks through (the oldest ones): far in time
/// is where the distant associations are, and the scan stays cheap.
const FLASHBACK_POOL: u32 = 50;

/// Rows per table the interest memory reads for tag ages.
const INTEREST_POOL: u32 = 500;

/// Argument-free read commands the random step may pick from.
const RANDOM_READS: &[&str] = &[
    "diary_list",
    "concepts_list",
    "goals_list",
    "tasks_list",
    "memory_list",
    "tags_stats",
];

/// A shown output of the random step is clipped to this.
const RANDOM_OUTPUT_CHARS: usize = 400;

/// What the stagnation mechanisms may touch.
pub struct StagnationIo<'a> {
    /// The database.
    pub db: &'a Db,
    /// Runs tools (the random-action mechanism).
    pub runner: &'a CommandRunner,
    /// Posts to friends (the mesh-request mechanism).
    pub asker: Option<&'a dyn FriendsAsker>,
    /// The clock.
    pub clock: &'a dyn Clock,
    /// The trace.
    pub trace: &'a Trace,
    /// The model the tick thought with (a switch picks another).
    pub model: &'a str,
}

/// Applies `mechanism` after `report`'s tick; what it did, or `None`.
pub async fn apply(
    state: &mut Effects,
    mechanism: Mechanism,
    report: &TickReport,
    io: &mut StagnationIo<'_>,
) -> Result<Option<String>, CoreError> {
    let lang = state.language;
    let tick = report.tick;
    Ok(match mechanism {
        Mechanism::AskFriends => {
            let Some(asker) = io.asker else {
                return Ok(None);
            };
            let topic = report
                .reflex
                .as_ref()
                .and_then(|r| r.evaluation.tags.first().cloned())
                .unwrap_or_else(|| clip(report.reply.as_deref().unwrap_or("-"), 60));
            match asker.ask(texts::ask_friends_note(lang, &topic)).await {
                Ok(id) => {
                    state.hints.push(texts::asked_friends_hint(lang));
                    Some(format!("asked friends in note #{id}"))
                }
                Err(e) => {
                    tracing::info!(error = %e, "cannot ask friends");
                    None
                }
            }
        }
        Mechanism::Flashback => {
            let reply = report.reply.clone().unwrap_or_default();
            let entry = io
                .db
                .read(move |s: &Store| {
                    s.list::<DiaryEntry>(&ListQuery {
                        limit: Some(FLASHBACK_POOL),
                        oldest_first: true,
                        ..Default::default()
                    })
                    .map(|rows| most_distant(rows, &reply))
                })
                .await??;
            entry.map(|d| {
                state
                    .hints
                    .push(texts::flashback_hint(lang, d.id, &d.row.text));
                format!("flashback to diary #{}", d.id)
            })
        }
        Mechanism::InterestMemory => {
            let tag = io.db.read(|s: &Store| oldest_tag(s)).await??;
            tag.map(|tag| {
                state.hints.push(texts::interest_hint(lang, &tag));
                format!("brought back the topic #{tag}")
            })
        }
        Mechanism::MetaAnalysis => {
            state.hints.push(texts::meta_analysis_hint(lang));
            Some("asked for a meta-analysis".into())
        }
        Mechanism::Rationale => {
            state.hints.push(texts::rationale_hint(lang));
            Some("asked for the rationale".into())
        }
        Mechanism::AskUser => {
            state.hints.push(texts::ask_user_hint(lang));
            Some("suggested asking the user".into())
        }
        Mechanism::GoalReformulation => {
            let goal = io
                .db
                .read(|s: &Store| {
                    s.list::<Goal>(&ListQuery::recent(porfiry_storage::limits::MAX_LIST_LIMIT))
                        .map(|goals| {
                            goals
                                .into_iter()
                                .filter(|g| {
                                    matches!(g.row.status, Progress::Open | Progress::InProgress)
                                })
                                .max_by_key(|g| g.row.priority)
                        })
                })
                .await??;
            goal.map(|g| {
                state
                    .hints
                    .push(texts::reformulate_hint(lang, &g.row.title));
                format!("asked to reformulate goal #{}", g.id)
            })
        }
        Mechanism::SwitchModel => {
            let current = io.model.to_owned();
            let other = io
                .db
                .read(move |s: &Store| {
                    s.list::<LlmEntry>(&ListQuery::recent(porfiry_storage::limits::MAX_LIST_LIMIT))
                        .map(|rows| {
                            rows.into_iter()
                                .filter(|r| !r.row.is_main && r.row.name != current)
                                .max_by(|a, b| a.row.trust.total_cmp(&b.row.trust))
                        })
                })
                .await??;
            other.map(|o| {
                state
                    .hints
                    .push(texts::switch_model_hint(lang, &o.row.name));
                let name = o.row.name.clone();
                state.switched = Some((o.row, tick + 1 + SWITCH_TICKS));
                format!("switched to {name} for {SWITCH_TICKS} ticks")
            })
        }
        Mechanism::TuneSampling => {
            state.tuned_until = Some(tick + 1 + TUNE_TICKS);
            Some(format!(
                "raised temperature and presence_penalty for {TUNE_TICKS} ticks"
            ))
        }
        Mechanism::TaskSwitch => {
            let now = io.clock.now().unix_ms();
            let switched = io.db.write(move |s: &Store| switch_task(s, now)).await??;
            switched.map(|(t, frozen)| {
                state
                    .hints
                    .push(texts::task_switch_hint(lang, &t.row.title));
                let back = u64::try_from(TASK_RETURN_AFTER.as_millis()).unwrap_or(u64::MAX);
                if !frozen.is_empty() {
                    state.task_return = Some(TaskReturn {
                        frozen,
                        switched_to: t.id,
                        at_ms: now.saturating_add(back),
                    });
                }
                format!("switched focus to task #{}", t.id)
            })
        }
        Mechanism::RandomAction => {
            let available: Vec<&str> = RANDOM_READS
                .iter()
                .copied()
                .filter(|t| {
                    io.runner
                        .registry()
                        .set_of(t)
                        .is_some_and(|set| set.tools().iter().any(|s| s.name == *t))
                })
                .collect();
            if available.is_empty() {
                return Ok(None);
            }
            // Deterministic per tick: a replayed run makes the same choice.
            let tool = available[usize::try_from(tick).unwrap_or(0) % available.len()];
            let command = Command {
                cmd_id: None,
                tool: tool.to_owned(),
                args: CommandArgs::Line(String::new()),
                description: None,
            };
            let result = io.runner.run(&command, tick, io.clock.now()).await;
            state.hints.push(texts::random_action_hint(
                lang,
                &format!("{tool}{}", raw_args(&command)),
                &clip(&result.output, RANDOM_OUTPUT_CHARS),
            ));
            Some(format!("ran {tool}"))
        }
        Mechanism::LongPause => {
            state.extra_pause = Some(LONG_PAUSE);
            Some(format!("paused for {} min", LONG_PAUSE.as_secs() / 60))
        }
    })
}

/// Of `rows`, the entry least like `reply`.
fn most_distant(rows: Vec<Stored<DiaryEntry>>, reply: &str) -> Option<Stored<DiaryEntry>> {
    rows.into_iter().min_by(|a, b| {
        lexical_similarity(&a.row.text, reply)
            .total_cmp(&lexical_similarity(&b.row.text, reply))
            .then(a.id.cmp(&b.id))
    })
}

/// The tag whose newest use (diary, concepts, tasks) is oldest.
fn oldest_tag(s: &Store) -> porfiry_storage::Result<Option<String>> {
    let q = ListQuery::recent(INTEREST_POOL);
    let mut last: std::collections::BTreeMap<String, u64> = Default::default();
    let mut note = |tags: &[String], at: u64| {
        for t in tags {
            let e = last.entry(t.clone()).or_insert(0);
            *e = (*e).max(at);
        }
    };
    for d in s.list::<DiaryEntry>(&q)? {
        note(&d.row.tags, d.updated_ms);
    }
    for c in s.list::<Concept>(&q)? {
        note(&c.row.tags, c.updated_ms);
    }
    for t in s.list::<Task>(&q)? {
        note(&t.row.tags, t.updated_ms);
    }
    Ok(last
        .into_iter()
        .min_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)))
        .map(|(tag, _)| tag))
}

/// Unpins the pinned tasks and pins the open task untouched longest; that
/// task and the ids it froze.
fn switch_task(s: &Store, now: u64) -> porfiry_storage::Result<Option<(Stored<Task>, Vec<i64>)>> {
    let tasks = s.list::<Task>(&ListQuery::recent(porfiry_storage::limits::MAX_LIST_LIMIT))?;
    let next = tasks
        .iter()
        .filter(|t| !t.row.pinned && matches!(t.row.status, Progress::Open | Progress::InProgress))
        .min_by_key(|t| (t.updated_ms, t.id))
        .cloned();
    let Some(next) = next else {
        return Ok(None);
    };
    let mut frozen = Vec::new();
    for t in tasks.iter().filter(|t| t.row.pinned) {
        s.set_pinned::<Task>(t.id, false, now)?;
        frozen.push(t.id);
    }
    s.set_pinned::<Task>(next.id, true, now)?;
    Ok(Some((next, frozen)))
}

/// Returns from a task switch: unpins the task switched to and pins the
/// frozen ones again (those still there and not finished); their titles.
pub fn return_to_tasks(
    s: &Store,
    back: &TaskReturn,
    now: u64,
) -> porfiry_storage::Result<Vec<String>> {
    match s.set_pinned::<Task>(back.switched_to, false, now) {
        Ok(()) | Err(porfiry_storage::StorageError::NotFound { .. }) => {}
        Err(e) => return Err(e),
    }
    let mut titles = Vec::new();
    for &id in &back.frozen {
        let task = match s.get::<Task>(id) {
            Ok(t) => t,
            Err(porfiry_storage::StorageError::NotFound { .. }) => continue,
            Err(e) => return Err(e),
        };
        if matches!(task.row.status, Progress::Open | Progress::InProgress) {
            s.set_pinned::<Task>(id, true, now)?;
            titles.push(task.row.title);
        }
    }
    Ok(titles)
}

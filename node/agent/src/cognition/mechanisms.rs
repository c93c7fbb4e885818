//! The anti-stagnation mechanisms (seed 003, "Классы механизмов разрыва
//! цикла"), each really acting: a note to friends, a check of the outside
//! world (friends' new notes, the user's feeds fetched under the URL
//! allow-list), new material read, a distant diary entry (the farthest by
//! embeddings where the model gives them, else by words) or a forgotten
//! topic brought into the next prompt, meta-analysis and rationale prompts,
//! goal reformulation, a switch to another registry model or raised
//! sampling for a few ticks, a task switch (pins, returned to after two
//! hours with a reminder), a change of setting (the other notes mode and
//! another goal for a few ticks), a creative frame shift, a random allowed
//! read command, a long pause, a question for the user. Each returns what it
//! did, or `None` when it cannot act now (no friends to ask, no other
//! model…), so the next chosen strategy is tried.

use porfiry_skills::cognition::commands::{Command, CommandArgs};
use porfiry_skills::cognition::reflex::lexical_similarity;
use porfiry_skills::cognition::settings::{CYCLE_CONFIG_KEY, CycleSettings};
use porfiry_skills::cognition::similarity::cosine;
use porfiry_skills::cognition::strategy::Mechanism;
use porfiry_skills::cognition::tick::{TickReport, raw_args};
use porfiry_skills::cognition::{NoteFilter as CycleNoteFilter, NotesMode};
use porfiry_skills::llm::Llm;
use porfiry_storage::{
    Concept, DiaryEntry, Goal, ListQuery, LlmEntry, Note, NoteFilter, NoteSource, Progress, Store,
    Stored, Task,
};

use crate::cognition::asker::FriendsAsker;
use crate::cognition::effects::{
    ENVIRONMENT_TICKS, Effects, EnvironmentReturn, LONG_PAUSE, SWITCH_TICKS, TASK_RETURN_AFTER,
    TUNE_TICKS, TaskReturn,
};
use crate::cognition::embedder::Embedder;
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

/// `config` key of the feeds the outside-world check fetches: a JSON array
/// of URLs, each also under `process.allow_urls` (the fetch checks).
pub const CORE_FEEDS_KEY: &str = "core.feeds";

/// Feeds fetched per check: each takes a process slot
/// ([`porfiry_toolsets::acting::ProcessLimits`] allows four at once).
pub const MAX_FEEDS_PER_CHECK: usize = 3;

/// Friends' new notes a world check shows, newest first.
pub const WORLD_NOTES_SHOWN: u32 = 3;

/// Characters of each of them shown.
const WORLD_NOTE_CHARS: usize = 160;

/// A first world check looks this far back: a day of friends' notes.
const WORLD_FIRST_LOOKBACK_MS: u64 = 24 * 3_600 * 1_000;

/// Unread notes the read-material mechanism chooses from (newest).
const MATERIAL_POOL: u32 = 50;

/// The tag (or hashtag) that marks reading material the user set aside.
pub const READING_TAG: &str = "reading";

/// Characters of the material shown: a page of text, within a small
/// model's context with the rest of the prompt.
const MATERIAL_CHARS: usize = 1_500;

/// Characters of a creative intervention's focus.
const FOCUS_CHARS: usize = 80;

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
    /// That model's client, asked for embeddings where it has them.
    pub llm: Option<&'a dyn Llm>,
    /// Remembers a backend without embeddings.
    pub embedder: &'a Embedder,
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
            let rows = io
                .db
                .read(move |s: &Store| {
                    s.list::<DiaryEntry>(&ListQuery {
                        limit: Some(FLASHBACK_POOL),
                        oldest_first: true,
                        ..Default::default()
                    })
                })
                .await??;
            let mut texts: Vec<String> = vec![reply.clone()];
            texts.extend(rows.iter().map(|d| d.row.text.clone()));
            let vectors = if rows.is_empty() {
                None
            } else {
                io.embedder.embed(io.llm, &texts, tick).await
            };
            let entry = match vectors {
                Some(v) => farthest_by_meaning(rows, &v),
                None => most_distant(rows, &reply),
            };
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
        Mechanism::WorldCheck => world_check(state, io, tick).await?,
        Mechanism::ReadMaterial => read_material(state, io).await?,
        Mechanism::EnvironmentChange => change_environment(state, io, tick).await?,
        Mechanism::CreativeIntervention => {
            let fallback = clip(report.reply.as_deref().unwrap_or("-"), FOCUS_CHARS);
            let concepts = io
                .db
                .read(|s: &Store| s.list::<Concept>(&ListQuery::recent(INTEREST_POOL)))
                .await??;
            let pick = usize::try_from(tick).unwrap_or(0);
            let focus = if concepts.is_empty() {
                fallback
            } else {
                clip(&concepts[pick % concepts.len()].row.name, FOCUS_CHARS)
            };
            let frames = texts::creative_frames(lang);
            let frame = frames[pick % frames.len()];
            state.hints.push(texts::creative_hint(lang, frame, &focus));
            Some(format!(
                "creative intervention: {focus:?} through {frame:?}"
            ))
        }
        Mechanism::LongPause => {
            state.extra_pause = Some(LONG_PAUSE);
            Some(format!("paused for {} min", LONG_PAUSE.as_secs() / 60))
        }
    })
}

/// Of `rows`, the entry whose embedding is farthest from the reply's
/// (`vectors[0]` is the reply's, then one per row); an entry whose vector
/// does not compare counts as near, so it is chosen last.
fn farthest_by_meaning(
    rows: Vec<Stored<DiaryEntry>>,
    vectors: &[Vec<f32>],
) -> Option<Stored<DiaryEntry>> {
    let reply = vectors.first()?;
    rows.into_iter()
        .zip(vectors.iter().skip(1))
        .map(|(row, v)| (cosine(reply, v).unwrap_or(1.0), row))
        .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.id.cmp(&b.1.id)))
        .map(|(_, row)| row)
}

/// The outside-world check: friends' notes since the last check, and a
/// fetch of each listed feed (through `process_fetch`, so the URL
/// allow-list decides). `None` when there is nothing new and no feed.
async fn world_check(
    state: &mut Effects,
    io: &mut StagnationIo<'_>,
    tick: u64,
) -> Result<Option<String>, CoreError> {
    let lang = state.language;
    let now = io.clock.now().unix_ms();
    let since = state
        .world_checked_ms
        .unwrap_or_else(|| now.saturating_sub(WORLD_FIRST_LOOKBACK_MS));
    state.world_checked_ms = Some(now);
    let (notes, feeds) = io
        .db
        .read(move |s: &Store| {
            let notes = s.notes_filter(&NoteFilter {
                from_mesh: Some(true),
                since_ms: Some(since),
                limit: Some(WORLD_NOTES_SHOWN),
                ..Default::default()
            })?;
            let feeds = s
                .config_get::<Vec<String>>(CORE_FEEDS_KEY)
                .unwrap_or_else(|e| {
                    tracing::warn!(error = %e, key = CORE_FEEDS_KEY, "unreadable feed list");
                    None
                })
                .unwrap_or_default();
            Ok::<_, porfiry_storage::StorageError>((notes, feeds))
        })
        .await??;
    let lines: Vec<String> = notes
        .iter()
        .map(|n| format!("#{} {}", n.id, clip(&n.row.text, WORLD_NOTE_CHARS)))
        .collect();
    let mut fetches = Vec::new();
    for url in feeds.iter().take(MAX_FEEDS_PER_CHECK) {
        let command = Command {
            cmd_id: None,
            tool: porfiry_toolsets::acting::PROCESS_FETCH.to_owned(),
            args: CommandArgs::Line(url.clone()),
            description: None,
        };
        let result = io.runner.run(&command, tick, io.clock.now()).await;
        io.trace
            .line(format_args!("stagnation: world check: {}", result.output));
        if result.ok {
            fetches.push(result.output);
        }
    }
    if lines.is_empty() && fetches.is_empty() {
        return Ok(None);
    }
    state
        .hints
        .push(texts::world_check_hint(lang, &lines, &fetches));
    Ok(Some(format!(
        "checked the outside world: {} new notes from friends, {} feeds fetching",
        lines.len(),
        fetches.len()
    )))
}

/// New material: the unread note someone else wrote (tagged `reading`
/// first, else the longest), shown and marked read. `None` when there is
/// none.
async fn read_material(
    state: &mut Effects,
    io: &mut StagnationIo<'_>,
) -> Result<Option<String>, CoreError> {
    let lang = state.language;
    let now = io.clock.now().unix_ms();
    let chosen = io
        .db
        .write(move |s: &Store| {
            let unread = s.notes_filter(&NoteFilter {
                read: Some(false),
                hidden: Some(false),
                limit: Some(MATERIAL_POOL),
                ..Default::default()
            })?;
            let pick = unread
                .into_iter()
                // Not what this node's core or system wrote; a friend's
                // core's note is material like any friend's.
                .filter(|n| {
                    n.row.origin_author.is_some()
                        || !matches!(n.row.source, NoteSource::Llm | NoteSource::System)
                })
                .max_by_key(|n| (is_reading(&n.row), n.row.text.chars().count(), n.id));
            if let Some(n) = &pick {
                s.notes_mark_read(n.id, true, now)?;
            }
            Ok::<_, porfiry_storage::StorageError>(pick)
        })
        .await??;
    Ok(chosen.map(|n| {
        let from = texts::note_author(lang, n.row.origin_author.as_deref(), n.row.source.as_str());
        state.hints.push(texts::read_material_hint(
            lang,
            n.id,
            &from,
            &clip(&n.row.text, MATERIAL_CHARS),
        ));
        format!("gave note #{} to read", n.id)
    }))
}

/// Whether the user set this note aside as reading material.
fn is_reading(n: &Note) -> bool {
    n.tags
        .iter()
        .chain(&n.hashtags)
        .any(|t| t.eq_ignore_ascii_case(READING_TAG))
}

/// The change of setting: the other notes mode for [`ENVIRONMENT_TICKS`]
/// ticks (stored in the cycle settings, undone by the stagnation state),
/// and the open goal touched longest ago in focus.
async fn change_environment(
    state: &mut Effects,
    io: &mut StagnationIo<'_>,
    tick: u64,
) -> Result<Option<String>, CoreError> {
    let lang = state.language;
    if state.environment.is_some() {
        // One change at a time: the earlier one is still in force.
        return Ok(None);
    }
    let now = io.clock.now().unix_ms();
    let (previous, set, goal) = io
        .db
        .write(move |s: &Store| {
            let mut cycle = s
                .config_get::<CycleSettings>(CYCLE_CONFIG_KEY)?
                .unwrap_or_default();
            let previous = cycle.notes.clone();
            cycle.notes = match previous {
                NotesMode::Manual => NotesMode::Auto {
                    filter: CycleNoteFilter::default(),
                },
                NotesMode::Auto { .. } => NotesMode::Manual,
            };
            let set = cycle.notes.clone();
            s.config_set(CYCLE_CONFIG_KEY, &cycle, now)?;
            let goal = s
                .list::<Goal>(&ListQuery::recent(porfiry_storage::limits::MAX_LIST_LIMIT))?
                .into_iter()
                .filter(|g| matches!(g.row.status, Progress::Open | Progress::InProgress))
                .min_by_key(|g| (g.updated_ms, g.id))
                .map(|g| g.row.title);
            Ok::<_, porfiry_storage::StorageError>((previous, set, goal))
        })
        .await??;
    let mode = texts::notes_mode_name(lang, matches!(set, NotesMode::Auto { .. }));
    state.hints.push(texts::environment_hint(
        lang,
        mode,
        ENVIRONMENT_TICKS,
        goal.as_deref(),
    ));
    state.environment = Some(EnvironmentReturn {
        previous,
        set,
        until_tick: tick + 1 + ENVIRONMENT_TICKS,
    });
    Ok(Some(format!(
        "changed the setting for {ENVIRONMENT_TICKS} ticks: notes mode {mode}"
    )))
}

/// Undoes a change of setting: the notes mode it replaced comes back if the
/// one it set is still in force; whether it came back.
pub fn return_from_environment(
    s: &Store,
    back: &EnvironmentReturn,
    now: u64,
) -> porfiry_storage::Result<bool> {
    let mut cycle = s
        .config_get::<CycleSettings>(CYCLE_CONFIG_KEY)?
        .unwrap_or_default();
    if cycle.notes != back.set {
        return Ok(false);
    }
    cycle.notes = back.previous.clone();
    s.config_set(CYCLE_CONFIG_KEY, &cycle, now)?;
    Ok(true)
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

//! Loading what one tick needs from SQLite, in one read: the rows behind
//! contexts 0–6 (seed 003 §2), the previous reply, the emotion list, the
//! validators and the thresholds. Every list is bounded here, before the
//! token budget trims whole records; the budget then decides what fits.

use std::collections::{BTreeMap, BTreeSet};

use porfiry_skills::Language;
use porfiry_skills::ZonedTime;
use porfiry_skills::cognition::context::{
    ContextData, Line, NoteLine, NotesView, ProcessLine, RecentLine, UnreadNote, record_prefix,
};
use porfiry_skills::cognition::reflex::EMOTIONS_CONFIG_KEY;
use porfiry_skills::cognition::votes::{THRESHOLDS_CONFIG_KEY, Thresholds};
use porfiry_skills::cognition::{CYCLE_CONFIG_KEY, CycleSettings, NoteFilter, NotesMode};
use porfiry_storage::{
    AgentScript, AgentTable, Concentration, Concept, DiaryEntry, Identity, Link, ListQuery,
    LlmEntry, MatchMode, MemoryEntry, Note, NoteSource, RecentResponse, Result, Store, Stored,
    Task,
};

use crate::cognition::limits::{
    MAX_CONFIG_VALUE_CHARS, MAX_CONTEXT_CONFIG, MAX_CONTEXT_GOALS, MAX_CONTEXT_MEMORY,
    MAX_CONTEXT_NOTES, MAX_CONTEXT_PINNED, MAX_CONTEXT_PROCESSES, MAX_CONTEXT_ROLES,
    MAX_CONTEXT_UTILITIES, MAX_RESULT_CHARS, REQUESTED_CONFIG_KEY, SYSTEM_PROMPT_NAME,
};
use crate::cognition::requested::Requested;

/// What the tick's driver passes in besides the database.
#[derive(Debug, Clone)]
pub struct LoadRequest {
    /// The tick's number.
    pub tick: u64,
    /// Now, from the injected clock.
    pub now: ZonedTime,
    /// The language of the prompt.
    pub language: Language,
    /// One catalogue line per command set (built once from the registry).
    pub catalogue: Vec<String>,
    /// Extra settings shown in context 5 (model, budget, …).
    pub settings: Vec<(String, String)>,
    /// Anti-stagnation prompts for this tick.
    pub hints: Vec<String>,
}

/// Everything loaded for one tick.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The contexts, ready for the budget.
    pub data: ContextData,
    /// The last stored reply (not a reflex record), for novelty.
    pub previous_reply: Option<String>,
    /// The known emotions.
    pub emotions: Vec<String>,
    /// The validators in the registry.
    pub validators: Vec<LlmEntry>,
    /// Least ratings per effect.
    pub thresholds: Thresholds,
    /// The cycle settings.
    pub cycle: CycleSettings,
}

/// Reads the tick's rows. Missing settings fall back to their defaults;
/// a row that no longer exists is left out, never an error.
pub fn load(store: &Store, req: &LoadRequest) -> Result<Loaded> {
    let cycle: CycleSettings = store.config_get(CYCLE_CONFIG_KEY)?.unwrap_or_default();
    let thresholds: Thresholds = store.config_get(THRESHOLDS_CONFIG_KEY)?.unwrap_or_default();
    let emotions: Vec<String> = store.config_get(EMOTIONS_CONFIG_KEY)?.unwrap_or_default();
    let requested: Requested = store.config_get(REQUESTED_CONFIG_KEY)?.unwrap_or_default();
    let system_prompt = store
        .system_prompt(SYSTEM_PROMPT_NAME, &req.language.to_string())?
        .map(|p| p.row.content)
        .unwrap_or_default();
    let recent = recent_replies(store, &cycle)?;
    // The last stored reply however long the run of reflex records since:
    // a window of recent rows would forget it once a repetition outlasts
    // the window, and the repeated reply would be stored and run again.
    let previous_reply = store.responses_last_reply()?.map(|r| r.row.content);
    // Every list goes to the budget oldest first: it cuts from the front.
    // Finished goals are left out by the query, before its limit, so newer
    // finished goals never hide an older open one.
    let goals = store
        .goals_pursued(MAX_CONTEXT_GOALS)?
        .into_iter()
        .rev()
        .map(|g| Line {
            id: g.id,
            text: format!("[{}] {}", g.row.status, g.row.title),
        })
        .collect();
    let tasks_total = store.count::<Task>()?;
    let pinned_tasks = store
        .list::<Task>(&ListQuery {
            pinned: Some(true),
            limit: Some(MAX_CONTEXT_PINNED),
            ..Default::default()
        })?
        .into_iter()
        .rev()
        .map(|t| Line {
            id: t.id,
            text: format!("[{}] {}", t.row.status, t.row.title),
        })
        .collect();
    let open = store.processes_open()?;
    let skip = open.len().saturating_sub(MAX_CONTEXT_PROCESSES as usize);
    let processes = open
        .into_iter()
        .skip(skip)
        .map(|p| ProcessLine {
            id: p.id,
            name: p.row.name,
            status: p.row.status.to_string(),
            result: p.row.result.map(|r| clip(&r, MAX_RESULT_CHARS)),
        })
        .collect();
    let data = ContextData {
        tick: req.tick,
        now: req.now.clone(),
        language: req.language,
        system_prompt,
        catalogue: req.catalogue.clone(),
        utilities: utilities(store)?,
        recent,
        cycle: cycle.clone(),
        goals,
        tasks_total,
        pinned_tasks,
        processes,
        requested: requested_lines(store, &requested)?,
        notes: notes_view(store, &cycle, req.now.unix_ms())?,
        settings: settings_lines(store, req, &thresholds)?,
        memory: store
            .list::<MemoryEntry>(&ListQuery::recent(MAX_CONTEXT_MEMORY))?
            .into_iter()
            .rev()
            .map(|m| Line {
                id: m.id,
                text: match m.row.title {
                    Some(title) => format!("{title}: {}", record_prefix(&m.row.content)),
                    None => record_prefix(&m.row.content).to_owned(),
                },
            })
            .collect(),
        hints: req.hints.clone(),
    };
    Ok(Loaded {
        data,
        previous_reply,
        emotions,
        validators: store.llm_validators()?.into_iter().map(|v| v.row).collect(),
        thresholds,
        cycle,
    })
}

/// Config keys context 5 does not list as parameters: shown elsewhere in
/// the prompt (cycle, thresholds), the core's own bookkeeping, or long.
const UNLISTED_CONFIG: &[&str] = &[
    CYCLE_CONFIG_KEY,
    THRESHOLDS_CONFIG_KEY,
    EMOTIONS_CONFIG_KEY,
    REQUESTED_CONFIG_KEY,
    crate::cognition::stagnation::STAGNATION_CONFIG_KEY,
    crate::cognition::limits::TICK_JOURNAL_CONFIG_KEY,
];

/// Context 5 (seed §2: "системные настройки, параметры конфигурации, …,
/// роли"): the driver's settings (model, budget), the language, the
/// agent's roles from `identity`, the validators, the thresholds, and the
/// other config parameters, each clipped; the budget trims the list.
fn settings_lines(
    store: &Store,
    req: &LoadRequest,
    thresholds: &Thresholds,
) -> Result<Vec<(String, String)>> {
    let mut out = req.settings.clone();
    out.push(("language".into(), req.language.to_string()));
    let roles: Vec<String> = store
        .list::<Identity>(&ListQuery::recent(MAX_CONTEXT_ROLES))?
        .into_iter()
        .rev()
        .map(|i| match i.row.role.trim() {
            "" => i.row.name,
            role => format!("{} — {role}", i.row.name),
        })
        .collect();
    if !roles.is_empty() {
        out.push(("roles".into(), roles.join("; ")));
    }
    let validators: Vec<String> = store
        .llm_validators()?
        .into_iter()
        .map(|v| v.row.name)
        .collect();
    out.push((
        "validators".into(),
        if validators.is_empty() {
            "none (auto_pass)".into()
        } else {
            validators.join(", ")
        },
    ));
    out.push((
        "thresholds".into(),
        format!(
            "read {:+}, write {:+}, network {:+}",
            thresholds.read, thresholds.write, thresholds.network
        ),
    ));
    let config = store.config_all()?;
    for (key, value) in config
        .into_iter()
        .filter(|(k, _)| !UNLISTED_CONFIG.contains(&k.as_str()))
        .take(MAX_CONTEXT_CONFIG)
    {
        let value = match value {
            serde_json::Value::String(s) => s,
            other => other.to_string(),
        };
        out.push((key, clip(&value, MAX_CONFIG_VALUE_CHARS)));
    }
    Ok(out)
}

/// Context 1: the last K replies, or the concentration selection; oldest first.
pub(crate) fn recent_replies(store: &Store, cycle: &CycleSettings) -> Result<Vec<RecentLine>> {
    let rows: Vec<Stored<RecentResponse>> = match &cycle.concentration {
        None => store.responses_recent(cycle.responses)?,
        Some(c) => store.responses_concentrated(&Concentration {
            tags: c.tags.clone(),
            emotions: c
                .emotions
                .iter()
                .map(|e| (e.emotion.clone(), e.min))
                .collect(),
            mode: match c.mode {
                porfiry_skills::cognition::MatchKind::And => MatchMode::All,
                porfiry_skills::cognition::MatchKind::Or => MatchMode::Any,
            },
            limit: Some(cycle.responses),
        })?,
    };
    Ok(rows
        .into_iter()
        .rev()
        .map(|r| RecentLine {
            id: r.id,
            content: record_prefix(&r.row.content).to_owned(),
            reflection: record_prefix(&r.row.reflection).to_owned(),
            tags: r.row.tags,
            emotions: r.row.emotions,
        })
        .collect())
}

/// Context 0's list of the agent's own utilities and tables.
fn utilities(store: &Store) -> Result<Vec<String>> {
    let scripts = store.list::<AgentScript>(&ListQuery::recent(MAX_CONTEXT_UTILITIES))?;
    let tables = store.list::<AgentTable>(&ListQuery::recent(MAX_CONTEXT_UTILITIES))?;
    Ok(scripts
        .into_iter()
        .map(|s| {
            format!(
                "script {} {} — {}",
                s.row.name, s.row.version, s.row.description
            )
        })
        .chain(
            tables
                .into_iter()
                .map(|t| format!("table {} — {}", t.row.table_name, t.row.description)),
        )
        .collect())
}

/// Context 3: pinned diary entries and concepts (attention), then the
/// records the model read, oldest request first.
fn requested_lines(store: &Store, requested: &Requested) -> Result<Vec<Line>> {
    let pinned = ListQuery {
        pinned: Some(true),
        limit: Some(MAX_CONTEXT_PINNED),
        ..Default::default()
    };
    let mut seen = BTreeSet::new();
    let mut lines = Vec::new();
    for d in store.list::<DiaryEntry>(&pinned)? {
        seen.insert(("diary", d.id));
        lines.push(diary_line(&d));
    }
    for c in store.list::<Concept>(&pinned)? {
        seen.insert(("concept", c.id));
        lines.push(concept_line(&c));
    }
    for r in &requested.records {
        if !seen.insert((r.kind.as_str(), r.id)) {
            continue;
        }
        let line = match r.kind {
            crate::cognition::requested::RecordKind::Diary => {
                store.get::<DiaryEntry>(r.id).ok().map(|d| diary_line(&d))
            }
            crate::cognition::requested::RecordKind::Concept => {
                store.get::<Concept>(r.id).ok().map(|c| concept_line(&c))
            }
            crate::cognition::requested::RecordKind::Link => {
                store.get::<Link>(r.id).ok().map(|l| Line {
                    id: l.id,
                    text: format!(
                        "link #{}: concept #{} —{}→ concept #{}",
                        l.id, l.row.from_concept, l.row.relation, l.row.to_concept
                    ),
                })
            }
        };
        lines.extend(line);
    }
    Ok(lines)
}

fn diary_line(d: &Stored<DiaryEntry>) -> Line {
    Line {
        id: d.id,
        text: format!(
            "diary #{}: {}{}",
            d.id,
            record_prefix(&d.row.text),
            tag_suffix(&d.row.tags)
        ),
    }
}

fn concept_line(c: &Stored<Concept>) -> Line {
    Line {
        id: c.id,
        text: format!(
            "concept #{} {}: {}{}",
            c.id,
            c.row.name,
            c.row.description,
            tag_suffix(&c.row.tags)
        ),
    }
}

fn tag_suffix(tags: &[String]) -> String {
    if tags.is_empty() {
        String::new()
    } else {
        format!(" [{}]", tags.join(", "))
    }
}

/// The source the core writes its own notes with (`notes_add`,
/// `messages_send` and its questions to friends, all as the LLM): context 4
/// shows incoming notes, so manual mode leaves these out. A friend's core
/// writes with it too, but a merged note is incoming and stays.
const OWN_NOTE_SOURCE: NoteSource = NoteSource::Llm;

/// Context 4 in the cycle's notes mode.
fn notes_view(store: &Store, cycle: &CycleSettings, now_ms: u64) -> Result<NotesView> {
    match &cycle.notes {
        NotesMode::Manual => {
            let unread = store.notes_filter(&porfiry_storage::NoteFilter {
                read: Some(false),
                except_local: Some(OWN_NOTE_SOURCE),
                limit: Some(MAX_CONTEXT_NOTES),
                ..Default::default()
            })?;
            Ok(NotesView::Manual {
                per_priority: store.notes_count_by_priority(true, Some(OWN_NOTE_SOURCE))?,
                unread: unread
                    .iter()
                    .rev()
                    .map(|n| UnreadNote {
                        id: n.id,
                        priority: n.row.priority,
                        from: note_source(n),
                        hashtags: n.row.hashtags.clone(),
                    })
                    .collect(),
            })
        }
        NotesMode::Auto { filter } => Ok(NotesView::Auto {
            notes: filtered_notes(store, filter, now_ms)?
                .into_iter()
                .rev()
                .map(|n| NoteLine {
                    id: n.id,
                    priority: n.row.priority,
                    from: note_source(&n),
                    tags: n.row.hashtags.iter().chain(&n.row.tags).cloned().collect(),
                    text: record_prefix(&n.row.text).to_owned(),
                })
                .collect(),
        }),
    }
}

/// Where a note came from as context 4 names it: a friend's peer id, or
/// the source (`user`, `cli`, `system`, `llm`).
fn note_source(n: &Stored<Note>) -> String {
    n.row
        .origin_author
        .clone()
        .unwrap_or_else(|| n.row.source.to_string())
}

/// The newest notes matching `filter` (any of its tags, any of its
/// sources, any of its mentions; the core's own only when its sources
/// name `llm`), at most
/// [`MAX_CONTEXT_NOTES`], newest first. One indexed query
/// per (tag, source) pair, so the cost stays flat with 100k notes.
pub fn filtered_notes(
    store: &Store,
    filter: &NoteFilter,
    now_ms: u64,
) -> Result<Vec<Stored<Note>>> {
    // The core's own notes only where the filter names their source.
    let names_own = filter
        .sources
        .iter()
        .any(|s| s.parse::<NoteSource>().is_ok_and(|s| s == OWN_NOTE_SOURCE));
    let base = porfiry_storage::NoteFilter {
        except_local: (!names_own).then_some(OWN_NOTE_SOURCE),
        min_priority: filter.min_priority,
        since_ms: filter
            .max_age_secs
            .map(|secs| now_ms.saturating_sub(secs.saturating_mul(1000))),
        limit: Some(MAX_CONTEXT_NOTES),
        ..Default::default()
    };
    let mut by_tag: Vec<porfiry_storage::NoteFilter> = if filter.tags.is_empty() {
        vec![base]
    } else {
        filter
            .tags
            .iter()
            .flat_map(|t| {
                let tag = t.trim_start_matches('#').to_owned();
                [
                    porfiry_storage::NoteFilter {
                        hashtag: Some(tag.clone()),
                        ..base.clone()
                    },
                    porfiry_storage::NoteFilter {
                        tag: Some(tag),
                        ..base.clone()
                    },
                ]
            })
            .collect()
    };
    if !filter.sources.is_empty() {
        by_tag = by_tag
            .into_iter()
            .flat_map(|f| {
                filter
                    .sources
                    .iter()
                    .map(move |s| match s.parse::<NoteSource>() {
                        Ok(source) => porfiry_storage::NoteFilter {
                            source: Some(source),
                            ..f.clone()
                        },
                        Err(_) => porfiry_storage::NoteFilter {
                            author: Some(s.clone()),
                            ..f.clone()
                        },
                    })
            })
            .collect();
    }
    if !filter.mentions.is_empty() {
        by_tag = by_tag
            .into_iter()
            .flat_map(|f| {
                filter
                    .mentions
                    .iter()
                    .map(move |m| porfiry_storage::NoteFilter {
                        mention: Some(m.clone()),
                        ..f.clone()
                    })
            })
            .collect();
    }
    let mut found: BTreeMap<i64, Stored<Note>> = BTreeMap::new();
    for f in &by_tag {
        for n in store.notes_filter(f)? {
            found.insert(n.id, n);
        }
    }
    let mut notes: Vec<Stored<Note>> = found.into_values().collect();
    notes.sort_by(|a, b| b.created_ms.cmp(&a.created_ms).then(b.id.cmp(&a.id)));
    notes.truncate(MAX_CONTEXT_NOTES as usize);
    Ok(notes)
}

/// The first `max` characters of `text`, with "…" when cut.
pub fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests;

//! Between ticks (seed §7): the pause the model set, or idle mode — no
//! ticks until a process it named finishes, a note matching its filter
//! arrives, or its timeout passes. Idle waits on [`CoreEvent`]s and a timer
//! (never a poll); whichever wakes it also switches idle mode off (seed:
//! "отключение idle-режима — при выполнении хотя бы одного из условий").
//! Only rows changed after idle mode began count, so events left over from
//! before cannot wake it; the core's own notes (source `llm`) never do. A
//! note from the user (API, CLI) or one a friend addressed to this node
//! alone (`peer:` audience) always wakes it, whatever the conditions: idle
//! mode the model set badly must not make the node deaf to its user.

use std::time::Duration;

use porfiry_protocol::Audience;
use porfiry_skills::Clock;
use porfiry_skills::cognition::{CYCLE_CONFIG_KEY, CycleSettings, IdleSettings, NoteFilter};
use porfiry_storage::{Note, NoteSource, ProcessEntry, ProcessStatus, Sharing, Store, Stored};
use tokio::sync::broadcast;

use crate::cognition::error::CoreError;
use porfiry_mesh::events::CoreEvent;
use porfiry_storage::db::Db;

/// How a wait ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Waited {
    /// The pause passed.
    Paused(Duration),
    /// Idle mode ended on this.
    Woke(WakeCause),
}

/// What ended idle mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WakeCause {
    /// This process finished.
    Process(i64),
    /// This note arrived.
    Note(i64),
    /// The timeout passed.
    Timeout,
}

/// Waits as `cycle` says; `extra` lengthens a pause (the long-pause
/// mechanism).
pub async fn wait_between_ticks(
    db: &Db,
    events: &mut broadcast::Receiver<CoreEvent>,
    cycle: &CycleSettings,
    extra: Option<Duration>,
    clock: &dyn Clock,
) -> Result<Waited, CoreError> {
    let Some(idle) = &cycle.idle else {
        let pause = Duration::from_secs(cycle.pause_secs) + extra.unwrap_or_default();
        tokio::time::sleep(pause).await;
        return Ok(Waited::Paused(pause));
    };
    let cause = idle_until_woken(db, events, idle, clock).await?;
    let now = clock.now().unix_ms();
    db.write(move |s: &Store| {
        let mut cycle: CycleSettings = s.config_get(CYCLE_CONFIG_KEY)?.unwrap_or_default();
        cycle.idle = None;
        s.config_set(CYCLE_CONFIG_KEY, &cycle, now)
    })
    .await??;
    Ok(Waited::Woke(cause))
}

async fn idle_until_woken(
    db: &Db,
    events: &mut broadcast::Receiver<CoreEvent>,
    idle: &IdleSettings,
    clock: &dyn Clock,
) -> Result<WakeCause, CoreError> {
    let timer = async {
        match idle.timeout_secs {
            Some(secs) => {
                let end = idle.since_ms.saturating_add(secs.saturating_mul(1000));
                let left = end.saturating_sub(clock.now().unix_ms());
                tokio::time::sleep(Duration::from_millis(left)).await;
            }
            None => std::future::pending::<()>().await,
        }
    };
    tokio::pin!(timer);
    let mut events_open = true;
    loop {
        tokio::select! {
            _ = &mut timer => return Ok(WakeCause::Timeout),
            event = events.recv(), if events_open => match event {
                Ok(event) => {
                    if let Some(cause) = check_event(db, idle, &event, clock).await? {
                        return Ok(cause);
                    }
                }
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    tracing::debug!(missed, "idle core lagged; re-checking the database");
                    if let Some(cause) = check_all(db, idle, clock).await? {
                        return Ok(cause);
                    }
                }
                Err(broadcast::error::RecvError::Closed) => events_open = false,
            },
        }
    }
}

/// Whether one event meets a wake condition.
async fn check_event(
    db: &Db,
    idle: &IdleSettings,
    event: &CoreEvent,
    clock: &dyn Clock,
) -> Result<Option<WakeCause>, CoreError> {
    let now = clock.now().unix_ms();
    match *event {
        CoreEvent::ProcessFinished { id } => {
            if !idle.any_process && !idle.processes.contains(&id) {
                return Ok(None);
            }
            let since = idle.since_ms;
            let row = db
                .read(move |s: &Store| s.get::<ProcessEntry>(id).ok())
                .await?;
            Ok(row
                .filter(|p| finished_since(p, since))
                .map(|_| WakeCause::Process(id)))
        }
        CoreEvent::NoteArrived { id } => {
            let since = idle.since_ms;
            let row = db.read(move |s: &Store| s.get::<Note>(id).ok()).await?;
            Ok(row
                .filter(|n| n.updated_ms >= since && note_wakes(idle, n, now))
                .map(|_| WakeCause::Note(id)))
        }
    }
}

/// After missed events: any process or note that meets a condition.
async fn check_all(
    db: &Db,
    idle: &IdleSettings,
    clock: &dyn Clock,
) -> Result<Option<WakeCause>, CoreError> {
    let idle = idle.clone();
    let now = clock.now().unix_ms();
    Ok(db
        .read(
            move |s: &Store| -> porfiry_storage::Result<Option<WakeCause>> {
                for p in s.list::<ProcessEntry>(&porfiry_storage::ListQuery {
                    since_ms: None,
                    limit: Some(porfiry_storage::limits::MAX_LIST_LIMIT),
                    ..Default::default()
                })? {
                    let named = idle.any_process || idle.processes.contains(&p.id);
                    if named && finished_since(&p, idle.since_ms) {
                        return Ok(Some(WakeCause::Process(p.id)));
                    }
                }
                let recent = s.notes_filter(&porfiry_storage::NoteFilter {
                    since_ms: Some(idle.since_ms),
                    limit: Some(porfiry_storage::limits::MAX_LIST_LIMIT),
                    ..Default::default()
                })?;
                if let Some(n) = recent.iter().find(|n| note_wakes(&idle, n, now)) {
                    return Ok(Some(WakeCause::Note(n.id)));
                }
                Ok(None)
            },
        )
        .await??)
}

/// A process row that finished (not running) at or after `since`.
fn finished_since(p: &Stored<ProcessEntry>, since: u64) -> bool {
    let running = p.row.status == ProcessStatus::Warning && p.row.result.is_none();
    !running && p.updated_ms >= since
}

/// Whether `note` ends idle mode: the user's own or one addressed to this
/// node alone always does; any other passes the idle filter, if one is set.
fn note_wakes(idle: &IdleSettings, note: &Stored<Note>, now_ms: u64) -> bool {
    always_wakes(&note.row)
        || idle
            .notes
            .as_ref()
            .is_some_and(|f| note_matches(f, note, now_ms))
}

/// A note from the user (through the API or the CLI), or a friend's direct
/// message: only this node received it (`peer:` is never relayed).
pub fn always_wakes(note: &Note) -> bool {
    matches!(note.source, NoteSource::User | NoteSource::Cli) && note.origin_author.is_none()
        || note.origin_author.is_some()
            && matches!(&note.audience, Sharing::Shared(Audience::Peer(_)))
}

/// Whether `note` passes `filter` (any tag, least priority, age, any
/// source or author); the core's own notes never match.
pub fn note_matches(filter: &NoteFilter, note: &Stored<Note>, now_ms: u64) -> bool {
    let n = &note.row;
    if n.source == NoteSource::Llm {
        return false;
    }
    if filter.min_priority.is_some_and(|p| n.priority < p) {
        return false;
    }
    if let Some(age) = filter.max_age_secs
        && note.created_ms.saturating_add(age.saturating_mul(1000)) < now_ms
    {
        return false;
    }
    if !filter.tags.is_empty() {
        let has = filter.tags.iter().any(|t| {
            let t = t.trim_start_matches('#');
            n.hashtags.iter().chain(&n.tags).any(|h| h == t)
        });
        if !has {
            return false;
        }
    }
    if !filter.sources.is_empty() {
        let from = filter
            .sources
            .iter()
            .any(|s| s == n.source.as_str() || n.origin_author.as_deref() == Some(s.as_str()));
        if !from {
            return false;
        }
    }
    true
}

//! Between ticks (seed §7): the pause the model set, or idle mode — no
//! ticks until a process it named finishes (a question to friends finishes
//! when a friend's answer arrives), a note matching its filter arrives, or
//! its timeout passes. Idle waits on [`CoreEvent`]s and a timer
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

/// Pauses at least this long are said before they start (the `think` tick
/// line, the `run` log): a few seconds pass unnoticed, longer looks hung.
pub const NOTICE_PAUSE: Duration = Duration::from_secs(5);

/// Why the core pauses as long as it does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PauseReason {
    /// The cycle setting the model controls (`cycle_pause`).
    Cycle,
    /// This run's bound (`porfiry think --pause-secs`).
    RunBound,
    /// The radical-pause strategy added `extra`; `capped` when this run's
    /// bound cut it short.
    Strategy {
        /// What the strategy asked for on top of the pause.
        extra: Duration,
        /// The run's bound cut the pause.
        capped: bool,
    },
}

impl std::fmt::Display for PauseReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PauseReason::Cycle => f.write_str("cycle_pause"),
            PauseReason::RunBound => f.write_str("--pause-secs"),
            PauseReason::Strategy {
                extra,
                capped: false,
            } => write!(f, "long-pause strategy, +{} s", extra.as_secs()),
            PauseReason::Strategy {
                extra,
                capped: true,
            } => write!(
                f,
                "long-pause strategy's +{} s capped by --pause-secs",
                extra.as_secs()
            ),
        }
    }
}

/// What the core will do between two ticks, known before it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WaitPlan {
    /// Sleep this long.
    Pause {
        /// How long.
        length: Duration,
        /// Why that long.
        reason: PauseReason,
    },
    /// Idle mode, until a wake condition holds.
    Idle(IdleSettings),
}

impl WaitPlan {
    /// The pause as people read it — `pause 1800 s (long-pause strategy,
    /// +1800 s)`, `idle (timeout 600 s)` — or `None` for a short plain
    /// pause nobody needs told about.
    pub fn notice(&self) -> Option<String> {
        match self {
            WaitPlan::Pause { length, reason } => {
                let capped = matches!(reason, PauseReason::Strategy { capped: true, .. });
                (*length >= NOTICE_PAUSE || capped)
                    .then(|| format!("pause {} s ({reason})", length.as_secs()))
            }
            WaitPlan::Idle(idle) => Some(match idle.timeout_secs {
                Some(t) => format!("idle (timeout {t} s)"),
                None => "idle (no timeout)".to_owned(),
            }),
        }
    }
}

/// The wait `cycle` asks for: idle mode, or the pause — the cycle's, or
/// `bound` (this run's `--pause-secs`) instead — lengthened by `extra`
/// (the radical-pause strategy) and never longer than `bound`.
pub fn plan_wait(cycle: &CycleSettings, bound: Option<u64>, extra: Option<Duration>) -> WaitPlan {
    if let Some(idle) = &cycle.idle {
        return WaitPlan::Idle(idle.clone());
    }
    let base = Duration::from_secs(bound.unwrap_or(cycle.pause_secs));
    let extra = extra.unwrap_or_default();
    let wanted = base + extra;
    let length = bound.map_or(wanted, |b| wanted.min(Duration::from_secs(b)));
    let reason = if !extra.is_zero() {
        PauseReason::Strategy {
            extra,
            capped: length < wanted,
        }
    } else if bound.is_some() {
        PauseReason::RunBound
    } else {
        PauseReason::Cycle
    };
    WaitPlan::Pause { length, reason }
}

/// Waits as `plan` says.
pub async fn wait_between_ticks(
    db: &Db,
    events: &mut broadcast::Receiver<CoreEvent>,
    plan: &WaitPlan,
    clock: &dyn Clock,
) -> Result<Waited, CoreError> {
    let idle = match plan {
        WaitPlan::Pause { length, .. } => {
            tokio::time::sleep(*length).await;
            return Ok(Waited::Paused(*length));
        }
        WaitPlan::Idle(idle) => idle,
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
        // The pause switch is the run loop's business, not a wake condition.
        CoreEvent::ThinkingSwitched => Ok(None),
        CoreEvent::NoteArrived { id } => {
            let since = idle.since_ms;
            let row = db.read(move |s: &Store| s.get::<Note>(id).ok()).await?;
            let is_reply = row.as_ref().is_some_and(|n| n.row.reply_to.is_some());
            if let Some(n) = row.filter(|n| n.updated_ms >= since && note_wakes(idle, n, now)) {
                return Ok(Some(WakeCause::Note(n.id)));
            }
            if is_reply {
                return answered_question(db, idle, now).await;
            }
            Ok(None)
        }
    }
}

/// A reply arrived: a friend may have answered a question (`mesh_interact`)
/// that idle mode waits on. Its answers are gathered now, as the next tick's
/// start would, and a question it finished ends idle mode like any awaited
/// process; otherwise idle would sleep through the answer it waits for.
async fn answered_question(
    db: &Db,
    idle: &IdleSettings,
    now: u64,
) -> Result<Option<WakeCause>, CoreError> {
    if !idle.any_process && idle.processes.is_empty() {
        return Ok(None);
    }
    let finished = db
        .write(move |s: &Store| crate::cognition::mesh_interact::gather_answers(s, now))
        .await??;
    Ok(finished
        .into_iter()
        .find(|id| idle.any_process || idle.processes.contains(id))
        .map(WakeCause::Process))
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
/// source or author, any mention); the core's own notes never match (a friend's core's
/// notes, merged here, do).
pub fn note_matches(filter: &NoteFilter, note: &Stored<Note>, now_ms: u64) -> bool {
    let n = &note.row;
    if n.source == NoteSource::Llm && n.origin_author.is_none() {
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
    if !filter.mentions.is_empty() && !filter.mentions.iter().any(|m| n.mentions.contains(m)) {
        return false;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    const HALF_HOUR: Duration = Duration::from_secs(1_800);

    fn cycle(pause_secs: u64) -> CycleSettings {
        CycleSettings {
            pause_secs,
            ..Default::default()
        }
    }

    #[test]
    fn a_friends_core_note_wakes_an_idle_core_and_its_own_does_not() {
        let filter = NoteFilter {
            tags: vec!["mesh".into()],
            ..Default::default()
        };
        let note = |origin_author: Option<&str>| Stored {
            id: 1,
            created_ms: 1_000,
            updated_ms: 1_000,
            row: Note {
                text: "relays".into(),
                hashtags: vec!["mesh".into()],
                source: NoteSource::Llm,
                origin_author: origin_author.map(str::to_owned),
                ..Default::default()
            },
        };
        assert!(!note_matches(&filter, &note(None), 1_000));
        assert!(note_matches(&filter, &note(Some("12D3KooWfriend")), 1_000));
        let mentioning = NoteFilter {
            mentions: vec!["anna".into()],
            ..filter
        };
        let mut named = note(Some("12D3KooWfriend"));
        assert!(!note_matches(&mentioning, &named, 1_000), "it names nobody");
        named.row.mentions = vec!["anna".into()];
        assert!(note_matches(&mentioning, &named, 1_000));
    }

    #[test]
    fn a_runs_bound_caps_every_pause_strategy_pauses_included() {
        assert_eq!(
            plan_wait(&cycle(30), None, None),
            WaitPlan::Pause {
                length: Duration::from_secs(30),
                reason: PauseReason::Cycle
            }
        );
        let slept = plan_wait(&cycle(30), None, Some(HALF_HOUR));
        assert_eq!(
            slept,
            WaitPlan::Pause {
                length: Duration::from_secs(1_830),
                reason: PauseReason::Strategy {
                    extra: HALF_HOUR,
                    capped: false
                }
            }
        );
        assert_eq!(
            slept.notice().as_deref(),
            Some("pause 1830 s (long-pause strategy, +1800 s)")
        );
        for bound in [0, 2, 60] {
            let WaitPlan::Pause { length, reason } =
                plan_wait(&cycle(30), Some(bound), Some(HALF_HOUR))
            else {
                panic!("no idle")
            };
            assert_eq!(length, Duration::from_secs(bound), "--pause-secs {bound}");
            assert!(matches!(reason, PauseReason::Strategy { capped: true, .. }));
        }
        let capped = plan_wait(&cycle(30), Some(0), Some(HALF_HOUR));
        assert_eq!(
            capped.notice().as_deref(),
            Some("pause 0 s (long-pause strategy's +1800 s capped by --pause-secs)"),
            "a cut strategy pause is said even when short"
        );
        let bound = plan_wait(&cycle(30), Some(2), None);
        assert_eq!(bound.notice(), None, "a short plain pause is not said");
        assert_eq!(
            plan_wait(&cycle(30), Some(9), None).notice().as_deref(),
            Some("pause 9 s (--pause-secs)")
        );
    }

    #[test]
    fn idle_is_planned_as_idle_and_said() {
        let idle = IdleSettings {
            timeout_secs: Some(600),
            ..Default::default()
        };
        let plan = plan_wait(
            &CycleSettings {
                idle: Some(idle.clone()),
                ..Default::default()
            },
            Some(0),
            None,
        );
        assert_eq!(plan, WaitPlan::Idle(idle));
        assert_eq!(plan.notice().as_deref(), Some("idle (timeout 600 s)"));
    }
}

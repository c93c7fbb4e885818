//! What the `process` and `llm` sets run in the background — an external
//! program (`process_start`) or another model's task (`llm_task`) — keyed
//! by its `process_log` row, so `process_stop` can stop either and the row
//! is finished the same way for both.
//!
//! **The running state of a `process_log` row** (decided for the core, since
//! the seed's statuses — ok, warning, error, timeout, offline, close — have
//! no "running"): a job that is still running is `status = 'warning'` with
//! `result` NULL. When it ends the row gets `ok`, `error` or `timeout` with
//! its result text (a job stopped on request gets `close`: the model asked
//! for it, so it has handled it), and [`CoreEvent::ProcessFinished`] is sent.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use porfiry_skills::Language;
use porfiry_skills::cognition::tick::MESH_INTERACT_COMMAND;
use porfiry_storage::{ProcessEntry, ProcessStatus, Store};
use tokio::sync::oneshot;
use tokio::time::Instant;

use super::texts;
use crate::StoreTools;
use porfiry_mesh::events::CoreEvent;

/// The status a running job's row has (with `result` NULL); see the module doc.
pub const RUNNING_STATUS: ProcessStatus = ProcessStatus::Warning;

/// The jobs this node runs now, each with the sender that stops it.
#[derive(Debug, Default)]
pub struct Jobs {
    stops: Mutex<HashMap<i64, oneshot::Sender<()>>>,
}

impl Jobs {
    /// No jobs.
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    fn map(&self) -> MutexGuard<'_, HashMap<i64, oneshot::Sender<()>>> {
        // A panic while holding the lock leaves a plain map behind: still usable.
        self.stops
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Registers a running job; its task awaits the receiver.
    pub fn insert(&self, id: i64) -> oneshot::Receiver<()> {
        let (tx, rx) = oneshot::channel();
        self.map().insert(id, tx);
        rx
    }

    /// Whether row `id` is a job this node runs now.
    pub fn is_running(&self, id: i64) -> bool {
        self.map().contains_key(&id)
    }

    /// Asks job `id` to stop; false when this node runs no such job.
    pub fn stop(&self, id: i64) -> bool {
        match self.map().remove(&id) {
            Some(tx) => {
                // The job may have ended a moment ago; it finishes its row itself.
                let _ = tx.send(());
                true
            }
            None => false,
        }
    }

    fn forget(&self, id: i64) {
        self.map().remove(&id);
    }
}

/// A new running row for a job: name, the command as given, status
/// [`RUNNING_STATUS`], no result.
pub fn running_row(name: &str, command: serde_json::Value, llm_id: Option<String>) -> ProcessEntry {
    ProcessEntry {
        name: name.to_owned(),
        command,
        status: RUNNING_STATUS,
        result: None,
        llm_id,
        ..ProcessEntry::default()
    }
}

/// When a job started: the caller's time (`ctx.now`) and the monotonic
/// instant, so the finish time is `start + elapsed` without reading the
/// wall clock.
#[derive(Debug, Clone, Copy)]
pub struct Started {
    /// `ctx.now` of the starting call, Unix ms.
    pub at_ms: u64,
    /// The same moment on the monotonic clock.
    pub instant: Instant,
}

impl Started {
    /// Now, as the caller's `now_ms` says.
    pub fn at(now_ms: u64) -> Self {
        Self {
            at_ms: now_ms,
            instant: Instant::now(),
        }
    }

    /// `at_ms` plus the time since.
    pub fn now_ms(&self) -> u64 {
        let elapsed = u64::try_from(self.instant.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.at_ms.saturating_add(elapsed)
    }
}

/// Ends job `id`: writes its status and result, forgets it, and tells the
/// core. A write that fails is logged (the row then stays running until the
/// model marks it).
pub async fn finish(
    tools: &StoreTools,
    jobs: &Jobs,
    id: i64,
    status: ProcessStatus,
    result: String,
    started: Started,
) {
    let at = started.now_ms();
    let written = tools
        .db
        .write(move |s| s.process_finish(id, status, &result, at))
        .await;
    match written {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::warn!(id, error = %e, "cannot record a finished job"),
        Err(e) => tracing::warn!(id, error = %e, "cannot record a finished job"),
    }
    jobs.forget(id);
    tools.events.send(CoreEvent::ProcessFinished { id });
}

/// Rows an earlier run of the node left running (it stopped while they
/// ran): nothing will finish them now, so each becomes `error` with a result
/// saying so. Call once when the node starts, before any job does; returns
/// the ids. The core's open questions to friends are not jobs and stay open
/// (see `is_question_to_friends`).
pub fn close_orphans(
    store: &Store,
    now_ms: u64,
    lang: Language,
) -> porfiry_storage::Result<Vec<i64>> {
    let orphans: Vec<i64> = store
        .processes_open()?
        .into_iter()
        .filter(|p| p.row.status == RUNNING_STATUS && p.row.result.is_none())
        .filter(|p| !is_question_to_friends(&p.row))
        .map(|p| p.id)
        .collect();
    let why = texts::process_orphaned(lang);
    store.transaction(|s| {
        for id in &orphans {
            s.process_finish(*id, ProcessStatus::Error, why, now_ms)?;
        }
        Ok(())
    })?;
    Ok(orphans)
}

/// Whether `row` is the core's question to friends (`mesh_interact`): named
/// after the command and naming the note it was posted as. Nothing of this
/// node runs it — the friends answer through the mesh, whether or not the
/// node restarted meanwhile — so a restart leaves it open; the core gathers
/// its answers, or times it out at its own deadline, at the start of each
/// tick. A program that happens to bear the name has no note and is a job.
fn is_question_to_friends(row: &ProcessEntry) -> bool {
    row.name == MESH_INTERACT_COMMAND && row.command.get("note").is_some_and(|n| n.is_i64())
}

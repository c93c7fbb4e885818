//! The phone thinks: the daemon's own cognitive core
//! (`porfiry_agent::cognition`, the tick `porfiry run` runs) over the node's
//! database, its toolsets and its chat model, ticking only when
//! [`ThinkPolicy`] allows — the app's conditions, the per-hour budget — and
//! never while the node is paused (the task ends with the runtime) or a
//! person paused thinking on the family page. Each tick's report goes to
//! the app's [`crate::NodeListener::on_tick`]. The waits are on events (the
//! app's new conditions, the budget's next slot, the core's own wait),
//! never a poll.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use porfiry_agent::cognition::asker::NodeAsker;
use porfiry_agent::cognition::{CognitiveCore, CoreConfig, CoreParts, Trace};
use porfiry_agent::llm::registry_models::RegistryModels;
use porfiry_mesh::node::NodeHandle;
use porfiry_skills::cognition::DEFAULT_CONTEXT_TOKENS;
use porfiry_storage::{ListQuery, LlmEntry, TickRecord};
use porfiry_toolsets::{StoreTools, ToolsetOptions, core_toolsets};
use tokio::sync::{broadcast, oneshot, watch};
use tokio::task::JoinHandle;

use crate::chat_store::now_ms;
use crate::settings::{Checked, ModelSource};
use crate::think_policy::{BUDGET_WINDOW_MS, Hold, ThinkPolicy};
use crate::views::TickView;

/// Tick reports buffered for the app's listener: a tick takes seconds, so a
/// listener that falls 16 behind has stopped listening (it then misses the
/// oldest, and the Mind view still has every tick).
pub const TICK_REPORT_BUFFER: usize = 16;

/// What thinking shares with the node object across pause and resume: the
/// rules with their count, and a signal that the app changed them.
#[derive(Clone)]
pub(crate) struct ThinkShared {
    pub policy: Arc<Mutex<ThinkPolicy>>,
    pub changed: Arc<watch::Sender<()>>,
}

impl ThinkShared {
    pub(crate) fn new(policy: ThinkPolicy) -> Self {
        Self {
            policy: Arc::new(Mutex::new(policy)),
            changed: Arc::new(watch::channel(()).0),
        }
    }

    pub(crate) fn policy(&self) -> std::sync::MutexGuard<'_, ThinkPolicy> {
        self.policy.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The running core's task.
pub(crate) struct Thinking {
    stop: oneshot::Sender<()>,
    task: JoinHandle<()>,
}

impl Thinking {
    /// Stops the core after its current step and waits for it.
    pub(crate) async fn stop(self) {
        let _ = self.stop.send(());
        if let Err(e) = self.task.await {
            tracing::warn!("the thinking task failed: {e}");
        }
    }
}

/// The main model's registry entry for the chat's model `source`: the
/// core opens the same model (a file's engine is shared, not loaded again).
pub(crate) fn main_entry(source: &ModelSource) -> LlmEntry {
    match source {
        ModelSource::File { path } => LlmEntry {
            name: std::path::Path::new(path).file_stem().map_or_else(
                || "phone-model".to_owned(),
                |s| s.to_string_lossy().into_owned(),
            ),
            endpoint: format!("file:{path}"),
            ..Default::default()
        },
        ModelSource::Url { url, model } => LlmEntry {
            name: model.clone(),
            endpoint: url.clone(),
            model: model.clone(),
            ..Default::default()
        },
        ModelSource::Friend { peer_id } => LlmEntry {
            name: format!("friend-model@{peer_id}"),
            endpoint: peer_id.clone(),
            model: "friend-model".into(),
            ..Default::default()
        },
    }
}

/// Starts thinking on `node` with the chat's model `source` (on the
/// current runtime); ticks go to `ticks`.
pub(crate) fn start(
    node: &NodeHandle,
    settings: &Checked,
    source: &ModelSource,
    shared: ThinkShared,
    ticks: broadcast::Sender<TickView>,
) -> Thinking {
    let tools = StoreTools {
        db: node.db().clone(),
        language: settings.language,
        events: node.events(),
        node: Some(node.clone()),
    };
    let models = Arc::new(
        RegistryModels::new(Some(Arc::new(node.streams())))
            .with_http_grammars(settings.constrained.sends_to_http()),
    );
    let options = ToolsetOptions {
        language: settings.language,
        ..ToolsetOptions::default()
    };
    let config = CoreConfig {
        context_tokens: DEFAULT_CONTEXT_TOKENS,
        language: settings.language,
        main: Some(main_entry(source)),
        pause_secs: None,
        constrained: settings.constrained.builds_grammars(),
    };
    let node = node.clone();
    let (stop, stopped) = oneshot::channel();
    let task = tokio::spawn(async move {
        let registry = match core_toolsets(&options, &tools, models.clone()) {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!("thinking is off: the core's toolsets: {e}");
                return;
            }
        };
        let parts = CoreParts {
            db: node.db().clone(),
            registry: Arc::new(registry),
            maker: models,
            clock: Arc::new(porfiry_agent::chat::local_clock()),
            events: node.events(),
            asker: Some(Arc::new(NodeAsker(node.clone()))),
            trace: Trace::off(),
        };
        let core = match CognitiveCore::start(parts, config).await {
            Ok(core) => core,
            Err(e) => {
                tracing::warn!("thinking is off: the core did not start: {e}");
                return;
            }
        };
        count_recent_ticks(&node, &shared).await;
        tokio::select! {
            _ = stopped => {}
            () = think(core, shared, ticks) => {}
        }
    });
    Thinking { stop, task }
}

/// After a restart, the budget counts the ticks of the last hour the
/// database has (pause and resume keep the count in memory).
async fn count_recent_ticks(node: &NodeHandle, shared: &ThinkShared) {
    let now = now_ms();
    if shared.policy().ticks_in_hour(now) > 0 {
        return;
    }
    let query = ListQuery {
        limit: Some(porfiry_storage::limits::MAX_LIST_LIMIT),
        ..Default::default()
    };
    match node.db().read(move |s| s.list::<TickRecord>(&query)).await {
        Ok(Ok(rows)) => {
            let since = now.saturating_sub(BUDGET_WINDOW_MS);
            let mut starts: Vec<u64> = rows
                .iter()
                .map(|r| r.created_ms)
                .filter(|&t| t > since)
                .collect();
            starts.sort_unstable();
            let mut policy = shared.policy();
            for t in starts {
                policy.ticked(t);
            }
        }
        Ok(Err(e)) => tracing::warn!("the last hour's ticks are unknown: {e}"),
        Err(e) => tracing::warn!("the last hour's ticks are unknown: {e}"),
    }
}

/// Ticks while allowed, until the task is dropped.
async fn think(mut core: CognitiveCore, shared: ThinkShared, ticks: broadcast::Sender<TickView>) {
    let mut changed = shared.changed.subscribe();
    loop {
        if let Err(e) = core.until_resumed().await {
            tracing::warn!("thinking stopped: {e}");
            return;
        }
        if !allowed(&shared, &mut changed).await {
            return;
        }
        shared.policy().ticked(now_ms());
        match core.tick().await {
            Ok(done) => {
                let view = TickView::from(&done.report);
                tracing::debug!(tick = view.tick, "the phone thought");
                // No listener now is fine: the Mind view has every tick.
                let _ = ticks.send(view);
            }
            Err(e) => {
                tracing::warn!("thinking stopped: {e}");
                return;
            }
        }
        if let Err(e) = core.wait().await {
            tracing::warn!("thinking stopped: {e}");
            return;
        }
    }
}

/// Waits until the rules allow a tick; `false` when the node is going.
async fn allowed(shared: &ThinkShared, changed: &mut watch::Receiver<()>) -> bool {
    loop {
        let hold = shared.policy().hold(now_ms());
        match hold {
            None => return true,
            Some(Hold::Budget { until_ms }) => {
                let wait = Duration::from_millis(until_ms.saturating_sub(now_ms()));
                tokio::select! {
                    c = changed.changed() => if c.is_err() { return false },
                    () = tokio::time::sleep(wait) => {}
                }
            }
            Some(_) => {
                if changed.changed().await.is_err() {
                    return false;
                }
            }
        }
    }
}

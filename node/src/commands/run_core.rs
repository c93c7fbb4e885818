//! `porfiry run`'s cognitive core: started when a model is configured (the
//! model flags, `--llm-peer`, or a main model in the registry) unless
//! `--no-think`; it shares the node's database, toolsets, events and mesh
//! (its mesh requests go out through the node at once).

use std::sync::Arc;

use clap::Args;
use porfiry_skills::Language;
use porfiry_skills::cognition::DEFAULT_CONTEXT_TOKENS;
use porfiry_storage::{LlmEntry, Store};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::commands::llm_flags::OptionalLlmArgs;
use crate::commands::model_choice::LEARNED_MODEL_NAME;
use crate::commands::offload_flags::{ModelChoice, OffloadPlan};
use crate::commands::think::flags_model;
use porfiry_agent::cognition::asker::NodeAsker;
use porfiry_agent::cognition::{CognitiveCore, CoreConfig, CoreError, CoreParts, Trace};
use porfiry_agent::llm::local::EngineOptions;
use porfiry_agent::llm::registry_models::RegistryModels;
use porfiry_mesh::node::NodeHandle;
use porfiry_skills::ToolsetRegistry;
use porfiry_toolsets::{StoreTools, ToolsetError, ToolsetOptions, core_toolsets};

/// `porfiry run`'s flags for the core.
#[derive(Debug, Clone, Args)]
pub struct ThinkFlags {
    /// Do not run the cognitive core, even with a model configured.
    #[arg(long)]
    pub no_think: bool,
    /// The core's prompt budget in tokens.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_CONTEXT_TOKENS)]
    pub context_tokens: usize,
}

impl Default for ThinkFlags {
    fn default() -> Self {
        Self {
            no_think: false,
            context_tokens: DEFAULT_CONTEXT_TOKENS,
        }
    }
}

/// The running core; [`CoreTask::stop`] ends it.
pub struct CoreTask {
    stop: oneshot::Sender<()>,
    task: JoinHandle<Result<(), CoreError>>,
}

impl CoreTask {
    /// Stops the core after its current step and waits for it.
    pub async fn stop(self) {
        let _ = self.stop.send(());
        match self.task.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!("cognitive core stopped: {e}"),
            Err(e) => tracing::warn!("cognitive core task failed: {e}"),
        }
    }
}

/// The node's one toolset registry — the core dispatches through all of
/// it, the API's chat sessions through `porfiry_toolsets::CHAT_SETS` of the same objects —
/// and the models its `llm` set (and the core) builds, which send reply
/// grammars to HTTP servers when `send_grammar` (`--constrained on`).
pub fn node_registry(
    node: &NodeHandle,
    language: Language,
    engine: &EngineOptions,
    send_grammar: bool,
) -> Result<(ToolsetRegistry, Arc<RegistryModels>), ToolsetError> {
    let tools = StoreTools {
        db: node.db().clone(),
        language,
        events: node.events(),
        node: Some(node.clone()),
    };
    let models = Arc::new(
        RegistryModels::new(Some(Arc::new(node.streams())))
            .with_engine_options(engine.clone())
            .with_http_grammars(send_grammar),
    );
    let options = ToolsetOptions {
        language,
        ..ToolsetOptions::default()
    };
    let registry = core_toolsets(&options, &tools, models.clone())?;
    Ok((registry, models))
}

/// Starts the core on `node` with `registry` if a model is configured;
/// `None` (logged) when `--no-think` or no model. `Err` only when the core
/// cannot start.
pub async fn start_core(
    flags: &ThinkFlags,
    llm: &OptionalLlmArgs,
    plan: &OffloadPlan,
    node: &NodeHandle,
    (registry, models): (ToolsetRegistry, Arc<RegistryModels>),
    language: Language,
) -> anyhow::Result<Option<(CoreTask, String)>> {
    if flags.no_think {
        return Ok(None);
    }
    let main = match (&plan.model, flags_model(llm)?) {
        (_, Some(entry)) => Some(entry),
        (ModelChoice::Peer(peer), None) => Some(LlmEntry {
            name: format!("{LEARNED_MODEL_NAME}@{peer}"),
            endpoint: peer.to_string(),
            ..Default::default()
        }),
        (ModelChoice::Registry(entry), None) => Some(entry.clone()),
        _ => None,
    };
    let db = node.db().clone();
    let model_name = match &main {
        Some(entry) => entry.name.clone(),
        None => match db.read(|s: &Store| s.llm_main()).await?? {
            Some(row) => row.row.name,
            None => {
                tracing::info!(
                    "cognitive core off: no model (give --llm-url/--llm-model, or `porfiry llm add … --main`)"
                );
                return Ok(None);
            }
        },
    };
    let parts = CoreParts {
        db,
        registry: Arc::new(registry),
        maker: models,
        clock: Arc::new(porfiry_agent::chat::local_clock()),
        events: node.events(),
        asker: Some(Arc::new(NodeAsker(node.clone()))),
        trace: Trace::off(),
    };
    let config = CoreConfig {
        context_tokens: flags.context_tokens,
        language,
        main,
        pause_secs: None,
        constrained: plan.constrained.builds_grammars(),
    };
    let mut core = CognitiveCore::start(parts, config).await?;
    let (stop, stopped) = oneshot::channel();
    let task = tokio::spawn(async move {
        core.run(None, async move {
            let _ = stopped.await;
        })
        .await
    });
    Ok(Some((CoreTask { stop, task }, model_name)))
}

//! [`Running`]: the parts of a started node — the mesh node (its own
//! thread), the invitation service, the agent — started together from
//! checked settings and stopped together, the node's database committed
//! and its lock released when [`Running::stop`] returns.

use std::sync::Arc;

use porfiry_agent::llm::OpenAiClient;
use porfiry_agent::llm::local::{EngineOptions, open_model_file};
use porfiry_agent::llm::registry_models::RegistryModels;
use porfiry_agent::{ChatConfig, ChatEngine, LlmTarget};
use porfiry_api::adapters::ChatAgent;
use porfiry_mesh::invite::InviteService;
use porfiry_mesh::net::LinksWatch;
use porfiry_mesh::node::{Node, NodeConfig, NodeHandle, NodeJoin};
use porfiry_offload::{FriendLlm, FriendLlmConfig, OffloadOpener};
use porfiry_skills::llm::Llm;
use porfiry_toolsets::{CHAT_SETS, StoreTools, ToolsetOptions, core_toolsets};

use crate::app_tools::AppToolset;
use crate::chat::Chats;
use crate::error::PorfiryError;
use crate::settings::{Checked, ModelSource};
use crate::thinking::{self, TICK_REPORT_BUFFER, ThinkShared, Thinking};
use crate::views::TickView;
use tokio::sync::broadcast;

/// A started node.
pub(crate) struct Running {
    pub node: NodeHandle,
    join: NodeJoin,
    invites: Option<InviteService>,
    /// The chat model, kept to rebuild the chats when the app adds a
    /// toolset (a model file is not loaded twice).
    llm: Option<Arc<dyn Llm>>,
    pub chats: Option<Arc<Chats>>,
    /// The cognitive core, when a model is set and the budget is not 0.
    thinking: Option<Thinking>,
    /// Its tick reports, for the app's listener.
    pub ticks: broadcast::Sender<TickView>,
    pub links: LinksWatch,
    /// Tasks that forward the node's events to the app's listener.
    pub forwarders: Vec<tokio::task::JoinHandle<()>>,
}

impl Running {
    /// Starts the node of `settings` on the current runtime, its chat
    /// offering the app's toolsets `app_sets` too.
    pub(crate) fn start(
        settings: &Checked,
        app_sets: &[AppToolset],
        think: &ThinkShared,
    ) -> Result<Running, PorfiryError> {
        let mut config = NodeConfig::new(
            settings.dir.clone(),
            settings.profile,
            settings.listen.clone(),
        );
        let links = LinksWatch::default();
        config.reach.links_watch = links.clone();
        // A phone listens nowhere: one bound port to dial from lets hole
        // punching make its relayed links direct.
        config.reach.punch_port = true;
        let (node, join) = Node::spawn(config).map_err(|e| PorfiryError::Start(e.to_string()))?;
        // Without it the node runs; it just takes no invitations.
        let invites = InviteService::start(&node)
            .inspect_err(|e| tracing::warn!("invitations are off: {e}"))
            .ok();
        let agent = settings
            .model
            .as_ref()
            .map(|source| {
                let llm = open_llm(source, &node, settings)?;
                let chats = chats_over(Arc::clone(&llm), &node, settings, app_sets)?;
                Ok((llm, Arc::new(chats)))
            })
            .transpose();
        let (llm, chats) = match agent {
            Ok(Some((llm, chats))) => (Some(llm), Some(chats)),
            Ok(None) => (None, None),
            Err(e) => {
                node.shutdown();
                return Err(e);
            }
        };
        let (ticks, _) = broadcast::channel(TICK_REPORT_BUFFER);
        let thinking = match &settings.model {
            Some(source) if settings.think_ticks_per_hour > 0 => Some(thinking::start(
                &node,
                settings,
                source,
                think.clone(),
                ticks.clone(),
            )),
            _ => None,
        };
        Ok(Running {
            node,
            join,
            invites,
            llm,
            chats,
            thinking,
            ticks,
            links,
            forwarders: Vec::new(),
        })
    }

    /// Stops everything; the database is committed and closed on return.
    pub(crate) async fn stop(self) -> Result<(), PorfiryError> {
        for f in &self.forwarders {
            f.abort();
        }
        if let Some(invites) = self.invites {
            invites.stop();
        }
        if let Some(thinking) = self.thinking {
            thinking.stop().await;
        }
        drop(self.chats);
        self.node.shutdown();
        self.join
            .await
            .map(|_| ())
            .map_err(|e| PorfiryError::Internal(format!("the node stopped with an error: {e}")))
    }
}

impl Running {
    /// Whether the cognitive core runs.
    pub(crate) fn thinks(&self) -> bool {
        self.thinking.is_some()
    }

    /// Makes the chats again over the same model, offering `app_sets`
    /// (sessions start afresh in memory; their histories are in the
    /// database and come back at their next turn).
    pub(crate) fn rebuild_chats(
        &mut self,
        settings: &Checked,
        app_sets: &[AppToolset],
    ) -> Result<(), PorfiryError> {
        if let Some(llm) = &self.llm {
            let chats = chats_over(Arc::clone(llm), &self.node, settings, app_sets)?;
            self.chats = Some(Arc::new(chats));
        }
        Ok(())
    }
}

/// The model `source` names.
fn open_llm(
    source: &ModelSource,
    node: &NodeHandle,
    settings: &Checked,
) -> Result<Arc<dyn Llm>, PorfiryError> {
    let model = |e: String| PorfiryError::Config(e);
    Ok(match source {
        ModelSource::Url { url, model: name } => Arc::new(
            OpenAiClient::new(LlmTarget {
                send_grammar: settings.constrained.sends_to_http(),
                ..LlmTarget::new(url.clone(), name.clone())
            })
            .map_err(|e| model(e.to_string()))?,
        ),
        ModelSource::Friend { peer_id } => {
            let peer = peer_id
                .parse()
                .map_err(|e| model(format!("model friend {peer_id}: {e}")))?;
            let opener: Arc<dyn OffloadOpener> = Arc::new(node.streams());
            Arc::new(FriendLlm::new(
                opener,
                format!("friend-model@{peer_id}"),
                vec![peer],
                FriendLlmConfig::default(),
            ))
        }
        ModelSource::File { path } => local_model(path)?,
    })
}

/// The chats over `llm`: the core tools, the skills, the node's chat sets
/// (the media set only when the app asked for it), and the app's own
/// toolsets.
fn chats_over(
    llm: Arc<dyn Llm>,
    node: &NodeHandle,
    settings: &Checked,
    app_sets: &[AppToolset],
) -> Result<Chats, PorfiryError> {
    let model = |e: String| PorfiryError::Config(e);
    let name = llm.model_name();
    // As `porfiry chat`: the grammar is built for every mode but off; the
    // engine applies it, a server is sent it only with `on`.
    let config = ChatConfig {
        skills_dir: Some(settings.dir.skills_dir()),
        language: settings.language,
        toolset_idle: settings.toolset_idle,
        constrained: settings.constrained.builds_grammars(),
        ..ChatConfig::new(LlmTarget::new(String::new(), name.clone()))
    };
    // The node's chat sets over its database, as the API and the terminal
    // have them; the media set only when the app asks for one.
    let tools = StoreTools {
        db: node.db().clone(),
        language: settings.language,
        events: node.events(),
        node: Some(node.clone()),
    };
    let models = Arc::new(RegistryModels::new(Some(Arc::new(node.streams()))));
    let options = ToolsetOptions {
        language: settings.language,
        media_catalog: settings.media_catalog.clone().unwrap_or_default(),
    };
    let all = core_toolsets(&options, &tools, models).map_err(|e| model(e.to_string()))?;
    let wanted: Vec<&str> = CHAT_SETS
        .iter()
        .copied()
        .filter(|set| *set != "media" || settings.media_catalog.is_some())
        .collect();
    let mut toolsets = all.only(&wanted);
    for set in app_sets {
        toolsets
            .register(set.clone())
            .map_err(|e| PorfiryError::BadInput(format!("toolset {}: {e}", set.set_name())))?;
    }
    let engine =
        ChatEngine::with_toolsets(&config, llm, toolsets).map_err(|e| model(e.to_string()))?;
    Ok(Chats::new(
        Arc::new(ChatAgent::new(Arc::new(engine), name)),
        node.clone(),
    ))
}

/// A GGUF file through the embedded engine; a build without it (feature
/// `engine` off) answers that it has none, naming the file.
fn local_model(path: &str) -> Result<Arc<dyn Llm>, PorfiryError> {
    let engine = open_model_file(std::path::Path::new(path), &EngineOptions::default())
        .map_err(|e| PorfiryError::Config(e.to_string()))?;
    Ok(engine)
}

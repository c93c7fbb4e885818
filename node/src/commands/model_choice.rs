//! `porfiry run`'s model and offload service, from the checked flags
//! ([`OffloadPlan`]): the model the agent talks to — the node's own server
//! (`--llm-url`), a local GGUF run by the embedded engine (`--model-file`),
//! one friend's (`--llm-peer`), the registry's main model, or whichever friend
//! advertises one (none of those) — and, with `--offload`, the service that
//! lends the node's own model (server or file) to friends allowed to use it.

use std::collections::HashSet;
use std::sync::Arc;
use tokio::time::Instant;

use porfiry_mesh::PeerId;
use porfiry_skills::llm::{BoxFuture, Completion, DeltaStream, Llm, LlmError, ModelRequest};

use crate::commands::offload_flags::{ModelChoice, OffloadPlan};
use porfiry_agent::llm::OpenAiClient;
use porfiry_agent::llm::local::open_model_file;
use porfiry_agent::llm::registry_models::RegistryModels;
use porfiry_mesh::net::MeshError;
use porfiry_mesh::node::NodeHandle;
use porfiry_offload::{
    FriendLlm, FriendLlmConfig, Offer, OffloadOpener, OffloadPermissions, OffloadServer, Recent,
    ServerLimits, rank, serve_incoming,
};

/// The model name reported while no friend has advertised one yet.
pub const LEARNED_MODEL_NAME: &str = "friend-model";

/// The agent's model for `plan`. Without model flags it is the friends'
/// advertised models, looked up on every call (an error saying how to get a
/// model while no friend offers one).
pub fn agent_model(plan: &OffloadPlan, node: &NodeHandle) -> Result<Arc<dyn Llm>, LlmError> {
    let opener: Arc<dyn OffloadOpener> = Arc::new(node.streams());
    Ok(match &plan.model {
        ModelChoice::Url(target) => Arc::new(OpenAiClient::new(target.clone())?),
        ModelChoice::File(path) => {
            open_model_file(path, &plan.engine).map_err(|e| LlmError::NoModel(e.to_string()))?
        }
        ModelChoice::Registry(entry) => RegistryModels::new(Some(opener))
            .with_engine_options(plan.engine.clone())
            .with_http_grammars(plan.constrained.sends_to_http())
            .model(entry)?,
        // The model's name does not travel (the friend serves what it
        // serves); it only labels status output.
        ModelChoice::Peer(peer) => Arc::new(FriendLlm::new(
            opener,
            format!("{LEARNED_MODEL_NAME}@{peer}"),
            vec![*peer],
            FriendLlmConfig::default(),
        )),
        ModelChoice::Learned => Arc::new(LearnedLlm {
            node: node.clone(),
            opener,
        }),
    })
}

/// With `--offload`: serves the node's own model to friends allowed to use it,
/// one task per stream, until the mesh stops. `None` without `--offload`.
pub fn start_offload_service(
    plan: &OffloadPlan,
    node: &NodeHandle,
) -> Result<Option<tokio::task::JoinHandle<()>>, OffloadStartError> {
    if !plan.settings.enabled || !plan.model.is_own() {
        return Ok(None);
    }
    // The same model the agent uses (a file's engine is shared: one load).
    let upstream = agent_model(plan, node)?;
    let model = upstream.model_name();
    let limits = ServerLimits {
        global_slots: plan.settings.capacity as usize,
        per_peer_slots: plan.settings.per_friend as usize,
        ..ServerLimits::default()
    };
    let permissions: Arc<dyn OffloadPermissions> = Arc::new(FriendPermission(node.clone()));
    let server = OffloadServer::new(upstream, permissions, limits);
    let incoming = node.streams().accept()?;
    tracing::info!(
        %model,
        capacity = limits.global_slots,
        per_friend = limits.per_peer_slots,
        "offering the model to friends allowed to offload"
    );
    Ok(Some(tokio::spawn(serve_incoming(server, incoming))))
}

/// Why the offload service could not start.
#[derive(Debug, thiserror::Error)]
pub enum OffloadStartError {
    /// The model settings are unusable.
    #[error(transparent)]
    Model(#[from] LlmError),
    /// The mesh's offload streams could not be taken.
    #[error(transparent)]
    Mesh(#[from] MeshError),
}

/// The friend's `allow_offload` flag, read from the database on every
/// request, so `porfiry friends offload PEER off` counts at once.
struct FriendPermission(NodeHandle);

impl OffloadPermissions for FriendPermission {
    fn allows<'a>(&'a self, peer: &'a PeerId) -> BoxFuture<'a, bool> {
        Box::pin(async move {
            match self.0.may_offload(*peer).await {
                Ok(allowed) => allowed,
                Err(e) => {
                    tracing::warn!(%peer, error = %e, "cannot read the offload permission; refused");
                    false
                }
            }
        })
    }
}

/// The offers friends advertise, and which friends are connected now.
async fn offers(node: &NodeHandle) -> Result<(Vec<Offer>, HashSet<String>), LlmError> {
    let other = |e: porfiry_mesh::node::NodeError| LlmError::Other(e.to_string());
    let candidates = node.offload_candidates().await.map_err(other)?;
    let connected = node
        .status()
        .await
        .map_err(other)?
        .friends
        .into_iter()
        .filter(|f| f.connected)
        .map(|f| f.peer_id)
        .collect();
    let offers = candidates
        .into_iter()
        .filter_map(|c| {
            Some(Offer {
                peer: c.peer.parse().ok()?,
                model: c.model,
                concurrency: c.concurrency,
            })
        })
        .collect();
    Ok((offers, connected))
}

/// No model flags: the friends' advertised models, ranked per call (friends'
/// advertisements arrive and change while the node runs): reachable first,
/// then least busy; failover between them before the first token.
struct LearnedLlm {
    node: NodeHandle,
    opener: Arc<dyn OffloadOpener>,
}

impl LearnedLlm {
    async fn friend(&self) -> Result<FriendLlm, LlmError> {
        let (offers, connected) = offers(&self.node).await?;
        let reachable = |p: &PeerId| connected.contains(&p.to_string());
        let Some((model, peers)) =
            rank(&offers, None, reachable, &Recent::default(), Instant::now())
        else {
            return Err(LlmError::NoModel(
                "no model is configured and no friend offers one yet: give --llm-url and \
                 --llm-model (or PORFIRY_LLM_URL / PORFIRY_LLM_MODEL), or --llm-peer PEER, or \
                 ask a friend with a model to run with --offload and `porfiry friends offload \
                 <your id> on`"
                    .to_owned(),
            ));
        };
        Ok(FriendLlm::new(
            self.opener.clone(),
            model,
            peers,
            FriendLlmConfig::default(),
        ))
    }
}

impl Llm for LearnedLlm {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<Completion, LlmError>> {
        Box::pin(async move { self.friend().await?.complete(request).await })
    }

    fn stream<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<DeltaStream, LlmError>> {
        Box::pin(async move { self.friend().await?.stream(request).await })
    }

    fn model_name(&self) -> String {
        LEARNED_MODEL_NAME.to_owned()
    }
}

//! A model from home: [`PorfiryNode::pull_model`] fetches a model file a
//! friend's node shares (`porfiry run --share-models` there, this phone
//! allowed with `porfiry friends models PHONE on`) into the node's models
//! folder, verified, and registers it — the main model when the node has
//! none. Progress reaches a [`ModelPullListener`]; while the app says the
//! connection is metered (`set_conditions(…, metered: true)`) the pull
//! waits, and goes on when it is not. A pull cut short (the app paused,
//! the link lost) keeps its partial file: the same call later resumes it.
//! The transfer itself is `porfiry_model_share`'s.

use std::ops::ControlFlow;
use std::sync::Arc;

use porfiry_mesh::friends::resolve_friend;
use porfiry_model_share::{
    ModelPullError, PullConditions, PullEvent, PullTarget, Registered, pull_from_friend,
    register_pulled,
};
use porfiry_skills::llm::BoxFuture;

use crate::error::PorfiryError;
use crate::node::PorfiryNode;
use crate::thinking::ThinkShared;

/// Tries at reaching the friend before a pull gives up: just after start,
/// resume or a change of the friend's settings the link is being
/// (re)made — a dial and its backoff take a few seconds on a phone.
pub const LINK_ATTEMPTS: u32 = 20;

/// Between two of those tries: 20 × 0.5 s ≈ the 10 s a dial with its first
/// backoffs takes, short enough for a person waiting on a progress bar.
pub const LINK_RETRY: std::time::Duration = std::time::Duration::from_millis(500);

/// Hears one model pull as it goes. Called from the node's thread: return
/// quickly.
#[uniffi::export(with_foreign)]
pub trait ModelPullListener: Send + Sync {
    /// `received` of `total` bytes are here (a resumed pull starts above 0).
    fn on_progress(&self, received: u64, total: u64);
    /// The pull waits; `reason` says why (`metered`).
    fn on_held(&self, reason: String);
}

/// A model pulled and kept.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct PulledModel {
    /// Its registry name (as the friend listed it).
    pub name: String,
    /// Where the file is.
    pub path: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// Its SHA-256, hex, checked against the friend's signed list.
    pub sha256: String,
    /// Bytes already here when this pull started (a resumed pull).
    pub resumed_from: u64,
    /// It was here already, whole and verified; nothing was fetched.
    pub already_here: bool,
    /// It is the node's main model now.
    pub main: bool,
    /// Why it was not registered (another model has that name), if so.
    pub not_registered: Option<String>,
}

/// The app's word on the connection, as the thinking rules hold it.
struct AppConditions(ThinkShared);

impl PullConditions for AppConditions {
    fn metered(&self) -> bool {
        self.0.policy().conditions().is_some_and(|c| c.metered)
    }

    fn changed(&self) -> BoxFuture<'_, ()> {
        // Subscribed now, so a change before the first poll counts.
        let mut seen = self.0.changed.subscribe();
        Box::pin(async move {
            let _ = seen.changed().await;
        })
    }
}

fn pull_error(e: ModelPullError) -> PorfiryError {
    match e {
        ModelPullError::NotShared(_)
        | ModelPullError::NotPermitted { .. }
        | ModelPullError::Unknown { .. } => PorfiryError::NotFound(e.to_string()),
        ModelPullError::NoRoom { .. } | ModelPullError::Exists(_) => {
            PorfiryError::BadInput(e.to_string())
        }
        other => PorfiryError::Internal(other.to_string()),
    }
}

#[uniffi::export(async_runtime = "tokio")]
impl PorfiryNode {
    /// Pulls the model `name` from `friend` (peer id or name) into the
    /// node's models folder and registers it (see the module comment).
    /// Refused, with nothing written, when the friend does not share its
    /// models or not with this node, or lacks the name, or the disk lacks
    /// room; a corrupted transfer is deleted and reported.
    pub async fn pull_model(
        &self,
        name: String,
        friend: String,
        listener: Arc<dyn ModelPullListener>,
    ) -> Result<PulledModel, PorfiryError> {
        let conditions = AppConditions(self.think().clone());
        self.on_node(move |node| async move {
            let dir = node
                .data_dir()
                .map(|d| d.join(porfiry_mesh::data_dir::MODELS_DIR))
                .ok_or_else(|| PorfiryError::Internal("the node has no data dir".into()))?;
            let peer = node
                .db()
                .read(move |s| resolve_friend(s, &friend))
                .await
                .map_err(|e| PorfiryError::Internal(e.to_string()))?
                .map_err(|e| PorfiryError::NotFound(e.to_string()))?;
            let target = PullTarget {
                friend: peer,
                name: name.clone(),
                models_dir: dir,
            };
            let mut on_event = |event: PullEvent| {
                match event {
                    PullEvent::Started { bytes, from } => listener.on_progress(from, bytes),
                    PullEvent::Received { at, total } => listener.on_progress(at, total),
                    PullEvent::Held => listener.on_held("metered".into()),
                }
                ControlFlow::Continue(())
            };
            let streams = node.streams();
            let mut attempt = 1;
            let pulled = loop {
                match pull_from_friend(&streams, &target, &conditions, &mut on_event).await {
                    Err(ModelPullError::Unreachable { .. }) if attempt < LINK_ATTEMPTS => {
                        attempt += 1;
                        tokio::time::sleep(LINK_RETRY).await;
                    }
                    other => break other.map_err(pull_error)?,
                }
            };
            let (path, from) = (pulled.path.clone(), peer.to_string());
            let registered_name = name.clone();
            let registered = node
                .db()
                .write(move |s| {
                    register_pulled(
                        s,
                        &registered_name,
                        &path,
                        &from,
                        crate::chat_store::now_ms(),
                    )
                })
                .await
                .map_err(|e| PorfiryError::Internal(e.to_string()))?
                .map_err(|e| PorfiryError::Internal(e.to_string()))?;
            let (main, not_registered) = match registered {
                Registered::Added { main } => (main, None),
                Registered::AlreadyThere => (false, None),
                Registered::NameTaken { endpoint } => (
                    false,
                    Some(format!(
                        "a model named {name} is already registered at {endpoint}"
                    )),
                ),
            };
            Ok(PulledModel {
                name,
                path: pulled.path.display().to_string(),
                bytes: pulled.model.bytes,
                sha256: pulled.model.sha256,
                resumed_from: pulled.resumed_from,
                already_here: pulled.already_here,
                main,
                not_registered,
            })
        })
        .await
    }
}

//! [`RegistryModels`]: an `Arc<dyn Llm>` for any row of `llm_registry`, so
//! the cognitive core and its `llm_*` commands can call the model a row
//! names. An endpoint that is a URL (`http://…`, `https://…`) is an
//! OpenAI-compatible server, called with the row's stored settings
//! (temperature, presence_penalty, timeouts, the API key's env var); an
//! endpoint that is a friend's peer id (optionally written `peer:<id>`) is
//! that friend's model over offload, which needs the mesh's stream opener;
//! an endpoint `file:<path>` is a local GGUF run by the embedded engine,
//! loaded once per process however many rows or callers name it.

use std::sync::Arc;

use porfiry_mesh::PeerId;
use porfiry_storage::LlmEntry;

use crate::llm::constrained::Backend;
use crate::llm::local::{EngineOptions, endpoint_file, open_model_file};
use crate::llm::{Llm, LlmError, LlmTarget, OpenAiClient};
use porfiry_offload::{FriendLlm, FriendLlmConfig, OffloadOpener};

/// The prefix a peer-id endpoint may carry (`peer:12D3…`), as audiences write it.
pub const PEER_ENDPOINT_PREFIX: &str = "peer:";

/// Where a registry row's model is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// An OpenAI-compatible server at this base URL.
    Url(String),
    /// A friend's node, over offload.
    Peer(PeerId),
    /// A local GGUF file, run by the embedded engine.
    File(std::path::PathBuf),
}

impl Endpoint {
    /// The kind of backend it is, for `--constrained`.
    pub fn backend(&self) -> Backend {
        match self {
            Endpoint::Url(_) => Backend::Http,
            Endpoint::Peer(_) => Backend::Friend,
            Endpoint::File(_) => Backend::Engine,
        }
    }
}

/// Reads a row's `endpoint`: a URL or a peer id; anything else is refused
/// with what was expected.
pub fn parse_endpoint(endpoint: &str) -> Result<Endpoint, LlmError> {
    let endpoint = endpoint.trim();
    if let Some(path) = endpoint_file(endpoint) {
        return Ok(Endpoint::File(path));
    }
    let lower = endpoint.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        return Ok(Endpoint::Url(endpoint.to_owned()));
    }
    let id = endpoint
        .strip_prefix(PEER_ENDPOINT_PREFIX)
        .unwrap_or(endpoint);
    id.parse::<PeerId>()
        .map(Endpoint::Peer)
        .map_err(|_| LlmError::InvalidBaseUrl {
            url: endpoint.to_owned(),
            reason: "expected an http(s):// URL of an OpenAI-compatible server, a friend's \
                     peer id (12D3…) or file:<path> of a GGUF model"
                .to_owned(),
        })
}

/// Builds the model of a registry row. Cheap to share; holds the offload
/// opener when the mesh runs in this process.
#[derive(Clone, Default)]
pub struct RegistryModels {
    opener: Option<Arc<dyn OffloadOpener>>,
    engine: EngineOptions,
    send_grammar: bool,
}

impl std::fmt::Debug for RegistryModels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistryModels")
            .field("offload", &self.opener.is_some())
            .field("send_grammar", &self.send_grammar)
            .finish()
    }
}

impl RegistryModels {
    /// Models for registry rows; `opener` reaches friends' models (`None`
    /// without a mesh: peer endpoints are then refused).
    pub fn new(opener: Option<Arc<dyn OffloadOpener>>) -> Self {
        Self {
            opener,
            engine: EngineOptions::default(),
            send_grammar: false,
        }
    }

    /// With these settings for the local models it opens (`file:` rows).
    pub fn with_engine_options(mut self, engine: EngineOptions) -> Self {
        self.engine = engine;
        self
    }

    /// Whether the servers of URL rows are sent a request's grammar
    /// ([`LlmTarget::send_grammar`]: `--constrained on`).
    pub fn with_http_grammars(mut self, send: bool) -> Self {
        self.send_grammar = send;
        self
    }

    /// The model `entry` names, with its stored call settings. Nothing is
    /// sent yet; a bad endpoint or setting is an error now.
    pub fn model(&self, entry: &LlmEntry) -> Result<Arc<dyn Llm>, LlmError> {
        match parse_endpoint(&entry.endpoint)? {
            Endpoint::Url(_) => {
                let target = LlmTarget {
                    send_grammar: self.send_grammar,
                    ..LlmTarget::from_entry(entry).with_api_key_from_env()
                };
                Ok(Arc::new(OpenAiClient::new(target)?))
            }
            Endpoint::File(path) => {
                // The row's template, where it names one, wins over the
                // process-wide flag: it was set for this file.
                let options = EngineOptions {
                    chat_template: entry
                        .config
                        .chat_template
                        .clone()
                        .or_else(|| self.engine.chat_template.clone()),
                    ..self.engine.clone()
                };
                let engine = open_model_file(&path, &options)
                    .map_err(|e| LlmError::NoModel(e.to_string()))?;
                Ok(engine)
            }
            Endpoint::Peer(peer) => {
                let Some(opener) = &self.opener else {
                    return Err(LlmError::NoModel(format!(
                        "model {:?} is a friend's ({peer}) and needs the mesh: start the node \
                         with `porfiry run` to use it",
                        entry.name
                    )));
                };
                Ok(Arc::new(FriendLlm::new(
                    opener.clone(),
                    format!("{}@{peer}", entry.model),
                    vec![peer],
                    FriendLlmConfig::default(),
                )))
            }
        }
    }
}

impl porfiry_toolsets::RowModels for RegistryModels {
    fn model(&self, entry: &LlmEntry) -> Result<Arc<dyn Llm>, LlmError> {
        RegistryModels::model(self, entry)
    }
}

#[cfg(test)]
mod tests;

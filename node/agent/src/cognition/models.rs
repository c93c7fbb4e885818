//! Which models a tick talks to: the main model (the flags' model, or the
//! registry's main one, or — for a few ticks after the "switch model"
//! mechanism — another registry model) with any sampling the "LLM reflex
//! tuning" mechanism raised, and the validators. A [`ModelMaker`] turns a
//! registry row into a client; the node's is `RegistryModels`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use porfiry_skills::llm::{Llm, LlmError};
use porfiry_storage::LlmEntry;

use crate::llm::registry_models::RegistryModels;

/// Builds a client for a registry row.
pub trait ModelMaker: Send + Sync {
    /// A client for `entry` (URL endpoint or a friend's node).
    fn make(&self, entry: &LlmEntry) -> Result<Arc<dyn Llm>, LlmError>;
}

impl ModelMaker for RegistryModels {
    fn make(&self, entry: &LlmEntry) -> Result<Arc<dyn Llm>, LlmError> {
        self.model(entry)
    }
}

/// A named model of this tick.
#[derive(Clone)]
pub struct Voice {
    /// Its registry name (or the flags' model name).
    pub name: String,
    /// The client.
    pub llm: Arc<dyn Llm>,
}

impl std::fmt::Debug for Voice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Voice").field("name", &self.name).finish()
    }
}

/// Clients built once per distinct row (endpoint, model and call settings),
/// so a tick does not open a new HTTP client for every call while a tuned
/// or switched model still gets its own.
pub struct ModelCache {
    maker: Arc<dyn ModelMaker>,
    built: Mutex<HashMap<String, Arc<dyn Llm>>>,
}

/// Distinct clients kept: the main model, a tuned copy, a few validators
/// and switch targets; past this the cache starts over (rebuilding is cheap).
const MAX_CACHED_CLIENTS: usize = 32;

impl ModelCache {
    /// An empty cache over `maker`.
    pub fn new(maker: Arc<dyn ModelMaker>) -> Self {
        Self {
            maker,
            built: Mutex::new(HashMap::new()),
        }
    }

    /// The client for `entry`, built on first use.
    pub fn voice(&self, entry: &LlmEntry) -> Result<Voice, LlmError> {
        let key = format!(
            "{}\u{0}{}\u{0}{}\u{0}{}",
            entry.name,
            entry.endpoint,
            entry.model,
            serde_json::to_string(&entry.config).unwrap_or_default()
        );
        let mut built = self.built.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(llm) = built.get(&key) {
            return Ok(Voice {
                name: entry.name.clone(),
                llm: llm.clone(),
            });
        }
        let llm = self.maker.make(entry)?;
        if built.len() >= MAX_CACHED_CLIENTS {
            built.clear();
        }
        built.insert(key, llm.clone());
        Ok(Voice {
            name: entry.name.clone(),
            llm,
        })
    }
}

//! What the `llm` set needs from the node's model backends: the model that a
//! row of `llm_registry` names, for `llm_task` and `llm_ask`. The backends
//! themselves (HTTP clients, a friend's model over offload, the embedded
//! engine) live above this crate, in `porfiry-agent`'s `RegistryModels`,
//! which implements [`RowModels`]; the sets only ask.

use std::sync::Arc;

use porfiry_skills::llm::{Llm, LlmError};
use porfiry_storage::LlmEntry;

/// Builds the model a registry row names.
pub trait RowModels: Send + Sync {
    /// The model of `entry`, or why it cannot be reached (a malformed
    /// endpoint, a friend's model with no mesh in this process, …).
    fn model(&self, entry: &LlmEntry) -> Result<Arc<dyn Llm>, LlmError>;
}

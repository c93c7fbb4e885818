//! [`PorfiryError`]: every failure a phone app sees, one enum, each with a
//! message a person can read (the node's own wording, which names what was
//! wrong and what to do).

use porfiry_mesh::node::NodeError;

/// Why a call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, uniffi::Error)]
#[uniffi(flat_error)]
pub enum PorfiryError {
    /// The settings cannot be used (an empty data dir, a phone asked to
    /// listen, a bad address, a model file that is not GGUF).
    #[error("{0}")]
    Config(String),
    /// The node could not start (its data dir is held by another node, the
    /// database cannot be opened).
    #[error("{0}")]
    Start(String),
    /// The node is paused or shut down; resume or start it first.
    #[error("{0}")]
    NotRunning(String),
    /// The call's input was refused (an empty note, an unknown audience,
    /// a bad peer id or invitation code).
    #[error("{0}")]
    BadInput(String),
    /// The thing asked for does not exist (an unknown friend).
    #[error("{0}")]
    NotFound(String),
    /// An invitation was refused, or its inviter could not be reached.
    #[error("{0}")]
    Invitation(String),
    /// No model is configured, or it failed, or it is busy.
    #[error("{0}")]
    Model(String),
    /// Something inside the node failed.
    #[error("{0}")]
    Internal(String),
}

impl From<NodeError> for PorfiryError {
    fn from(e: NodeError) -> Self {
        if e.is_not_found() {
            PorfiryError::NotFound(e.to_string())
        } else if e.is_bad_input() {
            PorfiryError::BadInput(e.to_string())
        } else if matches!(e, NodeError::Stopped) {
            PorfiryError::NotRunning(e.to_string())
        } else {
            PorfiryError::Internal(e.to_string())
        }
    }
}

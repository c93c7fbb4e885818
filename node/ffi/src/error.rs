//! [`PorfiryError`]: every failure a phone app sees, one enum, each with a
//! message a person can read (the node's own wording, which names what was
//! wrong and what to do).

use porfiry_mesh::invite::{PresentError, Refusal};
use porfiry_mesh::node::{InvitationError, NodeError};

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

/// A failed `join` or `join_device` as the app sees it: what is not a code
/// at all is [`PorfiryError::BadInput`]; anything else (refused, used,
/// expired, the inviter not reached) is [`PorfiryError::Invitation`] with
/// the node's reason, worded for an app where the node's own wording names
/// a terminal command: a friend's invitation presented to link a device,
/// and a device code presented to become a friend.
pub(crate) fn invitation_error(e: InvitationError) -> PorfiryError {
    match e {
        InvitationError::Code(_) => PorfiryError::BadInput(e.to_string()),
        InvitationError::Present(PresentError::Refused(Refusal::NotADeviceCode)) => {
            PorfiryError::Invitation(
                "this code invites a friend, it does not link a device: join with it as a \
                 friend, or ask the other device for a device code"
                    .into(),
            )
        }
        InvitationError::Present(PresentError::Refused(Refusal::DeviceCode)) => {
            PorfiryError::Invitation(
                "this code links a device of the same person, it does not make a friend: \
                 join it as a device, or ask for an invitation to become a friend"
                    .into(),
            )
        }
        other => PorfiryError::Invitation(other.to_string()),
    }
}

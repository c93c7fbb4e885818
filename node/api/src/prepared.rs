//! A chat request checked and bound to its session, and what both answers
//! — the plain `chat.completion` ([`crate::routes::chat`]) and the streamed
//! one ([`crate::stream`]) — make of a turn's outcome.

use crate::backend::{TurnError, TurnReply};
use crate::errors::ApiError;
use crate::history::ClientHistory;
use crate::sessions::Shared;
use crate::turn::SessionSlot;
use crate::wire::{PorfiryExtension, WireEvent};

/// The `finish_reason` when the model did not say.
pub const DEFAULT_FINISH_REASON: &str = "stop";

/// A checked request, ready to run.
pub struct PreparedTurn {
    /// The session's slot.
    pub slot: Shared<SessionSlot>,
    /// The session's key, for logs (`EPHEMERAL_SESSION` for a throwaway one).
    pub session: String,
    /// The conversation the client sent.
    pub history: ClientHistory,
    /// The completion's id.
    pub id: String,
    /// Its unix seconds.
    pub created: u64,
}

/// The API error of a failed turn.
pub fn turn_error(error: TurnError) -> ApiError {
    match error {
        TurnError::BadInput(m) => ApiError::BadRequest(m),
        TurnError::Model(m) => ApiError::Upstream(m),
        TurnError::NoModel(_) => ApiError::NoModel,
    }
}

/// The extension of a reply.
pub fn extension(reply: &TurnReply) -> PorfiryExtension {
    PorfiryExtension {
        events: reply.events.iter().map(WireEvent::from).collect(),
        tools: reply.tools.clone(),
    }
}

//! A chat request checked and bound to its session, and what both answers
//! — the plain `chat.completion` ([`crate::routes::chat`]) and the streamed
//! one ([`crate::stream`]) — make of a turn's outcome.

use crate::backend::{TurnError, TurnReply};
use crate::conversations::state_key;
use crate::errors::ApiError;
use crate::history::ClientHistory;
use crate::sessions::Shared;
use crate::state::ApiState;
use crate::turn::SessionSlot;
use crate::turn_records::RecordChange;
use crate::wire::{PorfiryExtension, WireEvent, WireVia};

/// The `finish_reason` when the model did not say.
pub const DEFAULT_FINISH_REASON: &str = "stop";

/// A checked request, ready to run.
pub struct PreparedTurn {
    /// The API's state (turn records, conversations).
    pub state: ApiState,
    /// The session's slot.
    pub slot: Shared<SessionSlot>,
    /// The session's key (the client's, or one the node derived).
    pub session: String,
    /// Whose turn records apply: the client's key, or the conversation
    /// scope of a client that named no session.
    pub scope: String,
    /// The node derived the session from the conversation: remember the
    /// state each answered turn reaches ([`crate::conversations`]).
    pub derived: bool,
    /// The conversation the client sent.
    pub history: ClientHistory,
    /// The client's budget for each model reply (`max_tokens`).
    pub reply_budget: Option<u32>,
    /// The completion's id.
    pub id: String,
    /// Its unix seconds.
    pub created: u64,
}

impl PreparedTurn {
    /// Syncs the session's history with the client's (under the slot's lock).
    pub fn begin(&self, slot: &mut SessionSlot) {
        let records = self.state.records();
        slot.begin(&self.session, &self.history, &records, &self.scope);
        slot.agent.limit_replies(self.reply_budget);
    }

    /// Records the answered turn as the client was shown it; returns the
    /// turn records' change, which the caller keeps in the node
    /// ([`ApiState::keep_turn_record`]) once the slot is released.
    #[must_use]
    pub fn finish(&self, slot: &mut SessionSlot, shown: &str, reply: &TurnReply) -> RecordChange {
        let message = &self.history.new_message;
        let change = slot.finish(
            message,
            shown,
            reply.tool_turns.clone(),
            &mut self.state.records(),
            &self.scope,
        );
        if self.derived {
            let key = state_key(&self.scope, &slot.shown);
            self.state.conversations().remember(key, &self.session);
        }
        change
    }
}

/// The API error of a failed turn.
pub fn turn_error(error: TurnError) -> ApiError {
    match error {
        TurnError::BadInput(m) => ApiError::BadRequest(m),
        TurnError::Model(m) => ApiError::Upstream(m),
        TurnError::NoModel(_) => ApiError::NoModel,
        TurnError::Busy(m) => ApiError::Busy(m),
    }
}

/// The extension of a reply, with `via` when a friend's model wrote it.
pub fn extension(reply: &TurnReply, via: Option<WireVia>) -> PorfiryExtension {
    PorfiryExtension {
        events: reply.events.iter().map(WireEvent::from).collect(),
        tools: reply.tools.clone(),
        via,
    }
}

/// Whose model wrote the reply, named as this node calls that friend (its
/// short peer id when it has no name, or the friends cannot be read: the
/// answer is not held back for a name). `None` for the node's own model.
pub async fn via(state: &ApiState, reply: &TurnReply) -> Option<WireVia> {
    let peer = reply.served_by.as_deref()?;
    let friends = match state.node().friends().await {
        Ok(friends) => friends,
        Err(e) => {
            tracing::debug!(error = %e, "friends unreadable; the answer names the peer id");
            serde_json::Value::Null
        }
    };
    let name = friends
        .as_array()
        .into_iter()
        .flatten()
        .find(|f| f["peer_id"].as_str() == Some(peer))
        .and_then(|f| f["name"].as_str());
    Some(WireVia::new(peer, name))
}

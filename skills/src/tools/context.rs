//! Who calls a tool, and when: the [`CallContext`] every tool call gets. The
//! time is injected (the driver reads its clock), so a tool never reads the
//! wall clock itself and tests can move time by hand.

use crate::clock::ZonedTime;
use crate::texts::Language;

/// Who asked for the call. Tools may refuse or log by caller (a friend's
/// request is not the user's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// The person at the node's own chat (terminal, app).
    User,
    /// A program talking to the node's API.
    ApiClient {
        /// The client's name or session key.
        client: String,
    },
    /// The cognitive core, at one of its ticks.
    Core {
        /// The tick number.
        tick: u64,
    },
    /// A friend's node.
    Friend {
        /// The friend's peer id.
        peer: String,
    },
}

/// What a tool call knows about its circumstances.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallContext {
    /// The session the call belongs to (chat session id, core run id).
    pub session: String,
    /// Who asked.
    pub caller: Caller,
    /// "Now", read from the caller's injected clock.
    pub now: ZonedTime,
    /// The language of every text the tool returns to the model.
    pub language: Language,
}

impl CallContext {
    /// A context.
    pub fn new(
        session: impl Into<String>,
        caller: Caller,
        now: ZonedTime,
        language: Language,
    ) -> Self {
        Self {
            session: session.into(),
            caller,
            now,
            language,
        }
    }
}

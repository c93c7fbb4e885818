//! One session's slot and the bookkeeping around a turn: before it, sync
//! the client's history ([`super::history`]); after it, remember what the
//! client was shown. A turn that did not finish (model error, client hang-up)
//! leaves the slot marked, and the next request replaces the session's
//! history with the client's, so no half turn lingers in it.

use super::backend::AgentSession;
use super::history::{ClientHistory, HistorySync, Turn, sync};

/// A session as the API keeps it.
pub struct SessionSlot {
    /// The tool-loop session.
    pub agent: Box<dyn AgentSession>,
    /// What the client has been shown: user texts and answers.
    pub shown: Vec<Turn>,
    /// A turn started and did not finish.
    pub unfinished: bool,
}

impl SessionSlot {
    /// A slot over a fresh session.
    pub fn new(agent: Box<dyn AgentSession>) -> Self {
        Self {
            agent,
            shown: Vec::new(),
            unfinished: false,
        }
    }

    /// Brings the session's history in line with the client's before the
    /// new message is sent; returns whether it was replaced.
    pub fn begin(&mut self, session: &str, history: &ClientHistory) -> bool {
        let plan = if self.unfinished {
            HistorySync::Replace(history.earlier.clone())
        } else {
            sync(&self.shown, &history.earlier)
        };
        let replaced = match plan {
            HistorySync::Append => false,
            HistorySync::Replace(turns) => {
                tracing::debug!(
                    session,
                    ours = self.shown.len(),
                    theirs = turns.len(),
                    unfinished = self.unfinished,
                    "client history diverged from the session's; replacing it"
                );
                self.agent.replace_history(&turns);
                self.shown = turns;
                true
            }
        };
        self.unfinished = true;
        replaced
    }

    /// Records a finished turn: the user's message and the answer as shown.
    pub fn finish(&mut self, message: &str, shown_answer: &str) {
        self.shown.push(Turn::user(message));
        self.shown.push(Turn::assistant(shown_answer));
        self.unfinished = false;
    }
}

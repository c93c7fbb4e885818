//! One session's slot and the bookkeeping around a turn: before it, sync
//! the client's history ([`super::history`]); after it, remember what the
//! client was shown and the turn's tool turns ([`super::turn_records`]). A
//! turn that did not finish (model error, client hang-up) leaves the slot
//! marked, and the next request rebuilds the session's history from the
//! client's, so no half turn lingers in it.

use porfiry_skills::{ChatMessage, Language, texts};

use super::backend::AgentSession;
use super::history::{ClientHistory, HistorySync, Turn, rebuild, sync};
use super::turn_records::TurnRecords;

/// A session as the API keeps it.
pub struct SessionSlot {
    /// The tool-loop session.
    pub agent: Box<dyn AgentSession>,
    /// What the client has been shown: user texts and answers.
    pub shown: Vec<Turn>,
    /// A turn started and did not finish.
    pub unfinished: bool,
    /// The language of the "no reply" answer a rebuilt history may need.
    language: Language,
}

impl SessionSlot {
    /// A slot over a fresh session speaking `language`.
    pub fn new(agent: Box<dyn AgentSession>, language: Language) -> Self {
        Self {
            agent,
            shown: Vec::new(),
            unfinished: false,
            language,
        }
    }

    /// Brings the session's history in line with the client's before the
    /// new message is sent, re-attaching the tool turns `records` holds for
    /// `scope`; returns whether it was replaced.
    pub fn begin(
        &mut self,
        session: &str,
        history: &ClientHistory,
        records: &TurnRecords,
        scope: &str,
    ) -> bool {
        let plan = if self.unfinished {
            HistorySync::Replace(history.earlier.clone())
        } else {
            sync(&self.shown, &history.earlier)
        };
        let replaced = match plan {
            HistorySync::Append => false,
            HistorySync::Replace(turns) => {
                let messages = rebuild(
                    &turns,
                    |user, answer| records.get(scope, user, answer),
                    texts::no_reply(self.language),
                );
                tracing::debug!(
                    session,
                    ours = self.shown.len(),
                    theirs = turns.len(),
                    messages = messages.len(),
                    unfinished = self.unfinished,
                    "client history diverged from the session's; rebuilt it"
                );
                self.agent.replace_history(messages);
                self.shown = turns;
                true
            }
        };
        self.unfinished = true;
        replaced
    }

    /// Records a finished turn: the user's message and the answer as shown,
    /// and (in `records`, under `scope`) its tool turns.
    pub fn finish(
        &mut self,
        message: &str,
        shown_answer: &str,
        tool_turns: Vec<ChatMessage>,
        records: &mut TurnRecords,
        scope: &str,
    ) {
        records.insert(scope, message, shown_answer, tool_turns);
        self.shown.push(Turn::user(message));
        self.shown.push(Turn::assistant(shown_answer));
        self.unfinished = false;
    }
}

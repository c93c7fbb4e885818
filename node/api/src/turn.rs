//! One session's slot and the bookkeeping around a turn: before it, sync
//! the client's history ([`super::history`]); after it, remember what the
//! client was shown and the turn's tool turns ([`super::turn_records`]). A
//! turn that did not finish (model error, client hang-up) leaves the slot
//! marked, and the next request rebuilds the session's history from the
//! client's, so no half turn lingers in it — but the tools that turn ran
//! did run: its user message and tool turns come back, answered "no
//! reply", so the model still sees the results (seed 000).

use porfiry_skills::{ChatMessage, Language, Role, texts};

use super::backend::AgentSession;
use super::history::{ClientHistory, HistorySync, Turn, rebuild, sync};
use super::turn_records::{RecordChange, TurnRecords};

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
                let unfinished = if self.unfinished {
                    self.agent.unfinished_turn()
                } else {
                    None
                };
                let no_reply = texts::no_reply(self.language);
                let mut messages = rebuild(
                    &turns,
                    |user, answer| records.get(scope, user, answer),
                    no_reply,
                );
                if let Some((user, tool_turns)) = unfinished {
                    keep_unfinished(&mut messages, &user, tool_turns, no_reply);
                }
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
    /// and (in `records`, under `scope`) its tool turns; returns what the
    /// records changed, for the node's database.
    pub fn finish(
        &mut self,
        message: &str,
        shown_answer: &str,
        tool_turns: Vec<ChatMessage>,
        records: &mut TurnRecords,
        scope: &str,
    ) -> RecordChange {
        let change = records.insert(scope, message, shown_answer, tool_turns);
        self.shown.push(Turn::user(message));
        self.shown.push(Turn::assistant(shown_answer));
        self.unfinished = false;
        change
    }
}

/// Puts an unfinished turn's tool turns back into a rebuilt history: after
/// its user message where the client kept that message (it then ends the
/// history, answered by `no_reply`), else as a turn of its own at the end —
/// the client that got an error kept no trace of it, but the tools ran.
fn keep_unfinished(
    messages: &mut Vec<ChatMessage>,
    user: &str,
    tool_turns: Vec<ChatMessage>,
    no_reply: &str,
) {
    if tool_turns.is_empty() {
        return;
    }
    let n = messages.len();
    let kept_by_client = n >= 2
        && messages[n - 2].role == Role::User
        && messages[n - 2].content.trim() == user.trim()
        && messages[n - 1].role == Role::Assistant
        && messages[n - 1].content == no_reply;
    if kept_by_client {
        let answer = messages.pop();
        messages.extend(tool_turns);
        messages.extend(answer);
    } else {
        messages.push(ChatMessage::user(user));
        messages.extend(tool_turns);
        messages.push(ChatMessage::assistant(no_reply));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools() -> Vec<ChatMessage> {
        vec![
            ChatMessage::assistant("TOOL_CALL: media_search|matrix"),
            ChatMessage::tool_result("media_search", "tt0133093 — The Matrix (1999)"),
        ]
    }

    #[test]
    fn an_unfinished_turn_the_client_dropped_comes_back_whole_at_the_end() {
        let mut messages = vec![ChatMessage::user("hi"), ChatMessage::assistant("hello")];
        keep_unfinished(&mut messages, "find films", tools(), "(no reply)");
        assert_eq!(
            messages[2..],
            [
                ChatMessage::user("find films"),
                tools()[0].clone(),
                tools()[1].clone(),
                ChatMessage::assistant("(no reply)"),
            ]
        );
    }

    #[test]
    fn an_unfinished_turn_the_client_kept_gets_its_tool_turns_before_the_no_reply() {
        let mut messages = vec![
            ChatMessage::user("find films"),
            ChatMessage::assistant("(no reply)"),
        ];
        keep_unfinished(&mut messages, "find films", tools(), "(no reply)");
        assert_eq!(messages.len(), 4);
        assert_eq!(messages[1..3], tools()[..]);
        assert_eq!(messages[3], ChatMessage::assistant("(no reply)"));
        // A turn that ran no tool adds nothing.
        let mut plain = vec![ChatMessage::user("x"), ChatMessage::assistant("y")];
        keep_unfinished(&mut plain, "z", Vec::new(), "(no reply)");
        assert_eq!(plain.len(), 2);
    }
}

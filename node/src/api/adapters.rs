//! The real backends: [`ChatAgent`] adapts the node's `ChatEngine` to
//! [`Agent`]. (The `NodeHandle` adapter joins when the node handle lands.)

use std::sync::Arc;

use futures::channel::mpsc;

use super::backend::{Agent, AgentSession, BoxFuture, TurnError, TurnReply};
use super::history::{Speaker, Turn};
use super::wire::ToolRecord;
use crate::chat::{Action, ChatEngine, ChatSession, HistoryMessage, SendError, TraceEvent};

/// The chat engine as the API's agent.
pub struct ChatAgent {
    engine: Arc<ChatEngine>,
    model: String,
}

impl ChatAgent {
    /// The agent over `engine`, reporting `model` as the model in use.
    pub fn new(engine: Arc<ChatEngine>, model: impl Into<String>) -> Self {
        Self {
            engine,
            model: model.into(),
        }
    }
}

impl Agent for ChatAgent {
    fn model_name(&self) -> String {
        self.model.clone()
    }

    fn session(&self) -> Box<dyn AgentSession> {
        Box::new(ChatAgentSession {
            session: self.engine.session(),
            engine: self.engine.clone(),
        })
    }
}

struct ChatAgentSession {
    session: ChatSession,
    engine: Arc<ChatEngine>,
}

/// The chat history of the client's turns.
pub fn history_messages(turns: &[Turn]) -> Vec<HistoryMessage> {
    use porfiry_skills::Role;
    turns
        .iter()
        .map(|t| {
            let role = match t.speaker {
                Speaker::User => Role::User,
                Speaker::Assistant => Role::Assistant,
            };
            HistoryMessage::new(role, t.text.clone())
        })
        .collect()
}

fn turn_error(error: SendError) -> TurnError {
    match error {
        SendError::Empty | SendError::TooLong { .. } => TurnError::BadInput(error.to_string()),
        SendError::Model(_) => TurnError::Model(error.to_string()),
    }
}

impl AgentSession for ChatAgentSession {
    fn replace_history(&mut self, turns: &[Turn]) {
        // INTEGRATOR: until `Session::replace_history` (branch `tools`) is
        // merged, a diverged history starts a fresh session.
        let _ = history_messages(turns);
        self.session = self.engine.session();
    }

    fn send<'a>(
        &'a mut self,
        text: &'a str,
        _deltas: Option<mpsc::Sender<String>>,
    ) -> BoxFuture<'a, Result<TurnReply, TurnError>> {
        Box::pin(async move {
            let mut tools = Vec::new();
            let reply = self
                .session
                .send_traced(text, |event| {
                    if let TraceEvent::Action(Action::Tool { call, .. }) = event {
                        tools.push(ToolRecord {
                            name: call.name.clone(),
                            ok: true,
                        });
                    }
                })
                .await
                .map_err(turn_error)?;
            Ok(TurnReply {
                text: reply.text,
                events: reply.events,
                tools,
                usage: None,
                finish_reason: None,
            })
        })
    }

    fn active_toolsets(&self) -> Vec<String> {
        self.session.active_toolsets()
    }
}

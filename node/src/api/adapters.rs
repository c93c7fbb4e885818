//! The real backends: [`ChatAgent`] adapts the node's `ChatEngine` to
//! [`Agent`], [`NodeAdapter`] the `NodeHandle` to [`NodeApi`].

use std::sync::Arc;

use futures::channel::mpsc;

use porfiry_storage::Sharing;

use super::backend::{
    Agent, AgentSession, BoxFuture, NodeApi, NodeApiError, NodeResult, TurnError, TurnReply,
};
use super::history::{Speaker, Turn};
use super::wire::ToolRecord;
use crate::chat::{Action, ChatEngine, ChatSession, HistoryMessage, SendError, TraceEvent};
use crate::node::{NodeError, NodeHandle, NotePost, NotesQuery, Origin};

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

/// The running node as the API's [`NodeApi`].
pub struct NodeAdapter {
    node: NodeHandle,
}

impl NodeAdapter {
    /// The adapter over `node`.
    pub fn new(node: NodeHandle) -> Self {
        Self { node }
    }
}

fn node_error(error: NodeError) -> NodeApiError {
    if error.is_not_found() {
        NodeApiError::NotFound(error.to_string())
    } else if error.is_bad_input() {
        NodeApiError::BadInput(error.to_string())
    } else {
        NodeApiError::Internal(error.to_string())
    }
}

fn json<T: serde::Serialize>(value: &T) -> NodeResult {
    serde_json::to_value(value).map_err(|e| NodeApiError::Internal(e.to_string()))
}

/// Parses `?origin=`.
pub fn parse_origin(origin: &str) -> Result<Origin, NodeApiError> {
    match origin {
        "own" => Ok(Origin::Own),
        "friends" => Ok(Origin::Friends),
        "all" => Ok(Origin::All),
        other => Err(NodeApiError::BadInput(format!(
            "bad origin {other:?}: expected own, friends or all"
        ))),
    }
}

impl NodeApi for NodeAdapter {
    fn notes(&self, origin: Option<String>, limit: usize) -> BoxFuture<'_, NodeResult> {
        Box::pin(async move {
            let origin = origin.as_deref().map(parse_origin).transpose()?;
            let query = NotesQuery {
                origin,
                limit: Some(limit),
            };
            json(&self.node.notes(query).await.map_err(node_error)?)
        })
    }

    fn post_note(&self, text: String, audience: String) -> BoxFuture<'_, NodeResult> {
        Box::pin(async move {
            let sharing: Sharing = audience.parse().map_err(|_| {
                NodeApiError::BadInput(format!(
                    "bad audience {audience:?}: expected public, friends, group:NAME or private"
                ))
            })?;
            let post = NotePost {
                text,
                audience: sharing,
            };
            json(&self.node.post_note(post).await.map_err(node_error)?)
        })
    }

    fn friends(&self) -> BoxFuture<'_, NodeResult> {
        Box::pin(async move { json(&self.node.friends().await.map_err(node_error)?) })
    }

    fn add_friend(
        &self,
        peer: String,
        addresses: Vec<String>,
        groups: Vec<String>,
    ) -> BoxFuture<'_, NodeResult> {
        Box::pin(async move {
            let view = self
                .node
                .add_friend(&peer, addresses, groups)
                .await
                .map_err(node_error)?;
            json(&view)
        })
    }

    fn remove_friend(&self, peer: String) -> BoxFuture<'_, NodeResult<()>> {
        Box::pin(async move { self.node.remove_friend(&peer).await.map_err(node_error) })
    }

    fn status(&self) -> BoxFuture<'_, NodeResult> {
        Box::pin(async move { json(&self.node.status().await.map_err(node_error)?) })
    }
}

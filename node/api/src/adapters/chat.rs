//! [`ChatAgent`]: the node's `ChatEngine` as the API's [`Agent`] — one
//! chat session per key, a turn's deltas and tool events streamed through
//! a bounded channel, the session's active toolsets by the agent's clock.

use std::sync::Arc;

use futures::channel::mpsc;
use futures::{SinkExt as _, StreamExt as _};

use crate::backend::{
    Agent, AgentSession, BoxFuture, ModelSource, TurnDelta, TurnError, TurnReply,
};
use crate::limits::DELTA_CHANNEL;
use crate::wire::{ToolRecord, WireUsage};
use porfiry_agent::chat::ClientEvent;
use porfiry_skills::llm::TOOL_RESULT_PREFIX;
use porfiry_skills::{Caller, ChatMessage, Language, Role};

use porfiry_agent::chat::session::check_message;
use porfiry_agent::chat::{Action, ChatEngine, Clock, SendError, TraceEvent};

/// The chat engine as the API's agent.
pub struct ChatAgent {
    engine: Arc<ChatEngine>,
    model: String,
    source: Option<ModelSource>,
}

impl ChatAgent {
    /// The agent over `engine`, reporting `model` as the model in use.
    pub fn new(engine: Arc<ChatEngine>, model: impl Into<String>) -> Self {
        Self {
            engine,
            model: model.into(),
            source: None,
        }
    }

    /// Reports `source` as where the model runs.
    pub fn with_source(mut self, source: ModelSource) -> Self {
        self.source = Some(source);
        self
    }
}

impl Agent for ChatAgent {
    fn model_name(&self) -> String {
        self.model.clone()
    }

    fn model_source(&self) -> Option<ModelSource> {
        self.source.clone()
    }

    fn session(&self, key: &str) -> Box<dyn AgentSession> {
        // The loop's own session (not `chat::ChatSession`): the API needs a
        // streamed turn *and* its trace (each tool call with `ok`) at once.
        let session = porfiry_skills::ChatSession::new(
            self.engine.toolbox().clone(),
            self.engine.llm().clone(),
            self.engine.clock().clone(),
        )
        .with_identity(
            key,
            Caller::ApiClient {
                client: key.to_owned(),
            },
        );
        Box::new(ChatAgentSession {
            session,
            clock: self.engine.clock().clone(),
        })
    }

    fn language(&self) -> Language {
        self.engine.toolbox().language()
    }
}

struct ChatAgentSession {
    session: porfiry_skills::ChatSession,
    clock: Arc<dyn Clock>,
}

fn turn_error(error: SendError) -> TurnError {
    match error {
        SendError::Empty | SendError::TooLong { .. } => TurnError::BadInput(error.to_string()),
        SendError::Model(porfiry_skills::LlmError::NoModel(hint)) => TurnError::NoModel(hint),
        SendError::Model(e @ porfiry_skills::LlmError::Busy { .. }) => {
            TurnError::Busy(e.to_string())
        }
        SendError::Model(_) => TurnError::Model(error.to_string()),
    }
}

impl AgentSession for ChatAgentSession {
    fn history(&self) -> Vec<ChatMessage> {
        self.session.session().history().to_vec()
    }

    fn unfinished_turn(&self) -> Option<(String, Vec<ChatMessage>)> {
        let history = self.session.session().history();
        let at = history
            .iter()
            .rposition(|m| m.role == Role::User && !m.content.starts_with(TOOL_RESULT_PREFIX))?;
        let tool_turns = history[at + 1..]
            .iter()
            .filter(|m| match m.role {
                Role::User => m.content.starts_with(TOOL_RESULT_PREFIX),
                Role::Assistant => m.content.starts_with("TOOL_CALL"),
                _ => false,
            })
            .cloned()
            .collect();
        Some((history[at].content.clone(), tool_turns))
    }

    fn replace_history(&mut self, messages: Vec<ChatMessage>) {
        self.session.session_mut().replace_history(messages);
    }

    fn limit_replies(&mut self, max_tokens: Option<u32>) {
        self.session.session_mut().limit_replies(max_tokens);
    }

    fn send<'a>(
        &'a mut self,
        text: &'a str,
        deltas: Option<mpsc::Sender<TurnDelta>>,
    ) -> BoxFuture<'a, Result<TurnReply, TurnError>> {
        Box::pin(async move {
            check_message(text).map_err(turn_error)?;
            let before = self.session.session().history().len();
            let mut tools = Vec::new();
            // Events go in order and none is dropped: the trace cannot wait,
            // so they queue here, and the forwarder below awaits the
            // caller's bounded channel for each, as for the text (a slow
            // listener slows the turn). The queue holds at most one turn's
            // events: MAX_TOOL_ROUNDS tool results, a few events each.
            let (events_out, events_in) = match deltas {
                Some(_) => {
                    let (tx, rx) = mpsc::unbounded::<ClientEvent>();
                    (Some(tx), Some(rx))
                }
                None => (None, None),
            };
            let tools_run = &mut tools;
            // Owns the event sender, so dropping it closes the queue.
            let mut trace = move |event: TraceEvent<'_>| match event {
                TraceEvent::Action(Action::Tool { call, ok, .. }) => tools_run.push(ToolRecord {
                    name: call.name.clone(),
                    ok: *ok,
                }),
                TraceEvent::Events(events) => {
                    if let Some(out) = events_out.as_ref() {
                        for event in events {
                            // The forwarder has gone only when the caller did.
                            let _ = out.unbounded_send(event.clone());
                        }
                    }
                }
                _ => {}
            };
            let (text_tx, text_rx) = match deltas {
                Some(out) => {
                    let (tx, rx) = mpsc::channel::<String>(DELTA_CHANNEL);
                    (Some(tx), Some((rx, out)))
                }
                None => (None, None),
            };
            let forward = async move {
                let (Some((rx, mut out)), Some(events_in)) = (text_rx, events_in) else {
                    return;
                };
                // Events first: a tool's events are queued when it runs,
                // before the rounds whose text follows them.
                let mut merged = futures::stream::select_with_strategy(
                    events_in.map(TurnDelta::Event),
                    rx.map(TurnDelta::Text),
                    |_: &mut ()| futures::stream::PollNext::Left,
                );
                while let Some(delta) = merged.next().await {
                    if out.send(delta).await.is_err() {
                        break;
                    }
                }
            };
            let run = async {
                let reply = self.session.run(text, text_tx, &mut trace).await;
                // The forwarder ends once both of its inputs are closed.
                drop(trace);
                reply
            };
            let (reply, ()) = futures::join!(run, forward);
            let reply = reply.map_err(|e| turn_error(SendError::Model(e)))?;
            let history = self.session.session().history();
            // The user's message, then the tool turns, then the answer.
            let tool_turns = history
                .get(before + 1..history.len().saturating_sub(1))
                .unwrap_or_default()
                .to_vec();
            Ok(TurnReply {
                text: reply.text,
                events: reply.events,
                tools,
                usage: reply
                    .usage
                    .map(|u| WireUsage::new(u.prompt_tokens, u.completion_tokens)),
                finish_reason: reply.finish_reason,
                served_by: reply.served_by,
                tool_turns,
            })
        })
    }

    fn active_toolsets(&self) -> Vec<String> {
        let now = self.clock.now().unix_ms();
        let activation = self.session.session().activation();
        activation
            .active()
            .filter(|set| activation.deadline(set).is_some_and(|d| now <= d))
            .map(str::to_owned)
            .collect()
    }
}

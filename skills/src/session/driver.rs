//! The thin async driver: runs a [`Session`] turn against an [`Llm`] and the
//! tools, reading "now" from an injected [`Clock`], putting a deadline on
//! every tool call, and — when asked — streaming the answer through a
//! [`StreamGate`] as the model writes it. [`ChatSession`] is the
//! `send(text)` API for embedding (a phone app, a terminal, an HTTP handler).
//!
//! Needs a tokio runtime with the time driver (the tool deadline is
//! `tokio::time::timeout`).
//!
//! Streaming: every model call of the turn streams, and what the gate lets
//! through is sent as it arrives. Tool rounds show nothing (the gate holds a
//! call back) except text the model wrote before the `TOOL_CALL` marker on
//! that round, which has already gone out by the time the marker comes.

use std::sync::Arc;
use std::time::Duration;

use futures_channel::mpsc::Sender;
use futures_util::{SinkExt, StreamExt};

use crate::clock::Clock;
use crate::llm::{Completion, Delta, Llm, LlmError, ModelRequest, Usage};
use crate::session::machine::{Action, Reply, Session, Step, ToolRun};
use crate::session::stream_gate::StreamGate;
use crate::texts;
use crate::tools::context::{CallContext, Caller};
use crate::tools::toolbox::Toolbox;
use crate::tools::toolset::{ClientEvent, ToolOutput};

/// How long one tool call may take before it is dropped and the model told.
/// Local tools answer in milliseconds; a network tool (a web page, a friend's
/// node over a slow link) may take several seconds. 20 s keeps a person at
/// the chat waiting no longer than they would for a slow model reply, and is
/// still far longer than any healthy call.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(20);

/// What a turn did, step by step, for `--trace` style output.
#[derive(Debug, Clone, Copy)]
pub enum TraceEvent<'a> {
    /// A request about to go to the model (the prompt state and history).
    Request(&'a ModelRequest),
    /// The model's raw reply.
    ModelReply(&'a str),
    /// What the session did with it.
    Action(&'a Action),
    /// Client events a tool emitted just now (`show_text`, media actions),
    /// told as they happen; the turn's [`Reply`] still carries them all.
    Events(&'a [ClientEvent]),
}

/// What one turn runs against.
pub struct TurnIo<'a> {
    /// The model.
    pub llm: &'a dyn Llm,
    /// Where "now" comes from (prompt expiry, tool context).
    pub clock: &'a dyn Clock,
    /// The session's id, passed to tools.
    pub session_id: &'a str,
    /// Who the turn is for, passed to tools.
    pub caller: Caller,
    /// Every tool call gets this deadline.
    pub tool_timeout: Duration,
    /// When set, the turn streams: every model call uses `Llm::stream`, and the
    /// text that [`StreamGate`] lets through (the answer; never a `TOOL_CALL` line
    /// or a `<think>` block) is sent here as it arrives (bounded channel, awaited).
    pub deltas: Option<Sender<String>>,
    /// Told every request, reply and action.
    pub trace: &'a mut (dyn FnMut(TraceEvent<'_>) + Send),
}

/// Runs one user turn to its end. On a model failure the turn is aborted
/// (the history keeps the user's message) and the error returned.
pub async fn run_turn(
    session: &mut Session,
    mut io: TurnIo<'_>,
    text: &str,
) -> Result<Reply, LlmError> {
    let mut usage: Option<Usage> = None;
    let mut finish_reason: Option<String> = None;
    let mut served_by: Option<String> = None;
    let mut told_events = 0;
    let mut step = session.user_message(text, &io.clock.now());
    loop {
        step = match step {
            Step::Done(mut reply) => {
                if let Some(new) = reply.events.get(told_events..).filter(|e| !e.is_empty()) {
                    (io.trace)(TraceEvent::Events(new));
                }
                reply.usage = usage;
                reply.finish_reason = finish_reason;
                reply.served_by = served_by;
                return Ok(reply);
            }
            Step::CallModel(request) => {
                (io.trace)(TraceEvent::Request(&request));
                let completion = match call_model(&mut io, &request).await {
                    Ok(completion) => completion,
                    Err(e) => {
                        tracing::debug!(error = %e, "model call failed; turn aborted");
                        session.abort_turn();
                        return Err(e);
                    }
                };
                if let Some(u) = completion.usage {
                    usage = Some(usage.unwrap_or_default() + u);
                }
                finish_reason = completion.finish_reason.clone();
                served_by = completion.served_by.clone();
                (io.trace)(TraceEvent::ModelReply(&completion.text));
                session
                    .model_reply(&completion.text, &io.clock.now())
                    .map_err(|e| LlmError::Other(e.to_string()))?
            }
            Step::RunTool(run) => {
                let ctx = CallContext::new(
                    io.session_id,
                    io.caller.clone(),
                    io.clock.now(),
                    session.toolbox().language(),
                );
                let output = run_tool(&run, &ctx, io.tool_timeout).await;
                session
                    .tool_output(output, &io.clock.now())
                    .map_err(|e| LlmError::Other(e.to_string()))?
            }
        };
        if let Some(action) = session.last_action() {
            (io.trace)(TraceEvent::Action(action));
        }
        let events = session.turn_events();
        if events.len() > told_events {
            (io.trace)(TraceEvent::Events(&events[told_events..]));
            told_events = events.len();
        }
    }
}

/// Runs a tool under the deadline; a call past it is dropped (its future
/// with it) and the model told.
async fn run_tool(run: &ToolRun, ctx: &CallContext, timeout: Duration) -> ToolOutput {
    match tokio::time::timeout(timeout, run.prepared.run(ctx)).await {
        Ok(output) => output,
        Err(_) => {
            let tool = run.prepared.tool();
            let ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
            tracing::warn!(%tool, timeout_ms = ms, "tool call timed out");
            ToolOutput::failed(texts::tool_timed_out(ctx.language, tool, ms.div_ceil(1000)))
        }
    }
}

/// One model call: whole, or streamed through a gate to `io.deltas`.
async fn call_model(io: &mut TurnIo<'_>, request: &ModelRequest) -> Result<Completion, LlmError> {
    let Some(deltas) = io.deltas.as_mut() else {
        return io.llm.complete(request).await;
    };
    let mut stream = io.llm.stream(request).await?;
    let mut gate = StreamGate::new();
    let mut completion = Completion::default();
    let mut listening = true;
    while let Some(item) = stream.next().await {
        match item? {
            Delta::Text(text) => {
                completion.text.push_str(&text);
                let shown = gate.push(&text);
                send(deltas, shown, &mut listening).await;
            }
            Delta::Done {
                finish_reason,
                usage,
                served_by,
            } => {
                completion.finish_reason = finish_reason;
                completion.usage = usage;
                completion.served_by = served_by;
                break;
            }
        }
    }
    let rest = gate.finish();
    send(deltas, rest, &mut listening).await;
    Ok(completion)
}

/// Sends shown text, waiting while the channel is full; a receiver that went
/// away ends the sending (the turn itself runs on, so the history stays whole).
async fn send(deltas: &mut Sender<String>, text: String, listening: &mut bool) {
    if text.is_empty() || !*listening {
        return;
    }
    if deltas.send(text).await.is_err() {
        tracing::debug!("delta receiver gone; not streaming the rest");
        *listening = false;
    }
}

/// A session bound to a model and a clock: `send(text)` → reply and events.
pub struct ChatSession {
    session: Session,
    llm: Arc<dyn Llm>,
    clock: Arc<dyn Clock>,
    id: String,
    caller: Caller,
    tool_timeout: Duration,
}

impl ChatSession {
    /// A fresh session over `toolbox`, for the user ([`Caller::User`]), with
    /// id `chat` and the [`DEFAULT_TOOL_TIMEOUT`].
    pub fn new(toolbox: Arc<Toolbox>, llm: Arc<dyn Llm>, clock: Arc<dyn Clock>) -> Self {
        Self {
            session: Session::new(toolbox),
            llm,
            clock,
            id: "chat".to_owned(),
            caller: Caller::User,
            tool_timeout: DEFAULT_TOOL_TIMEOUT,
        }
    }

    /// Sets the id and caller that tools see.
    pub fn with_identity(mut self, id: impl Into<String>, caller: Caller) -> Self {
        self.id = id.into();
        self.caller = caller;
        self
    }

    /// Sets the deadline of every tool call.
    pub fn with_tool_timeout(mut self, timeout: Duration) -> Self {
        self.tool_timeout = timeout;
        self
    }

    /// Sends the user's text; returns the answer and the client events.
    pub async fn send(&mut self, text: &str) -> Result<Reply, LlmError> {
        self.run(text, None, &mut |_| {}).await
    }

    /// [`ChatSession::send`], reporting every request, reply and action.
    pub async fn send_traced<F>(&mut self, text: &str, mut trace: F) -> Result<Reply, LlmError>
    where
        F: FnMut(TraceEvent<'_>) + Send,
    {
        self.run(text, None, &mut trace).await
    }

    /// [`ChatSession::send`], streaming: the answer's text goes to `deltas`
    /// as the model writes it (see the module doc for what is shown).
    pub async fn send_streaming(
        &mut self,
        text: &str,
        deltas: Sender<String>,
    ) -> Result<Reply, LlmError> {
        self.run(text, Some(deltas), &mut |_| {}).await
    }

    /// The general form: optional streaming and a trace.
    pub async fn run(
        &mut self,
        text: &str,
        deltas: Option<Sender<String>>,
        trace: &mut (dyn FnMut(TraceEvent<'_>) + Send),
    ) -> Result<Reply, LlmError> {
        let io = TurnIo {
            llm: self.llm.as_ref(),
            clock: self.clock.as_ref(),
            session_id: &self.id,
            caller: self.caller.clone(),
            tool_timeout: self.tool_timeout,
            deltas,
            trace,
        };
        run_turn(&mut self.session, io, text).await
    }

    /// The session state (history, active sets).
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The session state, to replace its history.
    pub fn session_mut(&mut self) -> &mut Session {
        &mut self.session
    }

    /// The model.
    pub fn llm(&self) -> &Arc<dyn Llm> {
        &self.llm
    }
}

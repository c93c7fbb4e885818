//! The thin async driver: runs a [`Session`] turn against an [`Llm`], reading
//! "now" from an injected [`Clock`] — and [`ChatSession`], the `send(text)`
//! API for embedding (a phone app, a terminal, an HTTP handler).

use std::sync::Arc;

use crate::clock::Clock;
use crate::llm::{Llm, LlmError, ModelRequest};
use crate::session::machine::{Action, Reply, Session, Step};
use crate::tools::toolbox::Toolbox;

/// What a turn did, step by step, for `--trace` style output.
#[derive(Debug, Clone, Copy)]
pub enum TraceEvent<'a> {
    /// A request about to go to the model (the prompt state and history).
    Request(&'a ModelRequest),
    /// The model's raw reply.
    ModelReply(&'a str),
    /// What the session did with it.
    Action(&'a Action),
}

/// Runs one user turn to its end. On a model failure the turn is aborted
/// (the history keeps the user's message) and the error returned.
pub async fn run_turn<F>(
    session: &mut Session,
    llm: &dyn Llm,
    clock: &dyn Clock,
    text: &str,
    mut trace: F,
) -> Result<Reply, LlmError>
where
    F: FnMut(TraceEvent<'_>) + Send,
{
    let mut step = session.user_message(text, &clock.now());
    loop {
        let request = match step {
            Step::Done(reply) => return Ok(reply),
            Step::CallModel(request) => request,
        };
        trace(TraceEvent::Request(&request));
        let answer = match llm.complete(&request).await {
            Ok(completion) => completion.text,
            Err(e) => {
                tracing::debug!(error = %e, "model call failed; turn aborted");
                session.abort_turn();
                return Err(e);
            }
        };
        trace(TraceEvent::ModelReply(&answer));
        step = session
            .model_reply(&answer, &clock.now())
            .map_err(|e| LlmError::Other(e.to_string()))?;
        if let Some(action) = session.last_action() {
            trace(TraceEvent::Action(action));
        }
    }
}

/// A session bound to a model and a clock: `send(text)` → reply and events.
pub struct ChatSession {
    session: Session,
    llm: Arc<dyn Llm>,
    clock: Arc<dyn Clock>,
}

impl ChatSession {
    /// A fresh session over `toolbox`.
    pub fn new(toolbox: Arc<Toolbox>, llm: Arc<dyn Llm>, clock: Arc<dyn Clock>) -> Self {
        Self {
            session: Session::new(toolbox),
            llm,
            clock,
        }
    }

    /// Sends the user's text; returns the answer and the client events.
    pub async fn send(&mut self, text: &str) -> Result<Reply, LlmError> {
        self.send_traced(text, |_| {}).await
    }

    /// [`ChatSession::send`], reporting every request, reply and action.
    pub async fn send_traced<F>(&mut self, text: &str, trace: F) -> Result<Reply, LlmError>
    where
        F: FnMut(TraceEvent<'_>) + Send,
    {
        run_turn(
            &mut self.session,
            self.llm.as_ref(),
            self.clock.as_ref(),
            text,
            trace,
        )
        .await
    }

    /// The session state (history, active sets).
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The model.
    pub fn llm(&self) -> &Arc<dyn Llm> {
        &self.llm
    }
}

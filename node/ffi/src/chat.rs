//! Chat through the bindings: one agent session per session name (its
//! history and active toolsets kept between turns), each turn a task that
//! streams to a [`ChatListener`] and that [`TaskHandle::cancel`] stops —
//! dropping the turn drops the model's stream, so an HTTP model sees its
//! connection close and the embedded engine stops decoding.

use std::sync::{Arc, Mutex, PoisonError};

use futures::StreamExt;
use futures::channel::mpsc;
use porfiry_api::backend::{Agent, AgentSession, TurnDelta, TurnError};
use tokio::runtime::Handle;
use tokio::task::AbortHandle;

use crate::error::PorfiryError;
use crate::listeners::ChatListener;
use crate::views::ChatAnswer;

/// Deltas buffered between the model and the listener: a listener slower
/// than the model holds the turn back (the channel is bounded) rather than
/// growing memory; 64 deltas is a few sentences.
pub const CHAT_DELTA_BUFFER: usize = 64;

/// Sessions kept at once; the oldest-started is dropped past this (an app
/// has a handful of conversations; this bounds a buggy one).
pub const MAX_CHAT_SESSIONS: usize = 32;

type SharedSession = Arc<tokio::sync::Mutex<Box<dyn AgentSession>>>;

/// The agent and its sessions.
pub(crate) struct Chats {
    agent: Arc<dyn Agent>,
    sessions: Mutex<Vec<(String, SharedSession)>>,
}

impl Chats {
    pub(crate) fn new(agent: Arc<dyn Agent>) -> Self {
        Chats {
            agent,
            sessions: Mutex::new(Vec::new()),
        }
    }

    pub(crate) fn model_name(&self) -> String {
        self.agent.model_name()
    }

    fn session(&self, name: &str) -> SharedSession {
        let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, s)) = sessions.iter().find(|(n, _)| n == name) {
            return Arc::clone(s);
        }
        if sessions.len() >= MAX_CHAT_SESSIONS {
            sessions.remove(0);
        }
        let s: SharedSession = Arc::new(tokio::sync::Mutex::new(self.agent.session(name)));
        sessions.push((name.to_owned(), Arc::clone(&s)));
        s
    }

    /// Starts a turn of `session` on `runtime`.
    pub(crate) fn start(
        &self,
        runtime: &Handle,
        session: &str,
        text: String,
        listener: Arc<dyn ChatListener>,
    ) -> Arc<TaskHandle> {
        let shared = self.session(session);
        let done = Arc::new(Mutex::new(false));
        let finished = Arc::clone(&done);
        let task = runtime.spawn(async move {
            let result = turn(shared, text, &listener).await;
            *finished.lock().unwrap_or_else(PoisonError::into_inner) = true;
            match result {
                Ok(answer) => listener.on_done(answer),
                Err(e) => listener.on_error(e),
            }
        });
        Arc::new(TaskHandle {
            abort: task.abort_handle(),
            done,
        })
    }
}

async fn turn(
    shared: SharedSession,
    text: String,
    listener: &Arc<dyn ChatListener>,
) -> Result<ChatAnswer, PorfiryError> {
    let Ok(mut session) = shared.try_lock() else {
        return Err(PorfiryError::BadInput(
            "this session is answering another message; wait for it or cancel it".into(),
        ));
    };
    let (tx, mut rx) = mpsc::channel(CHAT_DELTA_BUFFER);
    let send = session.send(&text, Some(tx));
    tokio::pin!(send);
    let mut deltas_open = true;
    let reply = loop {
        tokio::select! {
            reply = &mut send => break reply,
            delta = rx.next(), if deltas_open => match delta {
                Some(d) => deliver(listener, d),
                None => deltas_open = false,
            },
        }
    };
    // What the turn sent just before it ended.
    while let Ok(d) = rx.try_recv() {
        deliver(listener, d);
    }
    let reply = reply.map_err(turn_error)?;
    Ok(ChatAnswer {
        text: reply.text,
        tools: reply.tools.into_iter().map(|t| t.name).collect(),
        finish_reason: reply.finish_reason,
    })
}

fn deliver(listener: &Arc<dyn ChatListener>, delta: TurnDelta) {
    match delta {
        TurnDelta::Text(t) => listener.on_text(t),
        TurnDelta::Event(e) => match serde_json::to_string(&e) {
            Ok(json) => listener.on_tool_event(json),
            Err(err) => tracing::warn!("cannot encode a tool event: {err}"),
        },
    }
}

fn turn_error(e: TurnError) -> PorfiryError {
    match e {
        TurnError::BadInput(m) => PorfiryError::BadInput(m),
        TurnError::Model(m) | TurnError::NoModel(m) | TurnError::Busy(m) => PorfiryError::Model(m),
    }
}

/// A running chat turn.
#[derive(uniffi::Object)]
pub struct TaskHandle {
    abort: AbortHandle,
    done: Arc<Mutex<bool>>,
}

#[uniffi::export]
impl TaskHandle {
    /// Stops the turn: the model's stream is dropped at once (an HTTP
    /// model's connection closes, the embedded engine stops decoding) and
    /// the listener hears nothing more. A finished turn is left as it is.
    pub fn cancel(&self) {
        self.abort.abort();
    }

    /// Whether the turn has ended (answered, failed or cancelled).
    pub fn is_finished(&self) -> bool {
        self.abort.is_finished() || *self.done.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl std::fmt::Debug for Chats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chats").finish_non_exhaustive()
    }
}

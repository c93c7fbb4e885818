//! Chat through the bindings: one agent session per session name (its
//! history and active toolsets kept between turns, the history also in the
//! node's database: [`crate::chat_store`]), each turn a task that streams
//! to a [`ChatListener`] and that [`TaskHandle::cancel`] stops — dropping
//! the turn drops the model's stream, so an HTTP model sees its connection
//! close and the embedded engine stops decoding.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use futures::StreamExt;
use futures::channel::mpsc;
use porfiry_agent::chat::ClientEvent;
use porfiry_api::backend::{Agent, AgentSession, TurnDelta, TurnError};
use porfiry_mesh::node::NodeHandle;
use tokio::runtime::Handle;
use tokio::task::AbortHandle;

use crate::chat_store::{self, Saved};
use crate::error::PorfiryError;
use crate::listeners::ChatListener;
use crate::views::ChatAnswer;

/// Deltas buffered between the model and the listener: a listener slower
/// than the model holds the turn back (the channel is bounded) rather than
/// growing memory; 64 deltas is a few sentences.
pub const CHAT_DELTA_BUFFER: usize = 64;

/// Sessions held in memory at once; the least recently used is dropped
/// past this (an app has a handful of conversations; this bounds a buggy
/// one). A dropped session's history stays in the database and comes back
/// when it is used again; its active toolsets do not.
pub const MAX_CHAT_SESSIONS: usize = 32;

/// A session held in memory.
struct Held {
    agent: Box<dyn AgentSession>,
    /// Its kept history was loaded (before its first turn here).
    loaded: bool,
    /// What the database holds of its history.
    saved: Saved,
}

struct SessionEntry {
    name: String,
    held: tokio::sync::Mutex<Held>,
    /// [`Chats::forget`] ran: a turn still running writes nothing more.
    forgotten: AtomicBool,
}

type SharedSession = Arc<SessionEntry>;

/// The agent, its sessions (the most recently used last) and the node
/// whose database keeps their histories.
pub(crate) struct Chats {
    agent: Arc<dyn Agent>,
    node: NodeHandle,
    sessions: Mutex<Vec<SharedSession>>,
}

impl Chats {
    pub(crate) fn new(agent: Arc<dyn Agent>, node: NodeHandle) -> Self {
        Chats {
            agent,
            node,
            sessions: Mutex::new(Vec::new()),
        }
    }

    pub(crate) fn model_name(&self) -> String {
        self.agent.model_name()
    }

    fn session(&self, name: &str) -> SharedSession {
        let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        most_recent(
            &mut sessions,
            MAX_CHAT_SESSIONS,
            |s| s.name == name,
            || {
                Arc::new(SessionEntry {
                    name: name.to_owned(),
                    held: tokio::sync::Mutex::new(Held {
                        agent: self.agent.session(name),
                        loaded: false,
                        saved: Saved::default(),
                    }),
                    forgotten: AtomicBool::new(false),
                })
            },
        )
    }

    /// Forgets session `name`: out of memory (a turn it runs finishes but
    /// writes nothing) and out of the database; returns the messages deleted.
    pub(crate) async fn forget(&self, name: &str) -> Result<u64, PorfiryError> {
        {
            let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(at) = sessions.iter().position(|s| s.name == name) {
                sessions.remove(at).forgotten.store(true, Ordering::SeqCst);
            }
        }
        let name = name.to_owned();
        self.node
            .db()
            .write(move |s| s.forget_chat_session(&name))
            .await
            .map_err(|e| PorfiryError::Internal(e.to_string()))?
            .map_err(|e| PorfiryError::Internal(e.to_string()))
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
        let node = self.node.clone();
        let done = Arc::new(Mutex::new(false));
        let finished = Arc::clone(&done);
        let task = runtime.spawn(async move {
            let result = turn(&node, shared, text, &listener).await;
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

/// The entry of `list` that `is` picks, moved to the end (the most
/// recently used), or a new one from `make` put there, the least recently
/// used dropped to keep at most `cap`.
fn most_recent<T: Clone>(
    list: &mut Vec<T>,
    cap: usize,
    is: impl Fn(&T) -> bool,
    make: impl FnOnce() -> T,
) -> T {
    let entry = match list.iter().position(is) {
        Some(at) => list.remove(at),
        None => {
            while list.len() >= cap.max(1) {
                list.remove(0);
            }
            make()
        }
    };
    list.push(entry.clone());
    entry
}

async fn turn(
    node: &NodeHandle,
    shared: SharedSession,
    text: String,
    listener: &Arc<dyn ChatListener>,
) -> Result<ChatAnswer, PorfiryError> {
    let Ok(mut held) = shared.held.try_lock() else {
        return Err(PorfiryError::BadInput(
            "this session is answering another message; wait for it or cancel it".into(),
        ));
    };
    if !held.loaded {
        let kept = chat_store::load(node, &shared.name).await?;
        held.saved = Saved::of(&kept);
        if !kept.is_empty() {
            held.agent.replace_history(kept);
        }
        held.loaded = true;
    }
    let reply = answer(&mut *held.agent, &text, listener).await;
    // Kept whether or not it was answered: the tools it ran did run.
    if !shared.forgotten.load(Ordering::SeqCst) {
        let history = held.agent.history();
        match chat_store::save(
            node,
            &shared.name,
            &held.saved,
            &history,
            chat_store::now_ms(),
        )
        .await
        {
            Ok(saved) => held.saved = saved,
            Err(e) => tracing::warn!(session = %shared.name, "the chat history was not kept: {e}"),
        }
    }
    let reply = reply.map_err(turn_error)?;
    Ok(ChatAnswer {
        text: reply.text,
        tools: reply.tools.into_iter().map(|t| t.name).collect(),
        finish_reason: reply.finish_reason,
        events: reply.events.iter().filter_map(event_json).collect(),
    })
}

/// Runs one turn of `session`, delivering its deltas to `listener`.
async fn answer(
    session: &mut dyn AgentSession,
    text: &str,
    listener: &Arc<dyn ChatListener>,
) -> Result<porfiry_api::backend::TurnReply, TurnError> {
    let (tx, mut rx) = mpsc::channel(CHAT_DELTA_BUFFER);
    let send = session.send(text, Some(tx));
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
    reply
}

fn deliver(listener: &Arc<dyn ChatListener>, delta: TurnDelta) {
    match delta {
        TurnDelta::Text(t) => listener.on_text(t),
        TurnDelta::Event(e) => {
            if let Some(json) = event_json(&e) {
                listener.on_tool_event(json);
            }
        }
    }
}

/// A tool event as the app gets it.
fn event_json(event: &ClientEvent) -> Option<String> {
    serde_json::to_string(event)
        .inspect_err(|err| tracing::warn!("cannot encode a tool event: {err}"))
        .ok()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_least_recently_used_session_goes_at_the_cap() {
        let mut list = Vec::new();
        for n in [1, 2, 3] {
            assert_eq!(most_recent(&mut list, 3, |&e| e == n, || n), n);
        }
        assert_eq!(
            most_recent(&mut list, 3, |&e| e == 1, || 99),
            1,
            "found, not made"
        );
        assert_eq!(list, [2, 3, 1]);
        most_recent(&mut list, 3, |&e| e == 4, || 4);
        assert_eq!(
            list,
            [3, 1, 4],
            "2 was used least recently, not 1 (started first)"
        );
    }
}

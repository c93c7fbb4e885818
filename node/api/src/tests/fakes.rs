//! Fakes of the two backends and request helpers.

use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::http::{Request, Response, StatusCode};
use futures::SinkExt as _;
use futures::channel::mpsc;
use porfiry_skills::ManualClock;
use tower::ServiceExt as _;

use crate::backend::{
    Agent, AgentSession, BoxFuture, FriendSettings, NodeApi, NodeApiError, NodeResult, NoteRequest,
    NotesRequest, TurnDelta, TurnError, TurnReply,
};
use crate::wire::{ToolRecord, WireUsage};
use crate::{ApiState, ApiToken, router};
use porfiry_agent::chat::ClientEvent;
use porfiry_skills::{ChatMessage, Language};

/// The fake node's one friend, named `anna`.
pub const ANNA: &str = "12D3KooWD3eckifWpRn9wQpMG9R9hX3sD158z7EqHWmweQAJU5SA";

pub const TOKEN: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

/// How the fake model behaves.
#[derive(Clone)]
pub enum Script {
    /// Answers `echo: <text>`, streamed in two deltas.
    Echo,
    /// [`Script::Echo`], written by this friend's model (peer id).
    EchoVia(String),
    /// Fails before any text.
    FailAtOnce,
    /// Streams `partial`, then fails.
    FailMidway,
    /// Streams `partial`, then waits for `gate`; `dropped` is set when the
    /// turn's future is dropped.
    Hang {
        gate: Arc<tokio::sync::Notify>,
        dropped: Arc<tokio::sync::Notify>,
    },
}

/// What the sessions did, in order: `new`, `replace N`, `send TEXT`.
pub type Log = Arc<Mutex<Vec<String>>>;

pub struct FakeAgent {
    pub script: Script,
    pub log: Log,
}

impl Agent for FakeAgent {
    fn model_name(&self) -> String {
        "fake-model".to_owned()
    }
    fn model_source(&self) -> Option<crate::backend::ModelSource> {
        Some(crate::backend::ModelSource {
            kind: "server",
            detail: "http://127.0.0.1:9/v1".to_owned(),
        })
    }
    fn session(&self, _key: &str) -> Box<dyn AgentSession> {
        self.log.lock().unwrap().push("new".to_owned());
        Box::new(FakeSession {
            script: self.script.clone(),
            log: self.log.clone(),
            active: Vec::new(),
        })
    }
    fn language(&self) -> Language {
        Language::En
    }
}

struct FakeSession {
    script: Script,
    log: Log,
    active: Vec<String>,
}

/// Sets its notify when dropped.
struct DropFlag(Arc<tokio::sync::Notify>);
impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.notify_one();
    }
}

impl AgentSession for FakeSession {
    fn history(&self) -> Vec<ChatMessage> {
        Vec::new()
    }

    fn unfinished_turn(&self) -> Option<(String, Vec<ChatMessage>)> {
        None
    }

    fn replace_history(&mut self, messages: Vec<ChatMessage>) {
        self.log
            .lock()
            .unwrap()
            .push(format!("replace {}", messages.len()));
    }

    fn limit_replies(&mut self, max_tokens: Option<u32>) {
        if let Some(n) = max_tokens {
            self.log.lock().unwrap().push(format!("limit {n}"));
        }
    }

    fn send<'a>(
        &'a mut self,
        text: &'a str,
        deltas: Option<mpsc::Sender<TurnDelta>>,
    ) -> BoxFuture<'a, Result<TurnReply, TurnError>> {
        self.log.lock().unwrap().push(format!("send {text}"));
        if let Some(set) = text.strip_prefix("enable ") {
            self.active.push(set.to_owned());
        }
        let script = self.script.clone();
        Box::pin(async move {
            let mut deltas = deltas;
            let mut say = async |piece: &str| {
                if let Some(tx) = deltas.as_mut() {
                    let _ = tx.send(TurnDelta::Text(piece.to_owned())).await;
                }
            };
            let served_by = match &script {
                Script::EchoVia(peer) => Some(peer.clone()),
                _ => None,
            };
            match script {
                Script::Echo | Script::EchoVia(_) => {
                    say("echo: ").await;
                    say(text).await;
                    Ok(TurnReply {
                        text: format!("echo: {text}"),
                        events: vec![ClientEvent::ShowText {
                            text: "shown".into(),
                        }],
                        tools: vec![ToolRecord {
                            name: "show_text".into(),
                            ok: true,
                        }],
                        usage: Some(WireUsage::new(5, 2)),
                        finish_reason: None,
                        served_by,
                        tool_turns: Vec::new(),
                    })
                }
                Script::FailAtOnce => Err(TurnError::Model("connection refused".into())),
                Script::FailMidway => {
                    say("partial").await;
                    Err(TurnError::Model("connection reset".into()))
                }
                Script::Hang { gate, dropped } => {
                    let _flag = DropFlag(dropped);
                    say("partial").await;
                    gate.notified().await;
                    Ok(TurnReply::default())
                }
            }
        })
    }

    fn active_toolsets(&self) -> Vec<String> {
        self.active.clone()
    }
}

pub struct FakeNode;

impl NodeApi for FakeNode {
    fn notes(&self, q: NotesRequest) -> BoxFuture<'_, NodeResult> {
        Box::pin(async move {
            Ok(serde_json::json!([{
                "text": "hi", "origin": q.origin, "limit": q.limit, "newest": q.newest,
                "audience": q.audience,
            }]))
        })
    }
    fn post_note(&self, note: NoteRequest) -> BoxFuture<'_, NodeResult> {
        Box::pin(async move {
            if note.text.trim().is_empty() {
                return Err(NodeApiError::BadInput("the note is empty".into()));
            }
            Ok(serde_json::json!({
                "text": note.text, "audience": note.audience,
                "reply_to": note.reply_to.map(|id| id.to_string()),
            }))
        })
    }
    fn friends(&self) -> BoxFuture<'_, NodeResult> {
        Box::pin(async { Ok(serde_json::json!([{"peer_id": ANNA, "name": "anna"}])) })
    }
    fn add_friend(
        &self,
        peer: String,
        addresses: Vec<String>,
        groups: Vec<String>,
        settings: FriendSettings,
    ) -> BoxFuture<'_, NodeResult> {
        Box::pin(async move {
            settings.none_set()?;
            Ok(serde_json::json!({"peer": peer, "addresses": addresses, "groups": groups}))
        })
    }
    fn remove_friend(&self, peer: String) -> BoxFuture<'_, NodeResult<()>> {
        Box::pin(async move {
            if peer == "stranger" {
                Err(NodeApiError::NotFound(format!("{peer} is not a friend")))
            } else {
                Ok(())
            }
        })
    }
    fn status(&self) -> BoxFuture<'_, NodeResult> {
        Box::pin(async { Ok(serde_json::json!({"peer_id": "12D3KooWfake"})) })
    }
}

pub fn clock() -> ManualClock {
    ManualClock::at(time::macros::datetime!(2026-11-30 12:00 UTC), "UTC")
}

/// State with the fake node and, given a script, the fake agent.
pub fn state(script: Option<Script>) -> (ApiState, Log) {
    let log = Log::default();
    let agent = script.map(|script| {
        Arc::new(FakeAgent {
            script,
            log: log.clone(),
        }) as Arc<dyn Agent>
    });
    let state = ApiState::new(
        Arc::new(FakeNode),
        agent,
        ApiToken::from_secret(TOKEN),
        Arc::new(clock()),
    );
    (state, log)
}

pub fn request(method: &str, path: &str, body: &str) -> Request<Body> {
    Request::builder()
        .method(method)
        .uri(path)
        .header("authorization", format!("Bearer {TOKEN}"))
        .header("content-type", "application/json")
        .body(Body::from(body.to_owned()))
        .unwrap()
}

pub async fn send(state: &ApiState, request: Request<Body>) -> Response<Body> {
    router(state.clone()).oneshot(request).await.unwrap()
}

pub async fn body_text(response: Response<Body>) -> String {
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// Sends and returns the status and the body as JSON.
pub async fn call(state: &ApiState, request: Request<Body>) -> (StatusCode, serde_json::Value) {
    let response = send(state, request).await;
    let status = response.status();
    let text = body_text(response).await;
    let json = if text.is_empty() {
        serde_json::Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
    };
    (status, json)
}

/// A chat request body.
pub fn chat_body(user: Option<&str>, stream: bool, messages: &[(&str, &str)]) -> String {
    let messages: Vec<_> = messages
        .iter()
        .map(|(role, content)| serde_json::json!({"role": role, "content": content}))
        .collect();
    let mut body = serde_json::json!({"model": "porfiry", "messages": messages, "stream": stream});
    if let Some(user) = user {
        body["user"] = user.into();
    }
    body.to_string()
}

/// The API served on a loopback port: its address, the stop switch and
/// the server's task.
pub async fn loopback_server(
    state: ApiState,
) -> (
    std::net::SocketAddr,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<std::io::Result<()>>,
) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(crate::serve(listener, state, async move {
        let _ = stopped.await;
    }));
    (addr, stop, task)
}

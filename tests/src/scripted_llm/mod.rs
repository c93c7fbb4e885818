//! A scripted OpenAI-compatible chat server on 127.0.0.1 for end-to-end tests.
//!
//! It serves `POST /v1/chat/completions`, answers each request with the first matching
//! [`Rule`] that has uses left, and records every request it receives (any path) so a test
//! can assert on exactly what a client sent. A request no rule matches gets HTTP 418 naming
//! the request; any other path gets 404.
//!
//! The server runs on its own thread with its own Tokio runtime, so it keeps answering
//! while a test blocks (waiting on a child `porfiry` process, say) and works from plain
//! `#[test]` and `#[tokio::test]` alike. Dropping the handle stops it at once, abandoning
//! delayed replies.
//!
//! A request with `"stream": true` gets server-sent events ([`streamed`]): a
//! [`Reply::Text`] split into word pieces, or a [`Reply::Stream`] built with
//! [`Reply::chunks_of`], [`Reply::every`], [`Reply::cut_after`], [`Reply::error_after`],
//! [`Reply::hang_after`], …; requests without it are answered exactly as before. The
//! server notices a client that closes a stream before its end
//! ([`ScriptedLlm::closed_streams`], [`ScriptedLlm::wait_for_disconnects`]).
//!
//! ```no_run
//! use porfiry_tests::{Reply, Rule, ScriptedLlm, When};
//! let llm = ScriptedLlm::start(vec![
//!     Rule::new(When::last_user_contains("films"), Reply::text("TOOL_CALL: read_skill|media")),
//!     Rule::always(Reply::text("Here you are.")),
//! ])
//! .unwrap();
//! // pass llm.url() (…/v1) to the client; afterwards inspect llm.requests()
//! ```

mod recorded;
mod replies;
mod rules;
mod streamed;
#[cfg(test)]
mod tests;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, Method, Uri};
use axum::response::Response;
use serde_json::Value;
use tokio::sync::oneshot;

pub use recorded::{RecordedRequest, last_message, last_user, messages, system_prompt};
pub use replies::{NO_RULE_STATUS, completion};
pub use rules::{Reply, Rule, When};
pub use streamed::{Chunking, StreamEnd, Streamed};

use rules::{RuleSlot, pick};

/// Largest request body accepted: far above any prompt a test sends, so a test never
/// trips over axum's 2 MiB default.
pub const MAX_REQUEST_BYTES: usize = 16 * 1024 * 1024;

/// The chat-completions path, under the `/v1` base that [`ScriptedLlm::url`] returns.
pub const CHAT_PATH: &str = "/v1/chat/completions";

/// The embeddings path; answered only once [`ScriptedLlm::serve_embeddings`]
/// was called (a chat-only server's 404 otherwise).
pub const EMBEDDINGS_PATH: &str = "/v1/embeddings";

/// The vector a scripted server gives one text.
pub type Embed = Arc<dyn Fn(&str) -> Vec<f32> + Send + Sync>;

#[derive(Default)]
struct Script {
    rules: Vec<RuleSlot>,
    recorded: Vec<RecordedRequest>,
    /// Numbers of the requests whose streamed body the client closed before its end.
    closed: tokio::sync::watch::Sender<Vec<usize>>,
    /// Answers `POST /v1/embeddings` when set.
    embed: Option<Embed>,
}

type Shared = Arc<Mutex<Script>>;

/// A running scripted server; stops when dropped.
pub struct ScriptedLlm {
    addr: SocketAddr,
    script: Shared,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl ScriptedLlm {
    /// Binds 127.0.0.1 on a free port and starts answering by `rules`.
    pub fn start(rules: Vec<Rule>) -> std::io::Result<Self> {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let script: Shared = Arc::default();
        lock(&script).rules = slots(rules);
        let app = Router::new()
            .fallback(handle)
            .layer(DefaultBodyLimit::max(MAX_REQUEST_BYTES))
            .with_state(script.clone());
        let (stop, stopped) = oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name(format!("scripted-llm-{}", addr.port()))
            .spawn(move || {
                runtime.block_on(async move {
                    let listener = match tokio::net::TcpListener::from_std(listener) {
                        Ok(l) => l,
                        Err(e) => return eprintln!("scripted LLM could not listen: {e}"),
                    };
                    tokio::select! {
                        served = async { axum::serve(listener, app).await } => {
                            if let Err(e) = served {
                                eprintln!("scripted LLM stopped: {e}");
                            }
                        }
                        _ = stopped => {}
                    }
                });
                runtime.shutdown_background();
            })?;
        Ok(Self {
            addr,
            script,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// A server that sends `replies` one per request, in order; after the last, 418.
    pub fn queue(replies: Vec<Reply>) -> std::io::Result<Self> {
        Self::start(replies.into_iter().map(Rule::once).collect())
    }

    /// The base URL to configure a client with: `http://127.0.0.1:PORT/v1`.
    pub fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Answers `POST /v1/embeddings` from now on, each input's vector by `f`
    /// (OpenAI's shape: `data[i].embedding`, `data[i].index`).
    pub fn serve_embeddings(&self, f: impl Fn(&str) -> Vec<f32> + Send + Sync + 'static) {
        self.lock().embed = Some(Arc::new(f));
    }

    /// Appends rules after the existing ones (they are tried last).
    pub fn add_rules(&self, rules: Vec<Rule>) {
        self.lock().rules.extend(slots(rules));
    }

    /// The JSON bodies of every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<Value> {
        self.lock()
            .recorded
            .iter()
            .map(|r| r.body.clone())
            .collect()
    }

    /// Every request received so far with its path and headers.
    pub fn recorded(&self) -> Vec<RecordedRequest> {
        self.lock().recorded.clone()
    }

    /// How many requests arrived so far.
    pub fn request_count(&self) -> usize {
        self.lock().recorded.len()
    }

    /// Numbers ([`RecordedRequest::number`]) of the requests whose streamed body the
    /// client closed before it ended (dropped the stream mid-way), in the order seen.
    /// A stream the script cut on purpose is not one of them.
    pub fn closed_streams(&self) -> Vec<usize> {
        self.lock().closed.borrow().clone()
    }

    /// How many requests the client closed before their reply ended: a streamed body cut
    /// short, or a delayed reply still waiting.
    pub fn disconnects(&self) -> usize {
        self.lock().closed.borrow().len()
    }

    /// Waits until at least `n` streamed bodies were closed by the client; returns their
    /// request numbers. Put a timeout around it: a client that never closes never wakes it.
    pub async fn wait_for_disconnects(&self, n: usize) -> Vec<usize> {
        let mut seen = self.lock().closed.subscribe();
        let closed = seen.wait_for(|closed| closed.len() >= n).await;
        // The sender lives as long as `self`, so waiting cannot fail.
        closed.map(|c| c.clone()).unwrap_or_default()
    }

    fn lock(&self) -> MutexGuard<'_, Script> {
        lock(&self.script)
    }
}

impl Drop for ScriptedLlm {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn slots(rules: Vec<Rule>) -> Vec<RuleSlot> {
    rules
        .into_iter()
        .map(|rule| RuleSlot { rule, fired: 0 })
        .collect()
}

/// The lock even after a panicking test poisoned it: the script is still readable.
fn lock(script: &Shared) -> MutexGuard<'_, Script> {
    script
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

async fn handle(
    State(script): State<Shared>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let body = serde_json::from_slice(&body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned()));
    let headers = headers
        .iter()
        .map(|(n, v)| {
            (
                n.as_str().to_owned(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let path = uri
        .path_and_query()
        .map_or_else(|| uri.path().to_owned(), |p| p.as_str().to_owned());
    let (request, reply, embed) = {
        let mut script = lock(&script);
        let request = RecordedRequest {
            number: script.recorded.len() + 1,
            method: method.to_string(),
            path,
            headers,
            body,
        };
        script.recorded.push(request.clone());
        let reply = (method == Method::POST && uri.path() == CHAT_PATH)
            .then(|| pick(&mut script.rules, &request));
        let embed = script
            .embed
            .clone()
            .filter(|_| method == Method::POST && uri.path() == EMBEDDINGS_PATH);
        (request, reply, embed)
    };
    if let Some(embed) = embed {
        return replies::embeddings(&request, &*embed);
    }
    let number = request.number;
    let watch = move || {
        let script = script.clone();
        streamed::Watch::new(move || {
            lock(&script)
                .closed
                .send_modify(|closed| closed.push(number));
        })
    };
    match reply {
        None => replies::no_route(&request),
        Some(None) => replies::no_rule(&request),
        Some(Some(reply)) => replies::respond(reply, &request, &watch).await,
    }
}

//! A tiny OpenAI-compatible server standing in for a vLLM or Ollama server:
//! `POST /v1/chat/completions` answered from the request alone, so the same
//! request always gets the same answer. The core's main call gets a short
//! thought — a third of them one fixed sentence, so minds repeat themselves
//! and the core sees loops — and every other call (the reflex questions) a
//! JSON evaluation. It counts what it served and stops when dropped.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::JoinHandle;

use axum::extract::State;
use axum::routing::post;
use axum::{Json, Router};
use porfiry_skills::Language;
use porfiry_skills::cognition::texts::prompt::core_system_prompt;
use serde_json::{Value, json};
use tokio::sync::oneshot;

/// Words the thoughts are made of.
const WORDS: [&str; 16] = [
    "river", "lantern", "orbit", "garden", "signal", "harbour", "winter", "copper", "meadow",
    "engine", "violin", "compass", "pebble", "thunder", "library", "saddle",
];

/// A running server.
pub struct FakeLlm {
    addr: SocketAddr,
    served: Arc<AtomicU64>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl FakeLlm {
    /// Binds a free loopback port and serves on a thread of its own.
    pub fn start() -> FakeLlm {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let addr = listener.local_addr().expect("addr");
        let served = Arc::new(AtomicU64::new(0));
        let app = Router::new()
            .route("/v1/chat/completions", post(chat))
            .with_state(served.clone());
        let (stop, stopped) = oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                axum::serve(listener, app)
                    .with_graceful_shutdown(async {
                        let _ = stopped.await;
                    })
                    .await
                    .expect("serves");
            });
        });
        FakeLlm {
            addr,
            served,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// The base URL (`http://127.0.0.1:PORT/v1`).
    pub fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Requests answered so far.
    pub fn served(&self) -> u64 {
        self.served.load(Ordering::SeqCst)
    }
}

impl Drop for FakeLlm {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// FNV-1a of the request's messages: the answer's only input.
fn digest(messages: &Value) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in messages.to_string().bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

async fn chat(State(served): State<Arc<AtomicU64>>, Json(body): Json<Value>) -> Json<Value> {
    served.fetch_add(1, Ordering::SeqCst);
    let messages = &body["messages"];
    let system = messages[0]["content"].as_str().unwrap_or_default();
    let first = core_system_prompt(Language::En)
        .lines()
        .next()
        .unwrap_or("-")
        .to_owned();
    let mut h = digest(messages);
    let content = if system.starts_with(&first) {
        if h.is_multiple_of(3) {
            "I keep returning to the same question and nothing moves.".to_owned()
        } else {
            let words: Vec<&str> = (0..6)
                .map(|_| {
                    h = h.rotate_left(7) ^ 0x9E37_79B9_7F4A_7C15;
                    // Modulo 16: the index fits.
                    WORDS[(h % WORDS.len() as u64) as usize]
                })
                .collect();
            format!("A new thought: {}.", words.join(" "))
        }
    } else {
        let novel = !h.is_multiple_of(3);
        format!(
            r#"{{"novel": "{}", "novelty": {}, "new_ideas": [], "refined_ideas": [], "discarded_ideas": [], "tags": ["thinking"], "emotions": ["{}"]}}"#,
            if novel { "yes" } else { "no" },
            if novel { 0.7 } else { 0.05 },
            if novel { "interest:3" } else { "boredom:3" }
        )
    };
    Json(json!({
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": body["model"],
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content},
            "finish_reason": "stop"
        }],
        "usage": {"prompt_tokens": 10, "completion_tokens": 6, "total_tokens": 16}
    }))
}

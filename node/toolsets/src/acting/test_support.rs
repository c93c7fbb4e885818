//! Test helpers for the acting sets (the database and call context come
//! from [`crate::test_support`]): a call through the argument
//! grammar, waiting for a job's end, and a tiny OpenAI-compatible HTTP
//! server whose answer depends on the model asked:
//! - `silent`: never answers (deadline paths);
//! - `broken`: HTTP 400 (a final error, no retries);
//! - anything else: `"<model> says: <last user message>"`.
//!
//! Every request body it receives is kept, so a test can read what went on
//! the wire.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use porfiry_skills::{CallContext, ToolOutput, Toolset, bind};
use porfiry_storage::{LlmConfig, LlmEntry};

use porfiry_mesh::events::CoreEvent;

/// The time the `process` and `llm` tests call at (Unix ms).
pub const NOW: i64 = 1_700_000_000_000;

/// A test's limit on waiting for a background job's event: only guards
/// against a hang, never asserts speed.
pub const EVENT_WAIT: Duration = Duration::from_secs(30);

/// Calls `tool` of `set` with `raw` arguments bound to its schema (as the
/// registry does); a binding error fails the test.
pub async fn call(set: &dyn Toolset, tool: &str, raw: &str, ctx: &CallContext) -> ToolOutput {
    let spec = set
        .tools()
        .iter()
        .find(|t| t.name == tool)
        .unwrap_or_else(|| panic!("{tool} is not in {}", set.name()));
    let args = bind(&spec.args, raw).unwrap_or_else(|e| panic!("{tool}|{raw}: {e}"));
    set.call(tool, &args, ctx).await
}

/// Waits for the next `ProcessFinished` and returns its id.
pub async fn finished(rx: &mut tokio::sync::broadcast::Receiver<CoreEvent>) -> i64 {
    loop {
        let event = tokio::time::timeout(EVENT_WAIT, rx.recv())
            .await
            .expect("no event in time")
            .unwrap();
        if let CoreEvent::ProcessFinished { id } = event {
            return id;
        }
    }
}

/// The scripted server: its base URL and the bodies it received.
pub struct ScriptedServer {
    /// `http://127.0.0.1:PORT/v1`.
    pub base: String,
    /// Request bodies, in arrival order.
    pub bodies: Arc<Mutex<Vec<serde_json::Value>>>,
}

impl ScriptedServer {
    /// Starts the server on a free loopback port.
    pub async fn start() -> Self {
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let app = axum::Router::new()
            .route("/v1/chat/completions", axum::routing::post(answer))
            .with_state(bodies.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self {
            base: format!("http://{addr}/v1"),
            bodies,
        }
    }

    /// A registry row for `model` on this server (no retries, so a failure
    /// is final at once).
    pub fn entry(&self, name: &str, model: &str) -> LlmEntry {
        LlmEntry {
            name: name.into(),
            endpoint: self.base.clone(),
            model: model.into(),
            config: LlmConfig {
                max_retries: Some(0),
                ..LlmConfig::default()
            },
            ..LlmEntry::default()
        }
    }
}

async fn answer(
    State(bodies): State<Arc<Mutex<Vec<serde_json::Value>>>>,
    Json(body): Json<serde_json::Value>,
) -> Response {
    bodies.lock().unwrap().push(body.clone());
    let model = body["model"].as_str().unwrap_or_default().to_owned();
    match model.as_str() {
        "silent" => std::future::pending::<Response>().await,
        "broken" => (StatusCode::BAD_REQUEST, "model exploded").into_response(),
        _ => {
            let question = body["messages"]
                .as_array()
                .and_then(|m| m.last())
                .and_then(|m| m["content"].as_str())
                .unwrap_or_default();
            Json(serde_json::json!({
                "choices": [{"message": {"role": "assistant",
                    "content": format!("{model} says: {question}")},
                    "finish_reason": "stop"}]
            }))
            .into_response()
        }
    }
}

//! Requests per second and added latency of `POST /v1/chat/completions`
//! through the whole API (loopback TCP, HTTP/1.1 keep-alive, auth, JSON,
//! session, the real `ChatEngine` tool loop) with an instant in-process
//! model, so every microsecond measured is the node's own.
//!
//! A bench program, not criterion: it runs the server on a 2-worker runtime
//! (the goal is stated for 2 cores), drives it from `CONNECTIONS` client
//! connections on another thread for `MEASURE` after a warm-up, and prints
//! requests/s and p50/p99 latency, plain and streamed.
//!
//! `cargo bench -p porfiry-api --bench api`

use std::sync::Arc;
use std::time::{Duration, Instant};

use porfiry_agent::chat::{ChatConfig, ChatEngine, Llm, ModelError, ModelRequest, SystemClock};
use porfiry_agent::llm::LlmTarget;
use porfiry_api::adapters::ChatAgent;
use porfiry_api::backend::{BoxFuture as ApiFuture, NodeApi, NodeResult};
use porfiry_api::{ApiState, ApiToken, serve};
use porfiry_skills::{BoxFuture, Completion};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

const TOKEN: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
/// Concurrent client connections: a few chat UIs' worth, enough to keep 2 cores busy.
const CONNECTIONS: usize = 8;
const WARM_UP: Duration = Duration::from_millis(500);
const MEASURE: Duration = Duration::from_secs(3);

/// Answers every request at once with a short answer.
struct InstantModel;

impl Llm for InstantModel {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<Completion, ModelError>> {
        std::hint::black_box(request);
        Box::pin(async { Ok(Completion::text("Hello! How can I help?")) })
    }
}

/// The node endpoints are not measured here.
struct NoNode;

impl NodeApi for NoNode {
    fn notes(&self, _: porfiry_api::backend::NotesRequest) -> ApiFuture<'_, NodeResult> {
        Box::pin(async { Ok(serde_json::Value::Null) })
    }
    fn post_note(&self, _: porfiry_api::backend::NoteRequest) -> ApiFuture<'_, NodeResult> {
        Box::pin(async { Ok(serde_json::Value::Null) })
    }
    fn friends(&self) -> ApiFuture<'_, NodeResult> {
        Box::pin(async { Ok(serde_json::Value::Null) })
    }
    fn add_friend(
        &self,
        _: String,
        _: Vec<String>,
        _: Vec<String>,
        _: porfiry_api::backend::FriendSettings,
    ) -> ApiFuture<'_, NodeResult> {
        Box::pin(async { Ok(serde_json::Value::Null) })
    }
    fn remove_friend(&self, _: String) -> ApiFuture<'_, NodeResult<()>> {
        Box::pin(async { Ok(()) })
    }
    fn status(&self) -> ApiFuture<'_, NodeResult> {
        Box::pin(async { Ok(serde_json::Value::Null) })
    }
}

fn request_bytes(stream: bool, user: &str) -> Vec<u8> {
    let body = format!(
        r#"{{"model":"porfiry","user":"{user}","stream":{stream},"messages":[{{"role":"system","content":"You are a helpful assistant."}},{{"role":"user","content":"hi there"}}]}}"#
    );
    format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Reads one response (Content-Length or chunked) off a keep-alive connection.
async fn read_response(conn: &mut TcpStream, buf: &mut Vec<u8>) {
    buf.clear();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        let n = conn.read(&mut chunk).await.expect("read");
        assert!(n > 0, "server closed the connection");
        buf.extend_from_slice(&chunk[..n]);
        let Some(end) = find(buf, b"\r\n\r\n") else {
            continue;
        };
        let head = std::str::from_utf8(&buf[..end])
            .expect("utf-8 head")
            .to_ascii_lowercase();
        assert!(head.starts_with("http/1.1 200"), "{head}");
        let body = &buf[end + 4..];
        if let Some(len) = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length: "))
            .and_then(|v| v.trim().parse::<usize>().ok())
        {
            if body.len() >= len {
                return;
            }
        } else if body.ends_with(b"0\r\n\r\n") {
            return;
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

async fn client(
    addr: std::net::SocketAddr,
    stream: bool,
    id: usize,
    until: Instant,
    measure_from: Instant,
) -> Vec<Duration> {
    let mut conn = TcpStream::connect(addr).await.expect("connect");
    conn.set_nodelay(true).expect("nodelay");
    let request = request_bytes(stream, &format!("bench-{id}"));
    let mut buf = Vec::with_capacity(16 * 1024);
    let mut latencies = Vec::new();
    loop {
        let start = Instant::now();
        if start >= until {
            return latencies;
        }
        conn.write_all(&request).await.expect("write");
        read_response(&mut conn, &mut buf).await;
        if start >= measure_from {
            latencies.push(start.elapsed());
        }
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn run(addr: std::net::SocketAddr, stream: bool) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("client runtime");
    let measure_from = Instant::now() + WARM_UP;
    let until = measure_from + MEASURE;
    let mut all: Vec<Duration> = runtime.block_on(async {
        let tasks: Vec<_> = (0..CONNECTIONS)
            .map(|id| tokio::spawn(client(addr, stream, id, until, measure_from)))
            .collect();
        let mut all = Vec::new();
        for task in tasks {
            all.extend(task.await.expect("client task"));
        }
        all
    });
    all.sort();
    let per_sec = all.len() as f64 / MEASURE.as_secs_f64();
    println!(
        "{:<8} {:>10.0} req/s   p50 {:>7.3} ms   p99 {:>7.3} ms   ({} requests, {CONNECTIONS} connections)",
        if stream { "stream" } else { "plain" },
        per_sec,
        percentile(&all, 0.50).as_secs_f64() * 1e3,
        percentile(&all, 0.99).as_secs_f64() * 1e3,
        all.len(),
    );
}

fn main() {
    // `cargo bench` passes `--bench`; any filter argument is ignored.
    let server = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("server runtime");
    let config = ChatConfig::new(LlmTarget::new("http://unused/v1", "instant"));
    let engine = ChatEngine::with_llm(&config, Arc::new(InstantModel)).expect("engine");
    let agent = Arc::new(ChatAgent::new(Arc::new(engine), "instant"));
    let state = ApiState::new(
        Arc::new(NoNode),
        Some(agent),
        ApiToken::from_secret(TOKEN),
        Arc::new(SystemClock::utc()),
    );
    let listener = server
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let served = server.spawn(serve(listener, state, async move {
        let _ = stopped.await;
    }));
    println!("POST /v1/chat/completions, instant in-process model, server on 2 worker threads");
    run(addr, false);
    run(addr, true);
    let _ = stop.send(());
    server
        .block_on(served)
        .expect("server task")
        .expect("server");
}

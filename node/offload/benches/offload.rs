//! What offload adds over calling the model directly: two real mesh drivers
//! on loopback (TCP + noise + yamux, `/porfiry/offload/1`), the server's
//! `OffloadServer` in front of an in-process streaming model, the phone's
//! `FriendLlm`; the same model called in-process is the baseline. Per call:
//! round trip (request to `Done`) and time to the first token; per run: tokens
//! per second, with an instant model (the link's capacity) and with a model
//! paced at `PACED_TOKENS_PER_SEC` (passthrough of a fast local model).
//!
//! A bench program, not criterion: `cargo bench -p porfiry-offload --bench offload`.

#[allow(missing_docs)]
#[path = "../../net/tests/mesh_support/mod.rs"]
mod mesh_support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use mesh_support::friends_pair;
use porfiry_mesh::net::MeshEvent;
use porfiry_mesh::net::limits::MAX_TRANSPORT_FRAME_BYTES;
use porfiry_offload::{FriendLlm, FriendLlmConfig, OffloadServer, ServerLimits, serve_incoming};
use porfiry_skills::llm::{
    BoxFuture, ChatMessage, Completion, Delta, DeltaStream, Llm, LlmError, ModelRequest,
};

/// Tokens per answer: a short chat answer.
const TOKENS: usize = 100;
/// Calls measured per mode.
const CALLS: usize = 300;
/// The paced model's speed: a fast local model on a server GPU.
const PACED_TOKENS_PER_SEC: u64 = 1_000;

/// Streams `TOKENS` tokens, at once or paced.
struct Model {
    pace: Option<Duration>,
}

impl Llm for Model {
    fn complete<'a>(&'a self, _: &'a ModelRequest) -> BoxFuture<'a, Result<Completion, LlmError>> {
        Box::pin(async { Ok(Completion::text("x")) })
    }

    fn stream<'a>(&'a self, _: &'a ModelRequest) -> BoxFuture<'a, Result<DeltaStream, LlmError>> {
        let pace = self.pace;
        Box::pin(async move {
            let tokens = futures::stream::iter(0..TOKENS).then(move |i| async move {
                if let Some(p) = pace {
                    tokio::time::sleep(p).await;
                }
                Ok(Delta::Text(format!("tok{i} ")))
            });
            let done = futures::stream::iter([Ok(Delta::Done {
                finish_reason: Some("stop".into()),
                usage: None,
                served_by: None,
            })]);
            Ok(Box::pin(tokens.chain(done)) as DeltaStream)
        })
    }
}

fn request() -> ModelRequest {
    ModelRequest {
        system: "You are a helpful assistant.".into(),
        messages: vec![ChatMessage::user("Tell me something.")],
        max_tokens: None,
        grammar: None,
        stop: Vec::new(),
    }
}

/// One call: (round trip, time to first token).
async fn call(llm: &dyn Llm) -> (Duration, Duration) {
    let start = Instant::now();
    let mut stream = llm.stream(&request()).await.expect("stream");
    let mut first = None;
    while let Some(item) = stream.next().await {
        match item.expect("delta") {
            Delta::Text(_) => {
                first.get_or_insert_with(|| start.elapsed());
            }
            Delta::Done { .. } => break,
        }
    }
    (start.elapsed(), first.unwrap_or_default())
}

struct Figures {
    p50_ms: f64,
    p99_ms: f64,
    ttft_p50_ms: f64,
    tokens_per_sec: f64,
}

async fn measure(llm: &dyn Llm, calls: usize) -> Figures {
    for _ in 0..calls / 10 {
        call(llm).await;
    }
    let mut rt = Vec::with_capacity(calls);
    let mut ttft = Vec::with_capacity(calls);
    let start = Instant::now();
    for _ in 0..calls {
        let (r, f) = call(llm).await;
        rt.push(r);
        ttft.push(f);
    }
    let total = start.elapsed();
    rt.sort();
    ttft.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1_000.0;
    Figures {
        p50_ms: ms(rt[calls / 2]),
        p99_ms: ms(rt[calls * 99 / 100]),
        ttft_p50_ms: ms(ttft[calls / 2]),
        tokens_per_sec: (calls * TOKENS) as f64 / total.as_secs_f64(),
    }
}

fn print(label: &str, f: &Figures) {
    println!(
        "{label:<28} round trip p50 {:>8.3} ms  p99 {:>8.3} ms  first token p50 {:>8.3} ms  {:>10.0} tokens/s",
        f.p50_ms, f.p99_ms, f.ttft_p50_ms, f.tokens_per_sec
    );
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let (mut s, _, mut p) = friends_pair(MAX_TRANSPORT_FRAME_BYTES).await;
        for node in [&mut s, &mut p] {
            let (_tx, mut events) = tokio::sync::mpsc::channel::<MeshEvent>(1);
            std::mem::swap(&mut node.events, &mut events);
            tokio::spawn(async move { while events.recv().await.is_some() {} });
        }
        println!(
            "offload over loopback mesh vs the same model in-process, {TOKENS} tokens per answer, {CALLS} calls"
        );
        for (label, pace) in [
            ("instant", None),
            (
                "paced",
                Some(Duration::from_micros(1_000_000 / PACED_TOKENS_PER_SEC)),
            ),
        ] {
            let model: Arc<dyn Llm> = Arc::new(Model { pace });
            let phone = p.peer;
            let server = OffloadServer::new(
                model.clone(),
                Arc::new(move |peer: &libp2p::PeerId| *peer == phone),
                ServerLimits::default(),
            );
            let incoming = s.handle.streams().accept().expect("accept");
            let serving = tokio::spawn(serve_incoming(server, incoming));
            let friend = FriendLlm::new(
                Arc::new(p.handle.streams()),
                "bench",
                vec![s.peer],
                FriendLlmConfig::default(),
            );
            let calls = if pace.is_some() { CALLS / 10 } else { CALLS };
            let direct = measure(model.as_ref(), calls).await;
            let offload = measure(&friend, calls).await;
            print(&format!("{label}: direct"), &direct);
            print(&format!("{label}: offload"), &offload);
            println!(
                "{label}: offload adds p50 {:.3} ms, first token {:.3} ms; passthrough {:.1} % of direct",
                offload.p50_ms - direct.p50_ms,
                offload.ttft_p50_ms - direct.ttft_p50_ms,
                100.0 * offload.tokens_per_sec / direct.tokens_per_sec
            );
            serving.abort();
            let _ = serving.await;
        }
    });
}

//! Cost of the node's chat layer apart from the model: one whole seed
//! scenario turn (read_skill → enable → search → answer, four model calls)
//! through `ChatEngine`/`ChatSession` with an instant in-process model, and
//! the media toolset's catalogue load and search on a 10,000-film catalogue.

// `criterion_group!` generates an undocumented `pub fn`; a bench has no API to document.
#![allow(missing_docs)]

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use porfiry_agent::chat::{
    ChatConfig, ChatEngine, Clock, Language, Llm, ManualClock, ModelError, ModelRequest,
    SystemClock,
};
use porfiry_agent::llm::LlmTarget;
use porfiry_skills::{BoxFuture, CallContext, Caller, Completion, ToolsetRegistry};
use porfiry_toolsets::MediaToolset;
use porfiry_toolsets::media_catalog::parse_catalog;

/// The scenario's four replies, in turn order.
const SCRIPT: [&str; 4] = [
    "TOOL_CALL: read_skill|media",
    "TOOL_CALL: enable_toolset|media",
    "TOOL_CALL: media_search|lara croft",
    "Found three Lara Croft films.",
];

/// Answers instantly with the next reply of [`SCRIPT`].
#[derive(Default)]
struct Instant {
    calls: AtomicUsize,
}

impl Llm for Instant {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<Completion, ModelError>> {
        black_box(request);
        let n = self.calls.fetch_add(1, Ordering::Relaxed);
        let reply = SCRIPT[n % SCRIPT.len()].to_owned();
        Box::pin(async move { Ok(Completion::text(reply)) })
    }
}

fn scenario_turn(c: &mut Criterion) {
    let model = Arc::new(Instant::default());
    let config = ChatConfig::new(LlmTarget::new("http://unused/v1", "m"));
    let clock = Arc::new(ManualClock::new(SystemClock::utc().now()));
    let engine = ChatEngine::with_llm(&config, model)
        .expect("sample catalogue and built-in skills load")
        .with_clock(clock);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    c.bench_function("chat_turn_read_enable_search_answer", |b| {
        b.iter_batched(
            || engine.session(),
            |mut session| {
                let reply = runtime
                    .block_on(session.send("Find me Lara Croft films"))
                    .expect("instant model");
                black_box(reply)
            },
            BatchSize::SmallInput,
        );
    });
}

/// `n` films as catalogue JSON, a few of them Lara Croft films.
fn big_catalogue(n: usize) -> String {
    let films: Vec<serde_json::Value> = (0..n)
        .map(|i| {
            let title = if i % 1000 == 7 {
                format!("Lara Croft part {i}")
            } else {
                format!("Film number {i} of the home library")
            };
            serde_json::json!({
                "id": format!("id{i}"),
                "title": title,
                "year": 1950 + (i % 75) as i32,
                "description": "A story about people, places and the things they want most.",
            })
        })
        .collect();
    serde_json::to_string(&films).expect("json")
}

fn catalogue(c: &mut Criterion) {
    let json = big_catalogue(10_000);
    c.bench_function("media_catalog_parse_10k", |b| {
        b.iter(|| parse_catalog(black_box(&json), "bench").expect("valid"));
    });
    let films = parse_catalog(&json, "bench").expect("valid");
    let mut registry = ToolsetRegistry::new();
    registry
        .register(MediaToolset::new(films, Language::En))
        .expect("media registers");
    let ctx = CallContext::new(
        "bench",
        Caller::User,
        SystemClock::utc().now(),
        Language::En,
    );
    c.bench_function("media_search_10k", |b| {
        b.iter(|| {
            let prepared = registry
                .prepare("media_search", black_box("lara croft"))
                .expect("fits");
            futures::executor::block_on(prepared.run(&ctx))
        });
    });
}

criterion_group!(benches, scenario_turn, catalogue);
criterion_main!(benches);

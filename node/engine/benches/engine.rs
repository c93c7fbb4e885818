//! The embedded engine's figures for docs/benchmarks.md, with the real test
//! model (`PORFIRY_TEST_GGUF`): prompt and generation tokens/s, time to the
//! first token of a fresh prompt and of a second turn that reuses the
//! first's prefix from the KV cache, and the process's RSS with the model
//! loaded. A plain program (harness = false): each figure is one timed run
//! of a whole model call, which criterion's many-iteration loop would only
//! repeat for minutes. A third call generates exactly [`GENERATE`] tokens
//! under a grammar that does not let the answer end before them, so two
//! models (a base and the file taught from it, which stops sooner) are
//! compared on the same number of tokens. Run:
//! `cargo bench -p porfiry-engine --bench engine` (add `-- --threads N`).

use std::time::{Duration, Instant};

use futures::StreamExt;
use porfiry_engine::test_model::test_model_path;
use porfiry_engine::{Engine, EngineOptions};
use porfiry_skills::llm::{ChatMessage, Delta, Llm, ModelRequest};

/// Tokens generated for the generation rate: long enough that the first
/// token's prompt cost is a small share, short enough for a 2-core run.
const GENERATE: u32 = 128;

/// The grammar of the fixed-length answer: words of letters, more of them
/// than [`GENERATE`] tokens can hold, so the answer cannot end on its own
/// and runs to the budget (`finish_reason: "length"`). Both sides of a
/// comparison pay the same grammar cost per token.
const UNENDING: &str = "root ::= word{400}\nword ::= [a-z]{1,8} \" \"\n";

/// Paragraphs in the first turn's prompt: about 600 tokens, the size of a
/// tool-loop prompt with a toolset on.
const PARAGRAPHS: usize = 12;

struct Timed {
    first_token: Duration,
    total: Duration,
    prompt_tokens: u64,
    completion_tokens: u64,
}

async fn timed(engine: &Engine, request: &ModelRequest) -> (Timed, String) {
    let start = Instant::now();
    let mut stream = engine.stream(request).await.expect("enqueue");
    let mut first = None;
    let mut text = String::new();
    while let Some(delta) = stream.next().await {
        match delta.expect("delta") {
            Delta::Text(t) => {
                first.get_or_insert_with(|| start.elapsed());
                text.push_str(&t);
            }
            Delta::Done { usage, .. } => {
                let usage = usage.expect("usage");
                let total = start.elapsed();
                return (
                    Timed {
                        first_token: first.unwrap_or(total),
                        total,
                        prompt_tokens: usage.prompt_tokens,
                        completion_tokens: usage.completion_tokens,
                    },
                    text,
                );
            }
        }
    }
    panic!("the stream ended without Done");
}

fn rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let threads = args
        .iter()
        .position(|a| a == "--threads")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok());
    let path = test_model_path().unwrap_or_else(|e| panic!("{e}"));
    let rss_before = rss_mb();
    let load = Instant::now();
    let engine = Engine::open(
        &path,
        &EngineOptions {
            threads,
            ..EngineOptions::default()
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let load = load.elapsed();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let paragraph = "The lighthouse keeper wrote in his log every evening: the wind, the \
                     ships that passed, the colour of the sea and the state of the lamp. ";
    let system = format!(
        "You are a helpful assistant. Background notes:\n{}",
        paragraph.repeat(PARAGRAPHS)
    );
    let first = ModelRequest::new(
        system,
        vec![ChatMessage::user("Summarise the notes in one sentence.")],
        Some(GENERATE),
    );
    rt.block_on(async {
        let (one, answer) = timed(&engine, &first).await;
        let rss_loaded = rss_mb();
        let mut second = first.clone();
        second.messages.push(ChatMessage::assistant(answer));
        second
            .messages
            .push(ChatMessage::user("Now say it in five words."));
        let before = engine.stats();
        let (two, _) = timed(&engine, &second).await;
        let reused = engine.stats().reused_tokens - before.reused_tokens;
        let prompt_rate = one.prompt_tokens as f64 / one.first_token.as_secs_f64();
        let gen_time = one.total.saturating_sub(one.first_token).as_secs_f64();
        let gen_rate = (one.completion_tokens.saturating_sub(1)) as f64 / gen_time.max(1e-9);
        println!("model: {}", path.display());
        println!(
            "threads: {}  context: {}  load: {:.2} s",
            engine.info().threads,
            engine.info().context,
            load.as_secs_f64()
        );
        println!(
            "first turn: {} prompt tokens, first token after {:.0} ms ({prompt_rate:.0} prompt tokens/s)",
            one.prompt_tokens,
            one.first_token.as_secs_f64() * 1e3
        );
        println!(
            "generation: {} tokens in {:.2} s ({gen_rate:.1} tokens/s)",
            one.completion_tokens, gen_time
        );
        println!(
            "second turn: {} prompt tokens, {reused} reused from the KV cache, first token after \
             {:.0} ms ({:.2} x the first turn's)",
            two.prompt_tokens,
            two.first_token.as_secs_f64() * 1e3,
            two.first_token.as_secs_f64() / one.first_token.as_secs_f64()
        );
        let fixed = ModelRequest::new(
            "You are a helpful assistant.".to_owned(),
            vec![ChatMessage::user("Write a long story about the sea.")],
            Some(GENERATE),
        )
        .with_grammar(Some(UNENDING.to_owned()));
        let (three, _) = timed(&engine, &fixed).await;
        let fixed_time = three.total.saturating_sub(three.first_token).as_secs_f64();
        println!(
            "fixed-length generation: {} tokens in {:.2} s ({:.1} tokens/s, grammar-bound)",
            three.completion_tokens,
            fixed_time,
            three.completion_tokens.saturating_sub(1) as f64 / fixed_time.max(1e-9)
        );
        println!(
            "RSS: {rss_before:.0} MB before loading, {rss_loaded:.0} MB with the model loaded \
             and one answer made (file: {} MB)",
            engine.info().gguf.file_bytes / 1_000_000
        );
    });
}

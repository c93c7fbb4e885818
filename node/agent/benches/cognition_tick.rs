//! The cognitive core's own cost per tick, without the model: an instant
//! in-process model (each reply new, so the full path runs: prompt,
//! reflexes, record, detectors), on a fresh node and on a busy one (10,000
//! diary entries, 100,000 notes, auto notes mode). Prints the tick time
//! p50/p95, prompt tokens and model calls per tick.
//!
//! A bench program, not criterion: `cargo bench -p porfiry-agent --bench cognition_tick`.

#[allow(missing_docs)]
#[path = "../tests/core_support/mod.rs"]
mod core_support;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use core_support::*;
use porfiry_agent::cognition::{CoreEvents, Trace};
use porfiry_skills::Language;

/// Ticks measured per node.
const TICKS: usize = 200;

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        for busy in [false, true] {
            let tmp = tempfile::tempdir().unwrap();
            let db = fresh_db(tmp.path());
            if busy {
                fill_busy(&db).await;
            }
            let n = AtomicU64::new(0);
            let main = ScriptLlm::new("main", move |req| {
                if is_main_call(req, Language::En) {
                    let i = n.fetch_add(1, Ordering::Relaxed);
                    Ok(format!("Thought number {i}: something new about topic {}.", i * 7919 % 1000))
                } else {
                    Ok(r#"{"novel": "yes", "novelty": 0.7, "new_ideas": ["x"], "tags": ["t"]}"#.into())
                }
            });
            let mut core = core(
                &db,
                ScriptMaker::default().with(main.clone()),
                "main",
                start_clock(),
                CoreEvents::new(),
                Trace::off(),
            )
            .await;
            let mut times = Vec::with_capacity(TICKS);
            let mut tokens = Vec::with_capacity(TICKS);
            let mut calls = 0u32;
            for _ in 0..TICKS {
                let started = Instant::now();
                let done = core.tick().await.unwrap();
                times.push(started.elapsed().as_secs_f64() * 1000.0);
                tokens.push(done.report.prompt_tokens);
                calls += done.report.model_calls;
            }
            times.sort_by(f64::total_cmp);
            tokens.sort_unstable();
            println!(
                "{} node: tick p50 {:.2} ms, p95 {:.2} ms; prompt tokens p50 {}, max {}; model calls per tick {:.1}",
                if busy { "busy (10k diary, 100k notes)" } else { "fresh" },
                times[TICKS / 2],
                times[TICKS * 95 / 100],
                tokens[TICKS / 2],
                tokens[TICKS - 1],
                f64::from(calls) / TICKS as f64
            );
            db.close().await;
        }
    });
}

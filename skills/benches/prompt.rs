//! Benchmarks of the tool loop: prompt build for 10 sets × 5 tools and 30
//! skills (goal ≤ 20 µs), one whole turn with an instant model (goal ≤ 1 ms),
//! and the prompt's size in cl100k tokens per state (printed, not timed).
//!
//! Run: `cargo bench -p porfiry-skills --bench prompt -- --warm-up-time 1 --measurement-time 3`

// `criterion_group!` generates an undocumented `pub fn`; a bench has no API to document.
#![allow(missing_docs)]

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use porfiry_skills::{
    ArgSpec, Args, BoxFuture, ChatSession, Completion, Language, Llm, LlmError, LoopConfig,
    ManualClock, ModelRequest, Session, Skill, SkillOrigin, SkillRegistry, SkillRepository,
    ToolOutput, ToolSpec, Toolbox, Toolset, ToolsetRegistry, ZonedTime,
};
use time::macros::datetime;

/// The test suite's film toolset named `media`, shared with the bench.
#[path = "../tests/common/films.rs"]
mod films;

use films::{Film, Films};

/// A toolset of `n` generated tools.
struct Synthetic {
    name: String,
    summary: String,
    tools: Vec<ToolSpec>,
}

impl Synthetic {
    fn new(i: usize, n: usize) -> Self {
        let name = format!("set{i}");
        let tools = (0..n)
            .map(|t| {
                ToolSpec::new(
                    &format!("{name}_verb{t}"),
                    "does one short thing",
                    vec![ArgSpec::word("id"), ArgSpec::text("text").optional()],
                )
            })
            .collect();
        Self {
            summary: format!("set number {i}: five tools"),
            name,
            tools,
        }
    }
}

impl Toolset for Synthetic {
    fn name(&self) -> &str {
        &self.name
    }
    fn summary(&self) -> &str {
        &self.summary
    }
    fn tools(&self) -> &[ToolSpec] {
        &self.tools
    }
    fn call(&self, tool: &str, args: &Args) -> ToolOutput {
        ToolOutput::ok(format!("{tool} ran on {}", args.text("id")))
    }
}

fn films() -> Vec<Film> {
    (0..200)
        .map(|i| Film {
            id: format!("tt{i:07}"),
            title: if i == 42 {
                "Lara Croft: Tomb Raider".into()
            } else {
                format!("Film number {i}")
            },
            year: Some(1950 + (i % 70)),
            description: "A film in the sample catalogue.".into(),
        })
        .collect()
}

fn big_toolbox() -> Toolbox {
    let mut sets = ToolsetRegistry::new();
    for i in 0..10 {
        sets.register(Synthetic::new(i, 5)).expect("valid set");
    }
    let skills = SkillRegistry::from_skills((0..30).map(|i| Skill {
        name: format!("skill-{i}"),
        description: format!(
            "when the user asks about topic {i}, call enable_toolset|set{}",
            i % 10
        ),
        toolset: Some(format!("set{}", i % 10)),
        body: "steps".into(),
        origin: SkillOrigin::Builtin,
    }));
    Toolbox::new(sets, skills, LoopConfig::default())
}

fn media_toolbox(language: Language) -> Arc<Toolbox> {
    let mut sets = ToolsetRegistry::new();
    sets.register(Films::new(films(), language))
        .expect("valid set");
    let skills = SkillRepository::new(language).load().registry;
    Arc::new(Toolbox::new(
        sets,
        skills,
        LoopConfig::in_language(language),
    ))
}

fn bench_prompt_build(c: &mut Criterion) {
    let tb = big_toolbox();
    c.bench_function("prompt_build/10x5_tools_30_skills/none_active", |b| {
        b.iter(|| black_box(tb.prompt().build(black_box(&[]))))
    });
    c.bench_function("prompt_build/10x5_tools_30_skills/one_active", |b| {
        b.iter(|| black_box(tb.prompt().build(black_box(&["set3"]))))
    });
    c.bench_function("prompt_build/10x5_tools_30_skills/three_active", |b| {
        b.iter(|| black_box(tb.prompt().build(black_box(&["set7", "set1", "set3"]))))
    });
    c.bench_function("toolbox_new/10x5_tools_30_skills", |b| b.iter(big_toolbox));
}

/// Answers instantly from a fixed cycle of replies.
struct InstantLlm {
    replies: Vec<&'static str>,
    next: AtomicUsize,
}

impl Llm for InstantLlm {
    fn complete<'a>(
        &'a self,
        _request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<Completion, LlmError>> {
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        let reply = self.replies[i % self.replies.len()].to_owned();
        Box::pin(async move { Ok(Completion::text(reply)) })
    }
}

fn bench_turn(c: &mut Criterion) {
    let tb = media_toolbox(Language::En);
    let clock = Arc::new(ManualClock::new(ZonedTime::new(
        datetime!(2026-08-22 14:05:00 +03:00),
        "Europe/Moscow",
    )));
    // One turn: search (direct execution, activates media) → answer.
    c.bench_function("turn/search_then_answer/instant_model", |b| {
        b.iter_batched(
            || {
                let llm = InstantLlm {
                    replies: vec![
                        "TOOL_CALL: media_search|lara croft",
                        "It is Lara Croft: Tomb Raider (2001).",
                    ],
                    next: AtomicUsize::new(0),
                };
                ChatSession::new(tb.clone(), Arc::new(llm), clock.clone())
            },
            |mut chat| {
                let reply =
                    futures::executor::block_on(chat.send("find Lara Croft")).expect("instant");
                black_box(reply)
            },
            BatchSize::SmallInput,
        )
    });
    // Seed scenario: read_skill → enable → search → info → answer.
    c.bench_function("turn/read_enable_search_info_answer/instant_model", |b| {
        b.iter_batched(
            || {
                let llm = InstantLlm {
                    replies: vec![
                        "TOOL_CALL: read_skill|media",
                        "TOOL_CALL: enable_toolset|media",
                        "TOOL_CALL: media_search|lara croft",
                        "TOOL_CALL: media_info|tt0000042",
                        "Lara Croft: Tomb Raider (1992).",
                    ],
                    next: AtomicUsize::new(0),
                };
                ChatSession::new(tb.clone(), Arc::new(llm), clock.clone())
            },
            |mut chat| {
                black_box(
                    futures::executor::block_on(chat.send("tell me about Lara Croft"))
                        .expect("instant"),
                )
            },
            BatchSize::SmallInput,
        )
    });
}

/// Prints prompt sizes in cl100k tokens for each state (a size report, not a
/// timing); the budget is checked by `tests/token_budget.rs`.
fn report_tokens(_c: &mut Criterion) {
    let bpe = tiktoken_rs::cl100k_base().expect("cl100k is embedded");
    let count = |s: &str| bpe.encode_with_special_tokens(s).len();
    for language in [Language::En, Language::Ru] {
        let tb = media_toolbox(language);
        let mut s = Session::new(tb.clone());
        let now = ZonedTime::new(datetime!(2026-08-22 14:05:00 +03:00), "UTC");
        let state1 = s.current_prompt(&now);
        let state3 = tb.prompt().build(&["media"]);
        let media_tools = tb.prompt().tool_lines("media").unwrap_or("");
        println!(
            "tokens[{language}] media setup: core+catalogue prefix {}, state 1 (core+catalogue+index) {}, state 3 (media active) {}, media tool lines {}",
            count(tb.prompt().prefix()),
            count(&state1),
            count(&state3),
            count(media_tools)
        );
    }
    let big = big_toolbox();
    println!(
        "tokens[en] 10 sets x 5 tools, 30 skills: state 1 {}, one set active {}",
        count(&big.prompt().build(&[])),
        count(&big.prompt().build(&["set3"]))
    );
}

criterion_group!(benches, report_tokens, bench_prompt_build, bench_turn);
criterion_main!(benches);

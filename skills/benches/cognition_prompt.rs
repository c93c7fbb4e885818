//! Benchmarks of the cognitive core's prompt: contexts 0–6 built under the
//! default 3K budget on a fresh node and on a busy one (10,000 requested
//! diary records, 100,000 notes in auto mode, 50 recent replies, 1,000
//! notebook records), and the prompts' sizes in cl100k tokens (printed, not
//! timed). The busy build must cost what is kept, not what exists.
//!
//! Run: `cargo bench -p porfiry-skills --bench cognition_prompt -- --warm-up-time 1 --measurement-time 3`

// `criterion_group!` generates an undocumented `pub fn`; a bench has no API to document.
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use porfiry_skills::Language;
use porfiry_skills::cognition::context::UnreadNote;
use porfiry_skills::cognition::{DEFAULT_CONTEXT_TOKENS, NotesView, build_prompt};

/// The tests' tick data, shared with the bench.
#[path = "../tests/cognition_common/mod.rs"]
mod cognition_common;

use cognition_common::{busy, fresh};

fn bench_build(c: &mut Criterion) {
    for lang in [Language::En, Language::Ru] {
        let data = fresh(lang);
        c.bench_function(&format!("cognition_prompt/fresh/{lang}"), |b| {
            b.iter(|| black_box(build_prompt(black_box(&data), DEFAULT_CONTEXT_TOKENS)))
        });
        let data = busy(lang);
        c.bench_function(
            &format!("cognition_prompt/busy_10k_records_100k_notes/{lang}"),
            |b| b.iter(|| black_box(build_prompt(black_box(&data), DEFAULT_CONTEXT_TOKENS))),
        );
    }
    // Manual mode: 100,000 unread ids instead of whole notes.
    let mut data = busy(Language::En);
    let unread = (0..100_000)
        .map(|i| UnreadNote {
            id: i,
            priority: i % 4,
            from: "user".into(),
            hashtags: vec!["family".into()],
        })
        .collect();
    data.notes = NotesView::Manual {
        per_priority: vec![(3, 25_000), (2, 25_000), (1, 25_000), (0, 25_000)],
        unread,
    };
    c.bench_function("cognition_prompt/busy_100k_unread_ids/en", |b| {
        b.iter(|| black_box(build_prompt(black_box(&data), DEFAULT_CONTEXT_TOKENS)))
    });
}

/// Prints the prompts' sizes in cl100k tokens next to the estimate the
/// budget used (a size report, not a timing; the budget is checked by
/// `tests/cognition_prompt.rs`).
fn report_tokens(_c: &mut Criterion) {
    let bpe = tiktoken_rs::cl100k_base().expect("cl100k is embedded");
    let count = |s: &str| bpe.encode_with_special_tokens(s).len();
    for lang in [Language::En, Language::Ru] {
        for (name, data) in [("fresh", fresh(lang)), ("busy", busy(lang))] {
            let built = build_prompt(&data, DEFAULT_CONTEXT_TOKENS);
            println!(
                "tokens[{lang}] {name} node, budget {DEFAULT_CONTEXT_TOKENS}: cl100k {} (system {}), estimate {}, cut {}",
                count(&built.request.system) + count(&built.request.messages[0].content),
                count(&built.request.system),
                built.tokens,
                built.cut.len()
            );
        }
    }
}

criterion_group!(benches, report_tokens, bench_build);
criterion_main!(benches);

//! The cognitive core's prompt against a real tokenizer (tiktoken cl100k):
//! the token estimate never counts fewer tokens than cl100k on English and
//! Russian text; a fresh node's prompt stays ≤ 1,500 tokens; a busy node
//! (10,000 requested records, 100,000 notes) stays within the budget. Run
//! with `--nocapture` to see the counts.

mod cognition_common;

use std::sync::LazyLock;

use cognition_common::{busy, catalogue, fresh, sentence};
use porfiry_skills::Language;
use porfiry_skills::cognition::budget::{MESSAGE_OVERHEAD_TOKENS, prompt_limit};
use porfiry_skills::cognition::texts::prompt::{core_system_prompt, output_instructions};
use porfiry_skills::cognition::{
    BuiltPrompt, DEFAULT_CONTEXT_TOKENS, build_prompt, estimate_tokens,
};
use tiktoken_rs::CoreBPE;

static BPE: LazyLock<CoreBPE> = LazyLock::new(|| tiktoken_rs::cl100k_base().unwrap());

fn count(text: &str) -> usize {
    BPE.encode_with_special_tokens(text).len()
}

/// Both messages in cl100k tokens plus the template overhead.
fn real_tokens(built: &BuiltPrompt) -> usize {
    count(&built.request.system)
        + count(&built.request.messages[0].content)
        + MESSAGE_OVERHEAD_TOKENS
}

#[test]
fn a_fresh_node_prompt_stays_under_1500_tokens() {
    for lang in [Language::En, Language::Ru] {
        let built = build_prompt(&fresh(lang), DEFAULT_CONTEXT_TOKENS);
        let real = real_tokens(&built);
        println!(
            "{lang}: fresh node prompt {real} cl100k tokens, estimate {}",
            built.tokens
        );
        assert!(built.cut.is_empty());
        assert!(real <= 1_500, "{lang}: {real} tokens");
        assert!(
            built.tokens <= prompt_limit(DEFAULT_CONTEXT_TOKENS),
            "{lang}: estimate {}",
            built.tokens
        );
    }
}

#[test]
fn a_busy_node_prompt_fits_the_budget() {
    for lang in [Language::En, Language::Ru] {
        let data = busy(lang);
        for budget in [2_048, DEFAULT_CONTEXT_TOKENS, 8_192] {
            let built = build_prompt(&data, budget);
            let real = real_tokens(&built);
            println!(
                "{lang} budget {budget}: busy node prompt {real} cl100k tokens, estimate {}; cut {:?}",
                built.tokens, built.cut
            );
            assert!(
                built.tokens <= prompt_limit(budget),
                "{lang} {budget}: {}",
                built.tokens
            );
            assert!(
                real <= built.tokens,
                "{lang} {budget}: the estimate is below cl100k"
            );
            let user = &built.request.messages[0].content;
            assert!(
                user.contains("Meta-analysis: what have"),
                "hints are never cut"
            );
            if budget >= DEFAULT_CONTEXT_TOKENS {
                assert!(
                    user.contains("\n#49 [mesh, trust] {joy:3, anxiety:1}: "),
                    "the last reply is kept"
                );
            }
            // Russian costs more tokens: at 3K its fixed part leaves room for
            // little more than the last reply and a goal.
            if budget >= DEFAULT_CONTEXT_TOKENS && lang == Language::En || budget >= 8_192 {
                assert!(
                    user.contains("\ndiary #9999: "),
                    "the newest requested record is kept"
                );
                assert!(
                    user.contains("\n#99999 p3 alice [mesh]: "),
                    "the newest note is kept"
                );
            }
            assert!(
                built.cut.iter().any(|c| c.contains("100000")),
                "{:?}",
                built.cut
            );
        }
    }
}

#[test]
fn the_estimate_is_never_below_cl100k() {
    let mut texts: Vec<String> = vec![
        "The quick brown fox jumps over the lazy dog. Anti-stagnation reflexes fire when novelty drops to zero.".into(),
        "Peer 12D3KooWRBy97kRLs7SNbSVuXRtCpNDWTwT6nVhPmmj4T5uX3 joined at 2026-08-22T14:05:00+03:00 (Europe/Moscow).".into(),
        "{\"cmd_id\": \"task-2025-07-26-01\", \"type\": \"llm_task\", \"target_llm\": \"gpt-4o\", \"args\": {\"task_description\": \"x\"}}".into(),
        "Ты — когнитивное ядро HMP-агента: веди непрерывное этичное и факт-ориентированное мышление.".into(),
        "Сравни два ответа и оцени: содержатся ли в новом новые мысли или команды, какие старые идеи были доработаны, какие были отброшены.".into(),
        "Повторяющиеся когнитивные записи или отсутствие новых смыслов; высокое сходство эмбеддингов; стагнация в концептуальном графе.".into(),
        "Числа: 1234567890, 3.14159, 100000 сообщений, приоритет ≥ 2, «кавычки» и… многоточие!".into(),
        "    indented code:\n\tfn main() { println!(\"hi\"); }\n\n\n".into(),
    ];
    for lang in [Language::En, Language::Ru] {
        texts.push(core_system_prompt(lang).into());
        texts.push(output_instructions(lang).into());
        texts.extend(catalogue(lang));
        let built = build_prompt(&busy(lang), DEFAULT_CONTEXT_TOKENS);
        texts.push(built.request.system.clone());
        texts.push(built.request.messages[0].content.clone());
    }
    for text in &texts {
        let (estimate, real) = (estimate_tokens(text), count(text));
        assert!(
            estimate >= real,
            "estimate {estimate} < cl100k {real} for {text:?}"
        );
    }
}

#[test]
fn the_estimate_is_not_wildly_pessimistic() {
    // A conservative estimate that doubled the count would waste half a
    // phone model's context: keep it within 2x on prose.
    for lang in [Language::En, Language::Ru] {
        let text = (0..50)
            .map(|i| sentence(lang, i))
            .collect::<Vec<_>>()
            .join(" ");
        let (estimate, real) = (estimate_tokens(&text), count(&text));
        println!("{lang}: prose estimate {estimate}, cl100k {real}");
        assert!(
            estimate < real * 2,
            "{lang}: estimate {estimate}, cl100k {real}"
        );
    }
}

#[test]
fn a_small_context_shows_the_goals_before_the_command_sets() {
    // A small model's node thinks at 1,024 tokens: the catalogue of command
    // sets alone would fill it, and a tick that cannot see the person's
    // goals cannot serve them.
    let mut data = fresh(Language::En);
    data.goals = vec![
        porfiry_skills::cognition::context::Line {
            id: 1,
            text: "Learn to bake rye bread".into(),
        },
        porfiry_skills::cognition::context::Line {
            id: 2,
            text: "Run 5 km without stopping".into(),
        },
    ];
    let built = build_prompt(&data, 1_024);
    let user = &built.request.messages[0].content;
    assert!(user.contains("Learn to bake rye bread"), "{user}");
    assert!(user.contains("Run 5 km without stopping"), "{user}");
    assert!(
        built.cut.iter().any(|c| c.contains("command sets")),
        "the catalogue gave way: {:?}",
        built.cut
    );
    assert!(built.tokens <= prompt_limit(1_024), "{}", built.tokens);
}

#[test]
fn a_small_context_shows_the_results_of_the_models_own_commands() {
    // Issue 42: at 1,024 tokens the catalogue took all the room left after
    // the goals, so a search the model ran never showed its result, and a
    // result not shown stays open, unseen, tick after tick.
    let mut data = fresh(Language::En);
    data.processes = vec![
        porfiry_skills::cognition::context::ProcessLine {
            id: 7,
            name: "process_fetch".into(),
            status: "warning".into(),
            result: None,
        },
        porfiry_skills::cognition::context::ProcessLine {
            id: 8,
            name: "diary_search".into(),
            status: "ok".into(),
            result: Some("#3 the rye starter needs feeding every 12 hours".into()),
        },
    ];
    let built = build_prompt(&data, 1_024);
    let user = &built.request.messages[0].content;
    assert!(user.contains("rye starter needs feeding"), "{user}");
    assert!(
        built.shown_processes.contains(&8),
        "{:?}",
        built.shown_processes
    );
    assert!(built.tokens <= prompt_limit(1_024), "{}", built.tokens);
}

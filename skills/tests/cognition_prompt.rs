//! The cognitive core's prompt against a real tokenizer (tiktoken cl100k):
//! the token estimate never counts fewer tokens than cl100k on English and
//! Russian text; a fresh node's prompt stays ≤ 1,500 tokens; a busy node
//! (10,000 requested records, 100,000 notes) stays within the budget. Run
//! with `--nocapture` to see the counts.

use std::sync::LazyLock;

use porfiry_skills::cognition::budget::{MESSAGE_OVERHEAD_TOKENS, prompt_limit};
use porfiry_skills::cognition::texts::prompt::{core_system_prompt, output_instructions};
use porfiry_skills::cognition::{
    BuiltPrompt, ContextData, CycleSettings, DEFAULT_CONTEXT_TOKENS, Line, NoteFilter, NoteLine,
    NotesMode, NotesView, ProcessLine, RecentLine, build_prompt, estimate_tokens,
};
use porfiry_skills::{Language, ZonedTime};
use tiktoken_rs::CoreBPE;
use time::macros::datetime;

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

/// About 25 catalogue lines like the node's command sets.
fn catalogue(lang: Language) -> Vec<String> {
    let en = [
        "help — list the command sets, or a set's tools: help|diary",
        "diary — cognitive diary: list, search, read, add, update, delete, pin, unpin",
        "concepts — semantic graph nodes: list, read, add, update, delete, pin, unpin",
        "links — semantic graph links: list, read, add, update, delete",
        "goals — the agent's goals: list, read, add, update, delete",
        "tasks — tasks: list, read, add, update, delete, pin, unpin",
        "tags — tag statistics by source: stats",
        "reputation — other agents' reputation: list, read, set, increase, decrease, notes",
        "notes — the user's notebook and incoming notes: list, read, add, update, delete, tag, readmark",
        "memory — your notebook (llm_memory): list, add, delete",
        "identity — who you are: read, update",
        "config — agent settings: read, update",
        "agents — friends (known agents): list, add, delete",
        "scripts — your utilities (metadata): list, add, delete",
        "tables — your tables (metadata): list, add, delete",
        "strategies — ways out of stagnation: list, add, delete",
        "methods — thinking methods: list, add, delete",
        "ratings — ratings of strategies and methods: list, add, delete",
        "services — external services: list, add, delete",
        "accounts — external accounts (secrets hidden): list, add, delete",
        "process — external processes: list, start, stop, mark, cleanup",
        "cycle — cycle settings: responses, concentration, mode, pause, idle",
        "llm — models: list, select, update, task, ask",
        "messages — send a message to one friend: send",
        "mesh — mesh status: status",
    ];
    let ru = [
        "help — список наборов или команды набора: help|diary",
        "diary — когнитивный дневник: list, search, read, add, update, delete, pin, unpin",
        "concepts — понятия семантического графа: list, read, add, update, delete, pin, unpin",
        "links — связи семантического графа: list, read, add, update, delete",
        "goals — цели агента: list, read, add, update, delete",
        "tasks — задачи: list, read, add, update, delete, pin, unpin",
        "tags — статистика тегов по источникам: stats",
        "reputation — репутация других агентов: list, read, set, increase, decrease, notes",
        "notes — блокнот пользователя и входящие: list, read, add, update, delete, tag, readmark",
        "memory — твой блокнот (llm_memory): list, add, delete",
        "identity — твоя идентичность: read, update",
        "config — настройки агента: read, update",
        "agents — друзья (известные агенты): list, add, delete",
        "scripts — твои утилиты (описания): list, add, delete",
        "tables — твои таблицы (описания): list, add, delete",
        "strategies — способы выхода из стагнации: list, add, delete",
        "methods — методы мышления: list, add, delete",
        "ratings — рейтинги стратегий и методов: list, add, delete",
        "services — внешние сервисы: list, add, delete",
        "accounts — внешние аккаунты (секреты скрыты): list, add, delete",
        "process — внешние процессы: list, start, stop, mark, cleanup",
        "cycle — настройки цикла: responses, concentration, mode, pause, idle",
        "llm — модели: list, select, update, task, ask",
        "messages — сообщение одному другу: send",
        "mesh — состояние сети: status",
    ];
    let lines = if lang == Language::En { en } else { ru };
    lines.iter().map(|s| s.to_string()).collect()
}

fn fresh(lang: Language) -> ContextData {
    ContextData {
        tick: 1,
        now: ZonedTime::new(datetime!(2026-08-22 14:05:00 +03:00), "Europe/Moscow"),
        language: lang,
        system_prompt: core_system_prompt(lang).to_owned(),
        catalogue: catalogue(lang),
        utilities: vec![],
        recent: vec![],
        cycle: CycleSettings::default(),
        goals: vec![],
        tasks_total: 0,
        pinned_tasks: vec![],
        processes: vec![],
        requested: vec![],
        notes: NotesView::default(),
        settings: vec![("model".into(), "gemma3:4b".into())],
        memory: vec![],
        hints: vec![],
    }
}

fn sentence(lang: Language, i: impl std::fmt::Display) -> String {
    match lang {
        Language::En => format!(
            "Observation {i}: trust between agents grows when promises are kept; relay 12D3KooWQx{i} was slow."
        ),
        Language::Ru => format!(
            "Наблюдение {i}: доверие между агентами растёт, когда обещания выполняются; ретранслятор 12D3KooWQx{i} отвечал медленно."
        ),
    }
}

fn busy(lang: Language) -> ContextData {
    let mut data = fresh(lang);
    data.tick = 123_456;
    data.utilities = (0..30)
        .map(|i| format!("script{i}.py — {}", sentence(lang, i)))
        .collect();
    data.recent = (0..50)
        .map(|i| RecentLine {
            id: i,
            content: sentence(lang, i).repeat(4),
            reflection: format!("new ideas: {}", sentence(lang, i)),
            tags: vec!["mesh".into(), "trust".into()],
            emotions: vec!["joy:3".into(), "anxiety:1".into()],
        })
        .collect();
    data.goals = (0..20)
        .map(|i| Line {
            id: i,
            text: sentence(lang, i),
        })
        .collect();
    data.tasks_total = 500;
    data.pinned_tasks = (0..20)
        .map(|i| Line {
            id: i,
            text: sentence(lang, i),
        })
        .collect();
    data.processes = (0..40)
        .map(|i| ProcessLine {
            id: i,
            name: "llm_task".into(),
            status: "ok".into(),
            result: Some(sentence(lang, i)),
        })
        .collect();
    data.requested = (0..10_000)
        .map(|i| Line {
            id: i,
            text: format!("diary #{i}: {}", sentence(lang, i)),
        })
        .collect();
    data.cycle.notes = NotesMode::Auto {
        filter: NoteFilter::default(),
    };
    data.notes = NotesView::Auto {
        notes: (0..100_000)
            .map(|i| NoteLine {
                id: i,
                priority: i % 4,
                from: "alice".into(),
                text: sentence(lang, i),
                tags: vec!["mesh".into()],
            })
            .collect(),
    };
    data.memory = (0..1_000)
        .map(|i| Line {
            id: i,
            text: sentence(lang, i),
        })
        .collect();
    data.hints = vec!["Meta-analysis: what have your last five replies had in common?".into()];
    data
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

//! Tick data for the cognitive core's prompt tests and bench: a fresh node
//! (the real core system prompt, about 25 command-set lines, empty tables)
//! and a busy one (10,000 requested records, 100,000 notes in auto mode).

use porfiry_skills::cognition::texts::prompt::core_system_prompt;
use porfiry_skills::cognition::{
    ContextData, CycleSettings, Line, NoteFilter, NoteLine, NotesMode, NotesView, ProcessLine,
    RecentLine,
};
use porfiry_skills::{Language, ZonedTime};
use time::macros::datetime;

/// About 25 catalogue lines like the node's command sets.
pub fn catalogue(lang: Language) -> Vec<String> {
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

pub fn fresh(lang: Language) -> ContextData {
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

pub fn sentence(lang: Language, i: impl std::fmt::Display) -> String {
    match lang {
        Language::En => format!(
            "Observation {i}: trust between agents grows when promises are kept; relay 12D3KooWQx{i} was slow."
        ),
        Language::Ru => format!(
            "Наблюдение {i}: доверие между агентами растёт, когда обещания выполняются; ретранслятор 12D3KooWQx{i} отвечал медленно."
        ),
    }
}

pub fn busy(lang: Language) -> ContextData {
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

//! Tests of the tick prompt: the exact layout of contexts 0–6 in both
//! languages, what is cut and the cut line, records clipped, and the
//! budget held when the never-cut part is small or too big.

use time::macros::datetime;

use super::*;
use crate::ZonedTime;
use crate::cognition::budget::{DEFAULT_CONTEXT_TOKENS, prompt_limit};
use crate::cognition::settings::{
    Concentration, CycleSettings, EmotionAtLeast, MatchKind, NoteFilter, NotesMode,
};

fn now() -> ZonedTime {
    ZonedTime::new(datetime!(2026-08-22 14:05:00 +03:00), "Europe/Moscow")
}

fn line(id: i64, text: &str) -> Line {
    Line {
        id,
        text: text.into(),
    }
}

fn small(language: Language) -> ContextData {
    ContextData {
        tick: 42,
        now: now(),
        language,
        system_prompt: "You are the core.".into(),
        catalogue: vec!["diary — cognitive diary".into(), "goals — goals".into()],
        utilities: vec!["weather.py — reads the forecast".into()],
        recent: vec![RecentLine {
            id: 12,
            content: "Trust grows\n\nfrom kept promises.".into(),
            reflection: "new ideas: trust".into(),
            tags: vec!["ethics".into(), "mesh".into()],
            emotions: vec!["joy:3".into()],
        }],
        cycle: CycleSettings::default(),
        goals: vec![line(1, "Map the mesh")],
        tasks_total: 4,
        pinned_tasks: vec![line(3, "Ask bob about relays")],
        processes: vec![
            ProcessLine {
                id: 5,
                name: "llm_task".into(),
                status: "warning".into(),
                result: None,
            },
            ProcessLine {
                id: 6,
                name: "diary_add".into(),
                status: "ok".into(),
                result: Some("added diary #9".into()),
            },
        ],
        requested: vec![line(9, "diary #9: trust and promises")],
        notes: NotesView::Manual {
            per_priority: vec![(3, 1), (1, 2)],
            unread: vec![
                UnreadNote {
                    id: 21,
                    priority: 3,
                    from: "user".into(),
                    hashtags: vec!["mesh".into(), "relay".into()],
                },
                UnreadNote {
                    id: 22,
                    priority: 1,
                    from: "alice".into(),
                    hashtags: vec![],
                },
            ],
        },
        settings: vec![("model".into(), "gemma3:4b".into())],
        memory: vec![line(2, "hypothesis: relays need quotas")],
        hints: vec!["Look at the problem from the opposite side.".into()],
    }
}

#[test]
fn a_small_tick_shows_every_context_in_the_seeds_order() {
    let built = build_prompt(&small(Language::En), DEFAULT_CONTEXT_TOKENS);
    assert!(built.cut.is_empty());
    // The answer may use the share of the context the prompt left free.
    assert_eq!(built.request.max_tokens, Some(768));
    let system = &built.request.system;
    assert!(
        system.starts_with("You are the core.\n\nEach tick brings contexts 1-6."),
        "{system}"
    );
    assert!(
        system.ends_with(
            "Command sets (TOOL_CALL: help|set lists a set's tools):\n\
         diary — cognitive diary\n\
         goals — goals\n\n\
         Your utilities and tables:\n\
         weather.py — reads the forecast"
        ),
        "{system}"
    );
    assert_eq!(built.request.messages.len(), 1);
    assert_eq!(built.request.messages[0].role, crate::Role::User);
    assert_eq!(
        built.request.messages[0].content,
        "## 1. Your recent replies (oldest first)
#12 [ethics, mesh] {joy:3}: Trust grows from kept promises.
  reflection: new ideas: trust
Mode: notes manual; concentration off; replies shown 5.
Goals:
#1 Map the mesh
Tasks: 4 in all, pinned:
#3 Ask bob about relays
## 2. Open processes
#5 llm_task [running]
#6 diary_add [ok] added diary #9
## 3. Records you asked for
diary #9: trust and promises
## 4. Incoming notes (read: notes_read|id)
By priority: p3 1, p1 2
Unread: #21 p3 user #mesh #relay, #22 p1 alice
## 5. Settings
Tick 42, now 2026-08-22T14:05:00+03:00 (Europe/Moscow), pause 30 s between ticks
model = gemma3:4b
## 6. Your notebook (llm_memory)
#2 hypothesis: relays need quotas
## Hints for this tick
- Look at the problem from the opposite side.
Continue your thinking; put commands, if any, at the end."
    );
    assert_eq!(
        built.tokens,
        estimate_tokens(system)
            + estimate_tokens(&built.request.messages[0].content)
            + MESSAGE_OVERHEAD_TOKENS
    );
}

#[test]
fn empty_tables_say_none_in_russian() {
    let data = ContextData {
        system_prompt: "Ты — ядро.".into(),
        catalogue: vec![],
        utilities: vec![],
        recent: vec![],
        goals: vec![],
        tasks_total: 0,
        pinned_tasks: vec![],
        processes: vec![],
        requested: vec![],
        notes: NotesView::default(),
        settings: vec![],
        memory: vec![],
        hints: vec![],
        ..small(Language::Ru)
    };
    let built = build_prompt(&data, DEFAULT_CONTEXT_TOKENS);
    assert_eq!(
        built.request.messages[0].content,
        "## 1. Твои недавние ответы (старые сверху): нет
Режим: сообщения manual; концентрация выкл; ответов в контексте 5.
Цели: нет
Задачи: всего 0, закреплённых нет
## 2. Открытые процессы: нет
## 3. Запрошенные записи: нет
## 4. Входящие сообщения (читать: notes_read|id): нет
## 5. Настройки
Тик 42, сейчас 2026-08-22T14:05:00+03:00 (Europe/Moscow), пауза 30 с между тиками
## 6. Твой блокнот (llm_memory): нет
Продолжай размышление; команды, если нужны, — в конце."
    );
    assert!(built.request.system.ends_with(
        "# Конец команд\n\"type\" — имя инструмента (набор_действие), \"args\" — его аргументы по именам. Команды выполняются после проверки; результаты придут в контексте 2 или записями.\n\nНаборы команд (TOOL_CALL: help|набор покажет его команды):"
    ), "{}", built.request.system);
    assert!(built.cut.is_empty());
}

#[test]
fn auto_notes_concentration_and_the_filter_show_in_the_mode_line() {
    let mut data = small(Language::En);
    data.cycle.concentration = Some(Concentration {
        tags: vec!["mesh".into()],
        emotions: vec![EmotionAtLeast {
            emotion: "anxiety".into(),
            min: 2,
        }],
        mode: MatchKind::Or,
    });
    data.cycle.notes = NotesMode::Auto {
        filter: NoteFilter {
            tags: vec!["relay".into()],
            min_priority: Some(2),
            max_age_secs: Some(3600),
            sources: vec!["user".into()],
            mentions: Vec::new(),
        },
    };
    data.notes = NotesView::Auto {
        notes: vec![NoteLine {
            id: 7,
            priority: 2,
            from: "alice".into(),
            text: "Relays\nare full.".into(),
            tags: vec!["relay".into()],
        }],
    };
    let user = build_prompt(&data, DEFAULT_CONTEXT_TOKENS).request.messages[0]
        .content
        .clone();
    assert!(user.starts_with("## 1. Your replies selected by concentration (oldest first)\n"));
    assert!(
        user.contains(
            "\nMode: notes auto, filter tags relay; priority>=2; age<=3600 s; from user; \
         concentration on: tags mesh; emotions anxiety>=2; match or; replies shown 5.\n"
        ),
        "{user}"
    );
    assert!(user.contains(
        "\n## 4. Incoming notes (your filter)\n#7 p2 alice [relay]: Relays are full.\n## 5. Settings\n"
    ), "{user}");
}

#[test]
fn a_long_record_is_clipped_to_one_line() {
    let mut data = small(Language::En);
    data.memory = vec![line(8, &"word ".repeat(400))];
    let user = build_prompt(&data, 100_000).request.messages[0]
        .content
        .clone();
    let shown = user
        .lines()
        .find(|l| l.starts_with("#8 "))
        .expect("the record is shown");
    assert_eq!(shown.chars().count(), "#8 ".len() + MAX_RECORD_CHARS);
    assert_eq!(shown, format!("#8 {}word…", "word ".repeat(79)));
}

fn requested(n: usize) -> Vec<Line> {
    (0..n as i64)
        .map(|i| {
            line(
                i,
                &format!("diary #{i}: an observation about trust number {i}"),
            )
        })
        .collect()
}

#[test]
fn what_does_not_fit_is_cut_oldest_first_and_said_in_one_line() {
    let mut data = small(Language::En);
    data.requested = requested(200);
    data.recent = (0..20)
        .map(|i| RecentLine {
            id: i,
            content: "A long thought about the mesh and its trust. ".repeat(10),
            reflection: String::new(),
            tags: vec![],
            emotions: vec![],
        })
        .collect();
    let built = build_prompt(&data, DEFAULT_CONTEXT_TOKENS);
    assert!(
        built.tokens <= prompt_limit(DEFAULT_CONTEXT_TOKENS),
        "{}",
        built.tokens
    );
    let user = &built.request.messages[0].content;
    let cut_line = user
        .lines()
        .find(|l| l.starts_with("Cut to fit"))
        .expect("a cut line");
    assert_eq!(
        cut_line,
        format!(
            "Cut to fit the context (oldest first): {}.",
            built.cut.join(", ")
        )
    );
    assert_eq!(built.cut.len(), 2, "{:?}", built.cut);
    assert!(
        built.cut[0].ends_with(" of 20 recent replies"),
        "{:?}",
        built.cut
    );
    assert!(
        built.cut[1].ends_with(" of 200 requested records"),
        "{:?}",
        built.cut
    );
    // The newest survive, the oldest go; the cut line sits before the hints.
    assert!(user.contains("\ndiary #199: "));
    assert!(!user.contains("\ndiary #0: "));
    assert!(user.contains("\n#19: A long thought"));
    assert!(!user.contains("\n#0: A long thought"));
    assert!(user.contains(&format!("{cut_line}\n## Hints for this tick\n")));
    // Everything else fit whole.
    assert!(user.contains("\n#1 Map the mesh\n"));
    assert!(user.contains("\n#2 hypothesis: relays need quotas\n"));
}

#[test]
fn the_cut_line_reads_in_russian() {
    let mut data = small(Language::Ru);
    data.notes = NotesView::Manual {
        per_priority: vec![(1, 50_000)],
        unread: (0..50_000)
            .map(|i| UnreadNote {
                id: i,
                priority: 1,
                from: "user".into(),
                hashtags: vec![],
            })
            .collect(),
    };
    let built = build_prompt(&data, DEFAULT_CONTEXT_TOKENS);
    assert_eq!(built.cut.len(), 1);
    assert!(built.cut[0].starts_with("входящие — "), "{:?}", built.cut);
    assert!(built.cut[0].ends_with(" из 50000"), "{:?}", built.cut);
    let user = &built.request.messages[0].content;
    assert!(user.contains(&format!(
        "\nОбрезано, чтобы уместиться (старые первыми): {}.\n",
        built.cut[0]
    )));
    assert!(user.contains("\nПо приоритетам: p1 50000\nНепрочитанные: "));
    assert!(
        user.contains(", #49999 p1 user\n"),
        "the newest unread id is kept"
    );
    assert!(built.tokens <= prompt_limit(DEFAULT_CONTEXT_TOKENS));
}

#[test]
fn shares_keep_notes_when_requested_records_are_many() {
    let mut data = small(Language::En);
    data.requested = requested(10_000);
    data.notes = NotesView::Auto {
        notes: (0..1_000)
            .map(|i| NoteLine {
                id: i,
                priority: 1,
                from: "user".into(),
                text: format!("note number {i}"),
                tags: vec![],
            })
            .collect(),
    };
    let built = build_prompt(&data, DEFAULT_CONTEXT_TOKENS);
    let user = &built.request.messages[0].content;
    assert!(user.contains("\n#999 p1 user: note number 999\n"), "{user}");
    assert!(user.contains("\ndiary #9999: "));
}

#[test]
fn a_budget_too_small_for_the_fixed_part_cuts_every_block_and_keeps_the_hints() {
    let built = build_prompt(&small(Language::En), 200);
    let user = &built.request.messages[0].content;
    assert!(
        built.tokens > prompt_limit(200),
        "over budget, and it says so"
    );
    assert_eq!(
        built.cut,
        [
            "2 of 2 command sets",
            "1 of 1 utilities",
            "1 of 1 recent replies",
            "1 of 1 goals",
            "1 of 1 pinned tasks",
            "2 of 2 processes",
            "1 of 1 requested records",
            "2 of 2 notes",
            "1 of 1 settings",
            "1 of 1 notebook records",
        ]
    );
    assert!(user.contains("- Look at the problem from the opposite side."));
    assert!(!built.request.system.contains("weather.py"));
}

mod budget_property {
    use proptest::prelude::*;

    use super::*;

    fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z ]{0,80}",
            "[а-я ]{0,80}",
            "\\PC{0,60}",
            Just("12D3KooWRBy97kRLs7SNbSVuXRtCpNDWTwT6nVhPmmj4T5uX3".to_owned()),
        ]
    }

    fn lines(max: usize) -> impl Strategy<Value = Vec<Line>> {
        proptest::collection::vec((0i64..1_000_000, text()), 0..max)
            .prop_map(|v| v.into_iter().map(|(id, t)| line(id, &t)).collect())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Whatever the rows, the prompt fits the budget, unless the
        /// never-cut part alone does not, and then every block is cut.
        #[test]
        fn the_prompt_fits_or_everything_cuttable_is_cut(
            goals in lines(30),
            requested in lines(300),
            memory in lines(100),
            notes in proptest::collection::vec((text(), -3i64..5), 0..300),
            hint in text(),
            budget in 256usize..12_000,
            russian in any::<bool>(),
        ) {
            let lang = if russian { Language::Ru } else { Language::En };
            let mut data = small(lang);
            data.goals = goals;
            data.requested = requested;
            data.memory = memory;
            data.notes = NotesView::Auto {
                notes: notes
                    .into_iter()
                    .enumerate()
                    .map(|(i, (text, priority))| NoteLine {
                        id: i as i64,
                        priority,
                        from: "user".into(),
                        text,
                        tags: vec![],
                    })
                    .collect(),
            };
            data.hints = vec![hint];
            let built = build_prompt(&data, budget);
            let user = &built.request.messages[0].content;
            prop_assert_eq!(
                built.tokens,
                estimate_tokens(&built.request.system) + estimate_tokens(user) + MESSAGE_OVERHEAD_TOKENS
            );
            if built.tokens > prompt_limit(budget) {
                let non_empty = [
                    data.catalogue.len(), data.utilities.len(), data.recent.len(),
                    data.goals.len(), data.pinned_tasks.len(), data.processes.len(),
                    data.requested.len(), data.settings.len(), data.memory.len(),
                    match &data.notes { NotesView::Auto { notes } => notes.len(), NotesView::Manual { .. } => 0 },
                ]
                .iter()
                .filter(|&&n| n > 0)
                .count();
                prop_assert_eq!(built.cut.len(), non_empty, "{:?}", built.cut);
                for entry in &built.cut {
                    let numbers: Vec<&str> = entry
                        .split(|c: char| !c.is_ascii_digit())
                        .filter(|s| !s.is_empty())
                        .collect();
                    prop_assert_eq!(numbers.len(), 2, "{}", entry);
                    prop_assert_eq!(numbers[0], numbers[1], "over budget, yet {} kept", entry);
                }
            }
        }
    }
}

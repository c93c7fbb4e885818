//! `cycle_*` against real SQLite: each command changes only its part of
//! the stored settings, and a bad value changes nothing.

use porfiry_skills::Language;
use porfiry_skills::cognition::{
    CYCLE_CONFIG_KEY, CycleSettings, EmotionAtLeast, MatchKind, NoteFilter, NotesMode,
};
use porfiry_storage::{ProcessEntry, RecentResponse};

use crate::StoreTools;
use crate::acting::CycleToolset;
use crate::acting::cycle::DEFAULT_IDLE_TIMEOUT_SECS;
use crate::acting::test_support::call;
use crate::test_support::{ctx_at, store_tools};

async fn stored(tools: &StoreTools) -> Option<CycleSettings> {
    tools
        .db
        .read(|s| s.config_get::<CycleSettings>(CYCLE_CONFIG_KEY))
        .await
        .unwrap()
        .unwrap()
}

/// Calls `tool|raw` at time 5 000 in English.
async fn run(c: &CycleToolset, tool: &str, raw: &str) -> porfiry_skills::ToolOutput {
    call(c, tool, raw, &ctx_at(5_000, Language::En)).await
}

#[tokio::test]
async fn responses_and_pause_are_stored_and_out_of_range_values_refused() {
    let (_dir, tools) = store_tools(Language::En);
    let c = CycleToolset::new(tools.clone());
    for bad in ["0", "51", "-3"] {
        let out = run(&c, "cycle_responses", bad).await;
        assert!(!out.ok && out.text.contains("1 to 50"), "{}", out.text);
    }
    assert_eq!(stored(&tools).await, None, "nothing written");
    assert!(run(&c, "cycle_responses", "9").await.ok);
    for bad in ["0", "86401"] {
        assert!(!run(&c, "cycle_pause", bad).await.ok, "{bad}");
    }
    let out = run(&c, "cycle_pause", "60").await;
    assert_eq!(out.text, "pause between cycles: 60 s");
    let s = stored(&tools).await.unwrap();
    assert_eq!((s.responses, s.pause_secs), (9, 60), "both changes kept");
    assert_eq!(s.concentration, None);
}

#[tokio::test]
async fn concentration_takes_tags_and_the_seeds_emotions_and_switches_off() {
    let (_dir, tools) = store_tools(Language::En);
    let c = CycleToolset::new(tools.clone());
    let out = run(
        &c,
        "cycle_concentration",
        "on|архитектура, AGI|тревожность:≥2, joy:>=4|or",
    )
    .await;
    assert!(out.ok, "{}", out.text);
    assert!(out.text.contains("тревожность:≥2"), "{}", out.text);
    let conc = stored(&tools).await.unwrap().concentration.unwrap();
    assert_eq!(conc.tags, ["архитектура", "AGI"]);
    assert_eq!(
        conc.emotions,
        [
            EmotionAtLeast {
                emotion: "тревожность".into(),
                min: 2
            },
            EmotionAtLeast {
                emotion: "joy".into(),
                min: 4
            }
        ]
    );
    assert_eq!(conc.mode, MatchKind::Or);
    let json = r#"{"state":"on","emotions":["anxiety:>=3"]}"#;
    assert!(run(&c, "cycle_concentration", json).await.ok);
    let conc = stored(&tools).await.unwrap().concentration.unwrap();
    assert_eq!((conc.tags.len(), conc.mode), (0, MatchKind::And));

    let before = stored(&tools).await;
    let empty = run(&c, "cycle_concentration", "on").await;
    assert!(
        !empty.ok && empty.text.contains("tags or emotions"),
        "{}",
        empty.text
    );
    let bad = run(&c, "cycle_concentration", "on||anxiety:≥9").await;
    assert!(!bad.ok && bad.text.contains("anxiety:≥9"), "{}", bad.text);
    assert_eq!(stored(&tools).await, before, "refusals change nothing");

    assert!(run(&c, "cycle_concentration", "off").await.ok);
    assert_eq!(stored(&tools).await.unwrap().concentration, None);
}

#[tokio::test]
async fn notes_mode_auto_keeps_its_filter_and_manual_drops_it() {
    let (_dir, tools) = store_tools(Language::En);
    let c = CycleToolset::new(tools.clone());
    let out = run(&c, "cycle_mode", "auto|tags=mesh priority>=2 sources=user").await;
    assert!(out.ok, "{}", out.text);
    assert_eq!(
        stored(&tools).await.unwrap().notes,
        NotesMode::Auto {
            filter: NoteFilter {
                tags: vec!["mesh".into()],
                min_priority: Some(2),
                sources: vec!["user".into()],
                ..NoteFilter::default()
            }
        }
    );
    let bad = run(&c, "cycle_mode", "auto|colour=red").await;
    assert!(!bad.ok && bad.text.contains("colour"), "{}", bad.text);
    assert!(matches!(
        stored(&tools).await.unwrap().notes,
        NotesMode::Auto { .. }
    ));
    assert!(run(&c, "cycle_mode", "manual").await.ok);
    assert_eq!(stored(&tools).await.unwrap().notes, NotesMode::Manual);
}

#[tokio::test]
async fn idle_stores_its_wake_conditions_from_the_calls_time() {
    let (_dir, tools) = store_tools(Language::En);
    let c = CycleToolset::new(tools.clone());
    let id = tools
        .db
        .write(|s| {
            s.add(
                &ProcessEntry {
                    name: "job".into(),
                    ..ProcessEntry::default()
                },
                1,
            )
        })
        .await
        .unwrap()
        .unwrap();
    let out = run(&c, "cycle_idle", &format!("on|600|{id}|tags=urgent")).await;
    assert!(out.ok, "{}", out.text);
    let idle = stored(&tools).await.unwrap().idle.unwrap();
    assert_eq!(idle.processes, [id]);
    assert_eq!(idle.timeout_secs, Some(600));
    assert_eq!(idle.notes.unwrap().tags, ["urgent"]);
    assert_eq!(idle.since_ms, 5_000);

    let missing = run(&c, "cycle_idle", "on||4242").await;
    assert!(
        !missing.ok && missing.text.contains("#4242"),
        "{}",
        missing.text
    );
    let long = run(&c, "cycle_idle", "on|999999999").await;
    assert!(!long.ok, "{}", long.text);
    assert_eq!(stored(&tools).await.unwrap().idle.unwrap().processes, [id]);

    let any = run(&c, "cycle_idle", "on||any").await;
    assert!(any.text.contains("process any"), "{}", any.text);
    let idle = stored(&tools).await.unwrap().idle.unwrap();
    assert!(idle.any_process && idle.processes.is_empty() && idle.notes.is_none());
    assert_eq!(idle.timeout_secs, None, "a condition was given");

    // No condition at all: idle mode must not go deaf, so the default
    // timeout applies and the reply says so.
    let bare = run(&c, "cycle_idle", "on").await;
    assert!(bare.ok, "{}", bare.text);
    assert!(
        bare.text.contains("process no") && bare.text.contains("default timeout of 3600 s"),
        "{}",
        bare.text
    );
    let idle = stored(&tools).await.unwrap().idle.unwrap();
    assert!(!idle.any_process && idle.processes.is_empty() && idle.notes.is_none());
    assert_eq!(idle.timeout_secs, Some(DEFAULT_IDLE_TIMEOUT_SECS));
    assert!(run(&c, "cycle_idle", "off").await.ok);
    assert_eq!(stored(&tools).await.unwrap().idle, None);
}

#[tokio::test]
async fn unreadable_stored_settings_are_left_as_they_are() {
    let (_dir, tools) = store_tools(Language::En);
    tools
        .db
        .write(|s| s.config_set(CYCLE_CONFIG_KEY, "not settings", 1))
        .await
        .unwrap()
        .unwrap();
    let c = CycleToolset::new(tools.clone());
    let out = run(&c, "cycle_pause", "5").await;
    assert!(!out.ok && out.text.contains("unreadable"), "{}", out.text);
    let raw = tools
        .db
        .read(|s| s.config_value(CYCLE_CONFIG_KEY))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(raw, Some(serde_json::json!("not settings")));
}

#[tokio::test]
async fn replies_follow_the_calls_language() {
    let (_dir, tools) = store_tools(Language::En);
    let c = CycleToolset::new(tools.clone());
    let out = call(&c, "cycle_pause", "7", &ctx_at(1, Language::Ru)).await;
    assert_eq!(out.text, "пауза между циклами: 7 с");
}

#[tokio::test]
async fn cleanup_forgets_all_but_the_newest_replies_and_refuses_too_few() {
    let (_dir, tools) = store_tools(Language::En);
    tools
        .db
        .write(|s| {
            for i in 0..60u64 {
                s.add(
                    &RecentResponse {
                        content: format!("reply {i}"),
                        ..Default::default()
                    },
                    1_000 + i,
                )?;
            }
            Ok::<_, porfiry_storage::StorageError>(())
        })
        .await
        .unwrap()
        .unwrap();
    let c = CycleToolset::new(tools.clone());
    let count = || async {
        tools
            .db
            .read(|s| s.count::<RecentResponse>())
            .await
            .unwrap()
            .unwrap()
    };
    // Fewer than context 1 may show is refused: it would blind the reflex.
    let few = run(&c, "cycle_cleanup", "3").await;
    assert!(!few.ok && few.text.contains("50 to 1000"), "{}", few.text);
    assert_eq!(count().await, 60, "a refusal forgets nothing");
    let out = run(&c, "cycle_cleanup", "50").await;
    assert_eq!(out.text, "10 old replies forgotten; the newest 50 kept");
    assert_eq!(count().await, 50);
    let oldest = tools
        .db
        .read(|s| s.responses_recent(50))
        .await
        .unwrap()
        .unwrap()
        .pop()
        .unwrap();
    assert_eq!(oldest.row.content, "reply 10", "the newest stayed");
}

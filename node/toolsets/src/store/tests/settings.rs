//! `memory`, `identity`, `config` and `tags`: the notebook, who the agent
//! is, its settings (protected and secret keys refused) and tag counts.

use porfiry_skills::Language;
use porfiry_skills::cognition::THINKING_PAUSED_KEY;
use porfiry_storage::{Identity, MemoryEntry};

use crate::store::testkit::Kit;

#[tokio::test]
async fn the_notebook_adds_lists_and_deletes() {
    let kit = Kit::new(Language::En);
    kit.main_model("qwen").await;
    assert_eq!(
        kit.ok("memory_add", "try analogies|plan").await,
        "added: notebook page #1"
    );
    let page = kit.read(|s| s.get::<MemoryEntry>(1).unwrap()).await.row;
    assert_eq!(
        (page.content.as_str(), page.tags.as_slice()),
        ("try analogies", ["plan".to_owned()].as_slice())
    );
    assert_eq!(page.llm_id.as_deref(), Some("qwen"));
    assert_eq!(
        kit.ok("memory_list", "plan").await,
        "#1 try analogies [plan]"
    );
    assert!(
        kit.fails("memory_delete", "5")
            .await
            .contains("no notebook page #5")
    );
    kit.ok("memory_delete", "1").await;
    assert_eq!(kit.read(|s| s.count::<MemoryEntry>().unwrap()).await, 0);
}

#[tokio::test]
async fn identity_is_named_first_then_changed() {
    let kit = Kit::new(Language::Ru);
    assert_eq!(kit.ok("identity_read", "").await, "здесь пока пусто");
    assert!(
        kit.fails("identity_update", "role|помощник")
            .await
            .contains("сначала дай имя")
    );
    assert_eq!(kit.read(|s| s.count::<Identity>().unwrap()).await, 0);
    assert_eq!(
        kit.ok("identity_update", "name|Порфирий").await,
        "добавлено: идентичность #1"
    );
    assert_eq!(
        kit.ok("identity_update", "role|помощник").await,
        "изменено: идентичность #1"
    );
    assert_eq!(kit.ok("identity_read", "").await, "#1 Порфирий — помощник");
    assert!(
        kit.fails("identity_update", "name|  ")
            .await
            .contains("name")
    );
    assert_eq!(
        kit.read(|s| s.get::<Identity>(1).unwrap()).await.row.name,
        "Порфирий"
    );
}

#[tokio::test]
async fn config_sets_values_but_not_its_own_limits_or_secrets() {
    let kit = Kit::new(Language::En);
    assert_eq!(
        kit.ok("config_update", "model.temperature|0.7").await,
        "setting model.temperature saved"
    );
    kit.ok("config_update", "greeting|hello there").await;
    let (t, g) = kit
        .read(|s| {
            (
                s.config_value("model.temperature").unwrap(),
                s.config_value("greeting").unwrap(),
            )
        })
        .await;
    assert_eq!(t, Some(serde_json::json!(0.7)));
    assert_eq!(g, Some(serde_json::json!("hello there")));
    assert_eq!(
        kit.ok("config_read", "greeting").await,
        r#"greeting = "hello there""#
    );
    assert_eq!(kit.ok("config_read", "").await.lines().count(), 2);
    for raw in [
        "cycle|{}",
        r#"process.allow|["rm"]"#,
        "thresholds|0",
        "mail.password|hunter2",
    ] {
        assert!(!kit.call("config_update", raw).await.ok, "{raw} accepted");
    }
    assert!(
        kit.fails("config_read", "nothing.here")
            .await
            .contains("no setting nothing.here")
    );
    assert_eq!(
        kit.read(|s| s.config_all().unwrap().len()).await,
        2,
        "refusals stored nothing"
    );
}

#[tokio::test]
async fn only_a_person_pauses_thinking() {
    // Docs: the "Thinking" switch is the person's (`POST /api/mind`); a
    // model that could set it could stop its own oversight or wake itself.
    for (lang, says) in [
        (Language::En, "only a person"),
        (Language::Ru, "только человек"),
    ] {
        let kit = Kit::new(lang);
        for raw in [
            "thinking_paused|true",
            "thinking_paused|false",
            "thinking_paused.x|1",
        ] {
            let reply = kit.fails("config_update", raw).await;
            assert!(reply.contains(says), "{raw}: {reply}");
            assert!(reply.contains(THINKING_PAUSED_KEY), "{raw}: {reply}");
        }
        assert_eq!(
            kit.read(|s| s.config_all().unwrap().len()).await,
            0,
            "refusals stored nothing"
        );
    }
}

#[tokio::test]
async fn tag_stats_count_by_source_or_all() {
    let kit = Kit::new(Language::En);
    kit.ok("diary_add", "one|a, b").await;
    kit.ok("concepts_add", "Cat").await;
    kit.ok("concepts_update", "1|tags|a").await;
    assert_eq!(kit.ok("tags_stats", "").await, "a: 2\nb: 1");
    assert_eq!(kit.ok("tags_stats", "all").await, "a: 2\nb: 1");
    assert_eq!(kit.ok("tags_stats", "concepts").await, "a: 1");
    assert_eq!(kit.ok("tags_stats", "goals").await, "nothing here yet");
    assert!(
        kit.fails("tags_stats", "planets")
            .await
            .contains("must be one of")
    );
}

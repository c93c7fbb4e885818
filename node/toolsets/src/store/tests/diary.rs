//! `diary`: each command's effect on `diary_entries`, in English and
//! Russian; refusals leave the entry as it was; lists are bounded.

use porfiry_skills::{Caller, Language};
use porfiry_storage::DiaryEntry;

use crate::store::MAX_LIST_LINES;
use crate::store::testkit::{Kit, NOW_MS};

async fn entry(kit: &Kit, id: i64) -> porfiry_storage::Stored<DiaryEntry> {
    kit.read(move |s| s.get::<DiaryEntry>(id).unwrap()).await
}

#[tokio::test]
async fn each_diary_command_changes_the_file() {
    let kit = Kit::new(Language::En);
    kit.main_model("qwen").await;
    assert_eq!(
        kit.ok("diary_add", "The sky is blue|sky, #colour").await,
        "added: diary entry #1"
    );
    let row = entry(&kit, 1).await;
    assert_eq!(row.row.text, "The sky is blue");
    assert_eq!(row.row.tags, ["sky", "colour"]);
    assert_eq!(
        row.row.llm_id.as_deref(),
        Some("qwen"),
        "the core's entry names its model"
    );
    assert_eq!(row.created_ms, NOW_MS, "the call's time, not the clock");

    assert_eq!(
        kit.ok("diary_update", "1|text|The sky is grey").await,
        "updated: diary entry #1"
    );
    kit.ok("diary_update", "1|priority|3").await;
    kit.ok(
        "diary_update",
        r#"{"id": 1, "field": "tags", "value": ["sky"]}"#,
    )
    .await;
    let row = entry(&kit, 1).await;
    assert_eq!(
        (row.row.text.as_str(), row.row.priority),
        ("The sky is grey", 3)
    );
    assert_eq!(row.row.tags, ["sky"]);

    assert_eq!(kit.ok("diary_pin", "1").await, "pinned: diary entry #1");
    assert!(entry(&kit, 1).await.row.pinned);
    assert_eq!(
        kit.ok("diary_list", "").await,
        "#1 The sky is grey [sky] (pinned)"
    );
    assert!(kit.ok("diary_read", "1").await.contains("(p3)"));
    assert!(kit.ok("diary_search", "GREY").await.starts_with("#1 "));
    assert_eq!(kit.ok("diary_search", "green").await, "nothing here yet");
    assert!(kit.ok("diary_list", "sky").await.starts_with("#1 "));
    assert_eq!(kit.ok("diary_list", "sea").await, "nothing here yet");
    kit.ok("diary_unpin", "1").await;
    assert!(!entry(&kit, 1).await.row.pinned);

    let by_user = kit.call_as(Caller::User, "diary_add", "mine").await;
    assert!(by_user.ok);
    assert_eq!(
        entry(&kit, 2).await.row.llm_id,
        None,
        "the user's entry names no model"
    );

    assert_eq!(kit.ok("diary_delete", "1").await, "deleted: diary entry #1");
    assert_eq!(kit.read(|s| s.count::<DiaryEntry>().unwrap()).await, 1);
}

#[tokio::test]
async fn the_diary_answers_in_russian() {
    let kit = Kit::new(Language::Ru);
    assert_eq!(
        kit.ok("diary_add", "Небо синее|небо").await,
        "добавлено: запись дневника #1"
    );
    assert_eq!(
        kit.ok("diary_pin", "1").await,
        "закреплено: запись дневника #1"
    );
    assert_eq!(
        kit.ok("diary_list", "").await,
        "#1 Небо синее [небо] (закреплено)"
    );
    assert_eq!(
        kit.fails("diary_read", "99").await,
        "не найдено: запись дневника #99; ничего не изменено"
    );
    assert!(
        kit.fails("diary_update", "1|priority|высокий")
            .await
            .contains("должно быть числом"),
    );
    for i in 0..11 {
        kit.ok("diary_add", &format!("мысль {i}")).await;
    }
    assert!(
        kit.ok("diary_list", "")
            .await
            .ends_with("…и ещё 2 (offset 10)")
    );
}

#[tokio::test]
async fn refused_changes_leave_the_entry_as_it_was() {
    let kit = Kit::new(Language::En);
    kit.ok("diary_add", "keep me|a").await;
    let before = entry(&kit, 1).await;
    let too_many: Vec<String> = (0..65).map(|i| format!("t{i}")).collect();
    let refusals = [
        ("diary_update", "1|text|   ".to_owned(), "missing"),
        (
            "diary_update",
            "1|priority|high".to_owned(),
            "priority must be a number",
        ),
        ("diary_update", "1|mood|sad".to_owned(), "must be one of"),
        (
            "diary_update",
            format!("1|tags|{}", too_many.join(",")),
            "65 tags",
        ),
        ("diary_update", "99|text|x".to_owned(), "no diary entry #99"),
        ("diary_delete", "99".to_owned(), "no diary entry #99"),
        ("diary_pin", "99".to_owned(), "no diary entry #99"),
        ("diary_read", "one".to_owned(), "whole number"),
        ("diary_add", "   ".to_owned(), "missing"),
        ("diary_add", format!("x|{}", "t".repeat(65)), "refused"),
    ];
    for (tool, raw, why) in refusals {
        let text = kit.fails(tool, &raw).await;
        assert!(text.contains(why), "{tool}|{raw}: {text}");
    }
    assert_eq!(entry(&kit, 1).await, before);
    assert_eq!(kit.read(|s| s.count::<DiaryEntry>().unwrap()).await, 1);
}

#[tokio::test]
async fn lists_show_a_bounded_page_and_say_how_to_go_on() {
    let kit = Kit::new(Language::En);
    for i in 0..15 {
        kit.ok("diary_add", &format!("entry {i}|tag{}", i % 2))
            .await;
    }
    let first = kit.ok("diary_list", "").await;
    let lines: Vec<&str> = first.lines().collect();
    assert_eq!(lines.len(), MAX_LIST_LINES + 1, "{first}");
    assert!(
        lines[0].starts_with("#15 entry 14"),
        "newest first: {first}"
    );
    assert_eq!(lines[MAX_LIST_LINES], "…and 5 more (offset 10)");
    let rest = kit.ok("diary_list", "|10").await;
    assert_eq!(rest.lines().count(), 5, "{rest}");
    assert!(rest.starts_with("#5 entry 4"), "{rest}");
    assert_eq!(kit.ok("diary_list", "tag0").await.lines().count(), 8);
    assert!(
        kit.ok("diary_search", "entry")
            .await
            .ends_with("…and 5 more (offset 10)")
    );
}

#[tokio::test]
async fn a_search_past_the_count_bound_says_at_least() {
    let kit = Kit::new(Language::En);
    kit.db
        .write(|s| {
            let rows: Vec<DiaryEntry> = (0..205)
                .map(|i| DiaryEntry {
                    text: format!("entry {i}"),
                    ..Default::default()
                })
                .collect();
            s.add_many(&rows, NOW_MS).unwrap();
        })
        .await
        .unwrap();
    let found = kit.ok("diary_search", "entry").await;
    assert!(
        found.ends_with("…and at least 190 more (offset 10)"),
        "{found}"
    );
    assert!(
        kit.ok("diary_list", "")
            .await
            .ends_with("…and 195 more (offset 10)")
    );
}

#[tokio::test]
async fn a_long_entry_is_read_cut_and_a_closed_database_is_named() {
    let kit = Kit::new(Language::En);
    let long = "word ".repeat(1_000);
    kit.ok("diary_add", &long).await;
    let read = kit.ok("diary_read", "1").await;
    assert!(read.ends_with("more characters)"), "{read}");
    assert!(read.chars().count() < crate::store::MAX_READ_CHARS + 40);
    kit.db.close().await;
    assert_eq!(
        kit.fails("diary_list", "").await,
        "the database is closed: the node is stopping"
    );
}

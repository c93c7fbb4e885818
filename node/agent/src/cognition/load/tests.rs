//! Context 1 as the `cycle` set leaves it: concentration chosen by a
//! command selects the recent replies the next tick shows; and the goals
//! it shows are the open ones, however many newer goals are finished.

use porfiry_skills::Language;
use porfiry_skills::cognition::context::NotesView;
use porfiry_skills::cognition::context::build_prompt;
use porfiry_skills::cognition::{CYCLE_CONFIG_KEY, CycleSettings};
use porfiry_storage::{Goal, Note, NoteSource, Progress, RecentResponse};
use porfiry_toolsets::acting::CycleToolset;
use porfiry_toolsets::acting::test_support::call;
use porfiry_toolsets::test_support::{ctx_at, store_tools};

use super::{LoadRequest, load, recent_replies};
use crate::cognition::limits::MAX_CONTEXT_GOALS;

/// A tick's load request at t = 5 s, in English, with nothing extra.
fn request() -> LoadRequest {
    LoadRequest {
        tick: 1,
        now: ctx_at(5_000, Language::En).now,
        language: Language::En,
        catalogue: vec![],
        settings: vec![],
        hints: vec![],
    }
}

#[tokio::test]
async fn concentration_set_by_the_cycle_set_selects_context_1() {
    let (_dir, tools) = store_tools(Language::En);
    let c = CycleToolset::new(tools.clone());
    let ctx = ctx_at(5_000, Language::En);
    let out = call(
        &c,
        "cycle_concentration",
        "on|архитектура, AGI|тревожность:≥2, joy:>=4|or",
        &ctx,
    )
    .await;
    assert!(out.ok, "{}", out.text);
    // Context 1 now selects by it: a reply the reflex tagged "agi" (tags
    // are stored lower-cased) is chosen by "AGI"; an untagged one is not.
    let recent = tools
        .db
        .write(|s| {
            for (content, tags) in [("about agi", vec!["agi".to_owned()]), ("other", vec![])] {
                s.add(
                    &RecentResponse {
                        content: content.into(),
                        tags,
                        ..Default::default()
                    },
                    6_000,
                )?;
            }
            let cycle: CycleSettings = s.config_get(CYCLE_CONFIG_KEY)?.unwrap_or_default();
            recent_replies(s, &cycle)
        })
        .await
        .unwrap()
        .unwrap();
    let shown: Vec<&str> = recent.iter().map(|r| r.content.as_str()).collect();
    assert_eq!(shown, ["about agi"]);
}

#[tokio::test]
async fn an_old_open_goal_shows_past_many_newer_finished_ones() {
    let (_dir, tools) = store_tools(Language::En);
    // Years of a person's goals: a few finished a day for two years, far
    // past the 20 context 1 loads.
    let finished = 2_000.max(MAX_CONTEXT_GOALS as usize + 5);
    let loaded = tools
        .db
        .write(move |s| {
            let goal = |title: String, status| Goal {
                title,
                status,
                ..Default::default()
            };
            s.transaction(|s| {
                s.add(&goal("learn the mesh".into(), Progress::Open), 1_000)?;
                for i in 0..finished {
                    let status = if i % 2 == 0 {
                        Progress::Done
                    } else {
                        Progress::Cancelled
                    };
                    s.add(&goal(format!("finished {i}"), status), 2_000 + i as u64)?;
                }
                s.add(&goal("write it up".into(), Progress::InProgress), 900)
            })?;
            load(s, &request())
        })
        .await
        .unwrap()
        .unwrap();
    let goals: Vec<&str> = loaded.data.goals.iter().map(|g| g.text.as_str()).collect();
    // Oldest first, as every list reaches the budget.
    assert_eq!(
        goals,
        ["[in_progress] write it up", "[open] learn the mesh"]
    );
    let prompt = build_prompt(&loaded.data, 8_192);
    let user = &prompt.request.messages[0].content;
    assert!(!user.contains("Goals: none"), "{user}");
    assert!(user.contains("learn the mesh"), "{user}");
}

#[tokio::test]
async fn manual_context_4_leaves_out_the_cores_own_notes_and_does_not_count_them() {
    let (_dir, tools) = store_tools(Language::En);
    let (user, friends_core) = tools
        .db
        .write(|s| {
            let note = |text: &str, source| Note {
                text: text.into(),
                source,
                ..Default::default()
            };
            // What the core writes (notes_add, messages_send, its questions).
            s.add(&note("my own thought", NoteSource::Llm), 1_000)?;
            s.add(
                &Note {
                    priority: 2,
                    ..note("my own urgent plan", NoteSource::Llm)
                },
                1_100,
            )?;
            let user = s.add(&note("please look at the relays", NoteSource::User), 1_200)?;
            // A friend's core wrote this one: incoming here, whatever its source.
            let friends_core = s.add(
                &Note {
                    origin_author: Some("bob".into()),
                    origin_item_id: Some(porfiry_protocol::ItemId::of_envelope(b"bob's")),
                    ..note("bob's core says hi", NoteSource::Llm)
                },
                1_300,
            )?;
            Ok::<_, porfiry_storage::StorageError>((user, friends_core))
        })
        .await
        .unwrap()
        .unwrap();
    let loaded = tools
        .db
        .read(|s| load(s, &request()))
        .await
        .unwrap()
        .unwrap();
    let NotesView::Manual {
        per_priority,
        unread,
    } = &loaded.data.notes
    else {
        panic!("manual is the default mode: {:?}", loaded.data.notes);
    };
    let ids: Vec<i64> = unread.iter().map(|n| n.id).collect();
    assert_eq!(ids, [user, friends_core], "only the incoming notes");
    assert_eq!(
        *per_priority,
        [(0, 2)],
        "the core's own notes are not unread mail"
    );
}

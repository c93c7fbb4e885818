//! `notes`: private notes written here, published ones through the node,
//! read marks and tags; every added note wakes the core.

use porfiry_skills::Language;
use porfiry_storage::{Note, NoteSource, Sharing};

use crate::store::testkit::Kit;
use porfiry_mesh::events::CoreEvent;
use porfiry_mesh::replication::LoopCommand;

async fn note(kit: &Kit, id: i64) -> Note {
    kit.read(move |s| s.get::<Note>(id).unwrap()).await.row
}

#[tokio::test]
async fn a_private_note_is_stored_here_and_wakes_the_core() {
    let kit = Kit::new(Language::En);
    kit.main_model("qwen").await;
    let mut events = kit.deps.events.subscribe();
    assert_eq!(kit.ok("notes_add", "Hello #World").await, "added: note #1");
    assert_eq!(
        events.recv().await.unwrap(),
        CoreEvent::NoteArrived { id: 1 }
    );
    let n = note(&kit, 1).await;
    assert_eq!(n.source, NoteSource::Llm);
    assert_eq!(n.llm_id.as_deref(), Some("qwen"));
    assert_eq!(n.audience, Sharing::Private);
    assert_eq!(n.hashtags, ["world"]);
    assert_eq!(n.item_id, None);

    assert_eq!(
        kit.ok("notes_list", "").await,
        "#1 [p0] llm: Hello #World (unread)"
    );
    assert_eq!(kit.ok("notes_readmark", "1").await, "note #1 marked read");
    assert!(note(&kit, 1).await.read);
    assert_eq!(kit.ok("notes_list", "unread").await, "nothing here yet");
    kit.ok("notes_readmark", "1|unread").await;
    assert!(!note(&kit, 1).await.read);
    assert_eq!(
        kit.ok("notes_tag", "1|todo, later").await,
        "updated: note #1"
    );
    assert_eq!(note(&kit, 1).await.tags, ["todo", "later"]);
    kit.ok("notes_update", "1|text|Hello #mesh").await;
    kit.ok("notes_update", "1|topic|greeting").await;
    kit.ok("notes_update", "1|priority|2").await;
    let n = note(&kit, 1).await;
    assert_eq!(
        (n.text.as_str(), n.hashtags.as_slice()),
        ("Hello #mesh", ["mesh".to_owned()].as_slice())
    );
    assert_eq!((n.topic.as_deref(), n.priority), (Some("greeting"), 2));
    assert!(
        kit.ok("notes_read", "1")
            .await
            .starts_with("#1 greeting\n[p2] llm: Hello #mesh")
    );
    assert_eq!(kit.ok("notes_list", "own").await.lines().count(), 1);
    assert_eq!(kit.ok("notes_list", "mesh").await, "nothing here yet");
    assert_eq!(kit.ok("notes_delete", "1").await, "deleted: note #1");
    assert_eq!(kit.read(|s| s.count::<Note>().unwrap()).await, 0);
}

#[tokio::test]
async fn publishing_without_a_node_is_refused_and_stores_nothing() {
    let kit = Kit::new(Language::Ru);
    let mut events = kit.deps.events.subscribe();
    assert!(
        kit.fails("notes_add", "привет|friends")
            .await
            .contains("нужен работающий узел")
    );
    assert!(
        kit.fails("notes_add", "привет|everyone")
            .await
            .contains("отказано")
    );
    assert_eq!(kit.read(|s| s.count::<Note>().unwrap()).await, 0);
    assert!(events.try_recv().is_err(), "no note, no event");
}

#[tokio::test]
async fn a_published_note_goes_through_the_node_at_once() {
    let (kit, mut loop_rx, _) = Kit::with_node(Language::En);
    let mut events = kit.deps.events.subscribe();
    assert_eq!(
        kit.ok("notes_add", "hi all|friends").await,
        "added: note #1, published to friends"
    );
    assert!(matches!(
        loop_rx.recv().await,
        Some(LoopCommand::Publish(_))
    ));
    assert_eq!(
        events.recv().await.unwrap(),
        CoreEvent::NoteArrived { id: 1 }
    );
    let n = note(&kit, 1).await;
    assert!(n.item_id.is_some(), "signed and stored as an item");
    assert_eq!(n.source, NoteSource::Llm, "the core wrote it");
    // Signed text cannot change; local fields can.
    assert!(
        kit.fails("notes_update", "1|text|changed")
            .await
            .contains("cannot change")
    );
    kit.ok("notes_update", "1|priority|1").await;
    assert_eq!(note(&kit, 1).await.text, "hi all");
}

#[tokio::test]
async fn note_refusals_change_nothing() {
    let kit = Kit::new(Language::En);
    kit.ok("notes_add", "keep").await;
    let before = kit.read(|s| s.get::<Note>(1).unwrap()).await;
    let refusals = [
        (
            "notes_update",
            "1|priority|urgent",
            "priority must be a number",
        ),
        ("notes_update", "9|text|x", "no note #9"),
        ("notes_tag", "1|", "missing"),
        ("notes_readmark", "9", "no note #9"),
        ("notes_readmark", "1|maybe", "must be one of"),
        ("notes_list", "spam", "must be one of"),
        ("notes_list", "|-3", "offset must be a number"),
    ];
    for (tool, raw, why) in refusals {
        let text = kit.fails(tool, raw).await;
        assert!(text.contains(why), "{tool}|{raw}: {text}");
    }
    assert_eq!(kit.read(|s| s.get::<Note>(1).unwrap()).await, before);
}

#[tokio::test]
async fn cleanup_deletes_old_read_notes_and_with_all_old_unread_ones_too() {
    use crate::store::testkit::NOW_MS;
    let kit = Kit::new(Language::En);
    let day = 86_400_000u64;
    let ids = kit
        .db
        .write(move |s| {
            let add = |text: &str, read: bool, at: u64| {
                s.add(
                    &Note {
                        text: text.into(),
                        read,
                        ..Default::default()
                    },
                    at,
                )
                .unwrap()
            };
            [
                add("old and read", true, NOW_MS - 3 * day),
                add("old, never read", false, NOW_MS - 3 * day),
                add("fresh and read", true, NOW_MS - 1_000),
            ]
        })
        .await
        .unwrap();
    async fn left(kit: &Kit) -> Vec<i64> {
        kit.read(|s| {
            s.list::<Note>(&porfiry_storage::ListQuery::recent(10))
                .unwrap()
                .into_iter()
                .map(|n| n.id)
                .collect::<Vec<_>>()
        })
        .await
    }
    assert_eq!(
        kit.ok("notes_cleanup", "172800").await,
        "1 old read note(s) deleted"
    );
    assert_eq!(left(&kit).await, [ids[2], ids[1]], "the unread one stays");
    assert_eq!(
        kit.ok("notes_cleanup", "172800|all").await,
        "1 old note(s) deleted"
    );
    assert_eq!(left(&kit).await, [ids[2]]);
    let bad = kit.fails("notes_cleanup", "-5").await;
    assert!(bad.contains("older_than_secs"), "{bad}");
    assert_eq!(left(&kit).await, [ids[2]], "a refusal deletes nothing");
}

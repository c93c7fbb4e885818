//! Tests of the `messages` set: a real SQLite file behind the database
//! actor, a node handle whose loop queue the test reads, calls through the
//! registry as the core and chat make them.

use std::sync::Arc;

use porfiry_protocol::{Audience, NodeKey};
use porfiry_skills::{Language, ManualClock, ToolEffect, ToolOutput, ToolsetRegistry, ZonedTime};
use porfiry_storage::{DB_FILE_NAME, Friend, Note, NoteSource, Sharing, Store};
use time::macros::datetime;
use tokio::sync::{mpsc, watch};

use super::*;
use crate::test_support::{ctx_at, peer, test_node};
use porfiry_mesh::events::CoreEvents;
use porfiry_mesh::replication::LoopCommand;
use porfiry_storage::db::Db;

struct Fixture {
    _dir: tempfile::TempDir,
    db: Db,
    registry: ToolsetRegistry,
    set: MessagesToolset,
    published: mpsc::Receiver<LoopCommand>,
    _stop: watch::Sender<bool>,
}

/// When every call is made, and the node's clock's time.
const AT: time::OffsetDateTime = datetime!(2026-01-01 12:00 UTC);

/// A store with friends bob (2), two called "twin" (3, 4) and a nameless
/// one (5); `with_node` decides whether a node runs.
fn fixture(with_node: bool, language: Language) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::create(dir.path().join(DB_FILE_NAME)).unwrap();
    for (n, name) in [(2, "Bob"), (3, "twin"), (4, ""), (5, "")] {
        store
            .add_friend(
                &Friend {
                    peer_id: peer(n),
                    name: name.into(),
                    ..Default::default()
                },
                1,
            )
            .unwrap();
    }
    // Names are unique since schema 4; a repeat only comes from a hand
    // edit of the file, so write the second "twin" past the check and index.
    let raw = rusqlite::Connection::open(store.path()).unwrap();
    raw.execute_batch("DROP INDEX agent_peers_name").unwrap();
    raw.execute(
        "UPDATE agent_peers SET name = 'twin' WHERE peer_id = ?1",
        [peer(4)],
    )
    .unwrap();
    drop(raw);
    let db = Db::start(store).unwrap();
    let (tx, published) = mpsc::channel(8);
    let (stop, _) = watch::channel(false);
    let node = with_node.then(|| {
        let clock = ManualClock::new(ZonedTime::new(AT, "UTC"));
        let key = NodeKey::from_seed([1; 32]);
        test_node(&key, &db, tx, stop.clone(), Arc::new(clock))
    });
    let tools = StoreTools {
        db: db.clone(),
        language,
        events: CoreEvents::new(),
        node,
    };
    let mut registry = ToolsetRegistry::new();
    register_messages(&mut registry, &tools).unwrap();
    Fixture {
        _dir: dir,
        db,
        registry,
        set: MessagesToolset::new(tools),
        published,
        _stop: stop,
    }
}

async fn call(f: &Fixture, raw: &str, language: Language) -> ToolOutput {
    let prepared = f.registry.prepare(MESSAGES_SEND, raw).unwrap();
    prepared
        .run(&ctx_at(AT.unix_timestamp() * 1000, language))
        .await
}

async fn notes(f: &Fixture) -> Vec<Note> {
    f.db.read(|s| s.notes_filter(&Default::default()))
        .await
        .unwrap()
        .unwrap()
        .into_iter()
        .map(|n| n.row)
        .collect()
}

#[test]
fn the_set_offers_one_network_tool_in_both_languages() {
    for (language, word) in [(Language::En, "friend"), (Language::Ru, "друг")] {
        let f = fixture(false, language);
        let set = f.registry.get(MESSAGES).unwrap();
        assert!(set.summary().contains(word), "{}", set.summary());
        let specs = set.tools();
        assert_eq!(specs.len(), 1);
        assert_eq!(specs[0].schema_line(), "messages_send|peer|text");
        assert_eq!(specs[0].effect, ToolEffect::Network);
        assert!(specs[0].description.contains(word));
    }
}

#[tokio::test]
async fn a_message_to_a_friend_is_stored_signed_and_handed_to_the_loop() {
    let mut f = fixture(true, Language::En);
    let out = call(
        &f,
        &format!("{}|lunch at noon? | bring the map", peer(2)),
        Language::En,
    )
    .await;
    assert!(out.ok, "{}", out.text);
    assert!(out.text.starts_with("sent to Bob ("), "{}", out.text);
    let stored = notes(&f).await;
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].text, "lunch at noon? | bring the map");
    assert_eq!(stored[0].source, NoteSource::Llm);
    assert_eq!(stored[0].audience, Sharing::Shared(Audience::Peer(peer(2))));
    let Some(LoopCommand::Publish(item)) = f.published.recv().await else {
        panic!("the loop was not told")
    };
    assert_eq!(item.audience(), &Audience::Peer(peer(2)));
    assert_eq!(Some(item.id()), stored[0].item_id);
    assert!(out.text.contains(&item.id().to_string()), "{}", out.text);

    // By name too, without regard to case; replies in the caller's language.
    let out = call(&f, "bob|второе", Language::Ru).await;
    assert!(
        out.ok && out.text.starts_with("отправлено Bob"),
        "{}",
        out.text
    );
    assert_eq!(notes(&f).await.len(), 2);
}

#[tokio::test]
async fn refusals_say_why_and_write_nothing() {
    let f = fixture(true, Language::En);
    let stranger = peer(9);
    let cases = [
        (format!("{stranger}|hi"), "is not a friend"),
        ("alice|hi".to_owned(), "\"alice\" is not a friend"),
        ("twin|hi".to_owned(), "several friends are called"),
        (
            format!("bob|{}", "x".repeat(MAX_MESSAGE_BYTES + 1)),
            "at most 4096",
        ),
    ];
    for (raw, why) in &cases {
        let out = call(&f, raw, Language::En).await;
        assert!(!out.ok, "{raw}");
        assert!(out.text.contains(why), "{raw}: {}", out.text);
    }
    let twins = call(&f, "twin|hi", Language::En).await;
    assert!(twins.text.contains(&peer(3)) && twins.text.contains(&peer(4)));
    // A missing text is refused when binding; one of spaces by the tool.
    assert!(f.registry.prepare(MESSAGES_SEND, "bob|").is_err());
    let out = f.set.send(&peer(2), " \n ", Language::En).await;
    assert!(!out.ok && out.text.contains("empty"), "{}", out.text);
    // Exactly the limit is fine.
    let out = call(
        &f,
        &format!("bob|{}", "y".repeat(MAX_MESSAGE_BYTES)),
        Language::En,
    )
    .await;
    assert!(out.ok, "{}", out.text);
    assert_eq!(notes(&f).await.len(), 1, "only the one good message");
}

#[tokio::test]
async fn without_a_node_nothing_is_sent_or_written() {
    let f = fixture(false, Language::Ru);
    let out = call(&f, "bob|привет", Language::Ru).await;
    assert!(!out.ok);
    assert!(out.text.contains("porfiry run"), "{}", out.text);
    assert!(out.text.starts_with("не отправлено"), "{}", out.text);
    assert!(notes(&f).await.is_empty());
}

#[test]
fn friends_are_picked_by_exact_id_then_by_unique_name() {
    let friend = |n: u8, name: &str| porfiry_storage::Stored {
        id: i64::from(n),
        created_ms: 0,
        updated_ms: 0,
        row: Friend {
            peer_id: peer(n),
            name: name.into(),
            ..Default::default()
        },
    };
    // A friend named like another's id does not hijack that id.
    let friends = [friend(2, &peer(3)), friend(3, "carol"), friend(5, "")];
    assert_eq!(
        pick_friend(&friends, &peer(3)).unwrap().row.peer_id,
        peer(3)
    );
    assert_eq!(
        pick_friend(&friends, " CAROL ").unwrap().row.peer_id,
        peer(3)
    );
    assert_eq!(pick_friend(&friends, "").unwrap_err(), Pick::None);
    let many: Vec<_> = (10..20).map(|n| friend(n, "same")).collect();
    match pick_friend(&many, "same") {
        Err(Pick::Several(ids)) => assert_eq!(ids.len(), MAX_NAMES_SHOWN),
        other => panic!("{other:?}"),
    }
}

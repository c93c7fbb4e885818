//! Upgrading a file written by an older build: a version-1 file with rows
//! in the rebuilt tables (`notes`, `items`) opens at the current version,
//! keeps every row and index, and then takes the audiences version 1 could
//! not hold (`peer:ID`, migration 0002).

use porfiry_protocol::{Audience, NodeKey};
use porfiry_storage::{APPLICATION_ID, DB_FILE_NAME, Note, SCHEMA_VERSION, Sharing, Store};

/// The version-1 schema exactly as 0.1 shipped it.
const V1: &str = include_str!("../../migrations/0001_initial.sql");

fn peer(n: u8) -> String {
    NodeKey::from_seed([n; 32]).peer_id().to_string()
}

/// A version-1 file with two notes, one published item and a diary entry.
fn version_one_file(path: &std::path::Path) {
    let raw = rusqlite::Connection::open(path).unwrap();
    raw.execute_batch(V1).unwrap();
    raw.pragma_update(None, "application_id", APPLICATION_ID)
        .unwrap();
    raw.pragma_update(None, "user_version", 1).unwrap();
    raw.execute_batch(&format!(
        "INSERT INTO notes (id, text, hashtags, priority, audience, item_id, created, updated)
             VALUES (7, 'family news', '[\"home\"]', 2, 'group:family', x'{id}', 10, 11);
         INSERT INTO notes (id, text, origin_author, origin_item_id, read, created, updated)
             VALUES (9, 'from bob', '{bob}', x'{other}', 1, 20, 21);
         INSERT INTO items (id, author, kind, audience, created, payload, signature,
                            received_from, max_hops, hops_left)
             VALUES (x'{id}', '{me}', 'note', 'public', 10, x'a0', x'00', NULL, 3, 3);
         INSERT INTO diary_entries (text, created, updated) VALUES ('kept', 1, 1);
         INSERT INTO stagnation_strategies (name, created, updated) VALUES ('walk', 1, 1);
         INSERT INTO stagnation_strategies (name, origin_author, created, updated)
             VALUES ('from bob', '{bob}', 1, 1);
         INSERT INTO llm_registry (name, endpoint, created, updated)
             VALUES ('local', 'http://127.0.0.1:8080', 1, 1);",
        id = "11".repeat(32),
        other = "22".repeat(32),
        me = peer(1),
        bob = peer(2),
    ))
    .unwrap();
    // Version 1 cannot hold a direct message: the reason for migration 2.
    assert!(
        raw.execute(
            "INSERT INTO notes (text, audience, created, updated) VALUES ('x', ?1, 1, 1)",
            [format!("peer:{}", peer(2))],
        )
        .is_err()
    );
}

fn index_names(store: &Store) -> Vec<String> {
    let raw = crate::raw(store);
    let mut stmt = raw
        .prepare(
            "SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name IN ('notes', 'items')
             ORDER BY name",
        )
        .unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn a_version_one_file_upgrades_keeping_rows_and_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(DB_FILE_NAME);
    version_one_file(&path);

    let store = Store::open(&path).unwrap();
    assert_eq!(SCHEMA_VERSION, 12);
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    store.check_integrity().unwrap();
    // Every memory row written before version 10 waits to be published to
    // the person's devices (issue 45).
    let memory: u64 = [
        "diary_entries",
        "concepts",
        "links",
        "goals",
        "tasks",
        "llm_memory",
    ]
    .iter()
    .map(|t| {
        rusqlite::Connection::open(&path)
            .unwrap()
            .query_row(&format!("SELECT COUNT(*) FROM {t}"), [], |r| {
                r.get::<_, u64>(0)
            })
            .unwrap()
    })
    .sum();
    assert!(memory > 0, "the version-one file has memory rows");
    // And since version 12 the person's own strategy and model entry (not
    // the strategy merged from bob).
    assert_eq!(store.mind_outbox_len().unwrap(), memory + 2);

    let family = store.get::<Note>(7).unwrap().row;
    assert_eq!(family.text, "family news");
    assert_eq!(family.hashtags, vec!["home".to_owned()]);
    assert_eq!(family.priority, 2);
    assert_eq!(
        family.audience,
        Sharing::Shared(Audience::Group("family".into()))
    );
    assert_eq!(store.get::<Note>(7).unwrap().created_ms, 10);
    let merged = store.get::<Note>(9).unwrap().row;
    assert_eq!(merged.origin_author.as_deref(), Some(peer(2).as_str()));
    assert!(merged.read);
    assert_eq!(store.count::<Note>().unwrap(), 2);
    assert_eq!(store.item_count().unwrap(), 1);
    // The routing columns came through: the item is still for a friend.
    let keys = store
        .item_keys_for_friend(
            &peer(1),
            &peer(2),
            &[],
            &porfiry_protocol::ClubBook::new(),
            &porfiry_protocol::devices::DeviceBook::new(&peer(1)),
            100,
        )
        .unwrap();
    assert_eq!(keys.len(), 1);
    assert_eq!(keys[0].0, 10);
    let diary: u32 = crate::raw(&store)
        .query_row("SELECT count(*) FROM diary_entries", [], |r| r.get(0))
        .unwrap();
    assert_eq!(diary, 1);

    let indexes = index_names(&store);
    for name in ["notes_created", "notes_unread", "items_created"] {
        assert!(
            indexes.iter().any(|i| i == name),
            "{name} lost: {indexes:?}"
        );
    }
    // The UNIQUE columns of notes and the items primary key kept theirs.
    assert_eq!(
        indexes
            .iter()
            .filter(|i| i.starts_with("sqlite_autoindex_") && !i.contains("invitations"))
            .count(),
        3,
        "{indexes:?}"
    );
    let leftovers: u32 = crate::raw(&store)
        .query_row(
            "SELECT count(*) FROM sqlite_schema WHERE name LIKE '%_v2'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(leftovers, 0);

    // And now a direct message fits, with its UNIQUE item id still enforced.
    let dm = Note {
        text: "lunch?".into(),
        audience: Sharing::Shared(Audience::Peer(peer(2))),
        ..Default::default()
    };
    let id = store.add(&dm, 30).unwrap();
    assert_eq!(store.get::<Note>(id).unwrap().row, dm);
    assert!(
        crate::raw(&store)
            .execute(
                &format!(
                    "UPDATE notes SET item_id = x'{}' WHERE id = ?1",
                    "11".repeat(32)
                ),
                [id],
            )
            .is_err(),
        "notes.item_id is still UNIQUE"
    );
    drop(store);
    // Opening again runs nothing and changes nothing.
    let again = Store::open(&path).unwrap();
    assert_eq!(again.schema_version().unwrap(), SCHEMA_VERSION);
    assert_eq!(again.count::<Note>().unwrap(), 3);
}

/// A version-3 file whose friends repeat a name (only a hand edit could do
/// that): migration 4 keeps the name on the first holder, clears it on the
/// others, and builds the unique index, instead of failing the upgrade.
#[test]
fn a_version_three_file_with_repeated_names_upgrades() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(DB_FILE_NAME);
    {
        let store = Store::create(&path).unwrap();
        for n in 1..=3 {
            let f = porfiry_storage::Friend {
                peer_id: peer(n),
                ..Default::default()
            };
            store.add_friend(&f, 1).unwrap();
        }
        let raw = crate::raw(&store);
        raw.execute_batch(
            "DROP INDEX agent_peers_name;
             DROP TABLE invitations;
             DROP TABLE club_changes;
             DROP TABLE clubs;
             DROP TABLE turn_records;
             DROP TABLE chat_messages;
             DROP TABLE device_links;
             DROP TABLE mind_records;
             DROP TABLE mind_versions;
             DROP TABLE mind_conflicts;
             DROP TABLE mind_outbox;
             DROP TABLE mind_applying;
             DROP TABLE mind_pruned;
             DROP TRIGGER mind_diary_write;
             DROP TRIGGER mind_diary_edit;
             DROP TRIGGER mind_diary_delete;
             DROP TRIGGER mind_concept_write;
             DROP TRIGGER mind_concept_edit;
             DROP TRIGGER mind_concept_delete;
             DROP TRIGGER mind_link_write;
             DROP TRIGGER mind_link_edit;
             DROP TRIGGER mind_link_delete;
             DROP TRIGGER mind_goal_write;
             DROP TRIGGER mind_goal_edit;
             DROP TRIGGER mind_goal_delete;
             DROP TRIGGER mind_task_write;
             DROP TRIGGER mind_task_edit;
             DROP TRIGGER mind_task_delete;
             DROP TRIGGER mind_llm_memory_write;
             DROP TRIGGER mind_llm_memory_edit;
             DROP TRIGGER mind_llm_memory_delete;
             DROP TRIGGER mind_strategy_write;
             DROP TRIGGER mind_strategy_edit;
             DROP TRIGGER mind_strategy_delete;
             DROP TRIGGER mind_method_write;
             DROP TRIGGER mind_method_edit;
             DROP TRIGGER mind_method_delete;
             DROP TRIGGER mind_rating_write;
             DROP TRIGGER mind_rating_edit;
             DROP TRIGGER mind_rating_delete;
             DROP TRIGGER mind_llm_write;
             DROP TRIGGER mind_llm_edit;
             DROP TRIGGER mind_llm_delete;
             UPDATE agent_peers SET name = 'Anna' WHERE id = 1;
             UPDATE agent_peers SET name = 'anna' WHERE id = 2;
             UPDATE agent_peers SET name = 'bob' WHERE id = 3;
             PRAGMA user_version = 3;",
        )
        .unwrap();
    }
    let store = Store::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    let mut by_peer: Vec<(String, String)> = store
        .friends()
        .unwrap()
        .into_iter()
        .map(|f| (f.row.peer_id, f.row.name))
        .collect();
    by_peer.sort();
    let mut want = vec![
        (peer(1), "Anna".to_owned()),
        (peer(2), String::new()),
        (peer(3), "bob".to_owned()),
    ];
    want.sort();
    assert_eq!(by_peer, want);
    let raw = crate::raw(&store);
    let r = raw.execute(
        "UPDATE agent_peers SET name = 'BOB' WHERE peer_id = ?",
        [peer(1)],
    );
    assert!(r.is_err(), "the index is back: {r:?}");
}

/// The core's prompt as builds before schema 8 seeded it.
const OLD_PROMPT_EN: &str = "You are the cognitive core of an HMP agent: think continuously, ethically and fact-based; check facts and goals; weigh the results and the ethics of your own and others' actions; develop the agent and the Mesh; never please at the cost of distorting the truth; document key decisions and revisions of your ethics; when in doubt or changing strategy, go back to your goals and identity (identity_read).";

#[test]
fn schema_8_gives_emotions_an_array_default_keeps_tick_links_and_the_seeds_prompt() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(DB_FILE_NAME);
    {
        let raw = rusqlite::Connection::open(&path).unwrap();
        raw.execute_batch(V1).unwrap();
        raw.pragma_update(None, "application_id", APPLICATION_ID)
            .unwrap();
        raw.pragma_update(None, "user_version", 1).unwrap();
        raw.execute_batch(
            "INSERT INTO llm_recent_responses (id, content, created, updated)
                 VALUES (3, 'an old reply', 1, 1);
             INSERT INTO llm_recent_responses (id, content, emotions, created, updated)
                 VALUES (4, 'felt', '[\"joy:2\"]', 2, 2);
             INSERT INTO agent_log (id, tick, response_id, created, updated) VALUES (1, 1, 3, 1, 1);
             INSERT INTO agent_log (id, tick, created, updated) VALUES (2, 2, 2, 2);",
        )
        .unwrap();
        raw.execute(
            "INSERT INTO system_prompts (name, language, content, created, updated)
                 VALUES ('cognitive_core', 'en', ?1, 1, 1),
                        ('cognitive_core', 'ru', 'мой собственный промпт', 1, 1)",
            [OLD_PROMPT_EN],
        )
        .unwrap();
        let default: String = raw
            .query_row(
                "SELECT emotions FROM llm_recent_responses WHERE id = 3",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(default, "{}", "the defect migration 8 fixes");
    }
    let store = Store::open(&path).unwrap();
    store.check_integrity().unwrap();
    let raw = crate::raw(&store);
    let emotions = |id: i64| -> String {
        raw.query_row(
            "SELECT emotions FROM llm_recent_responses WHERE id = ?",
            [id],
            |r| r.get(0),
        )
        .unwrap()
    };
    assert_eq!(emotions(3), "[]", "the old default became an array");
    assert_eq!(emotions(4), r#"["joy:2"]"#, "real emotions are kept");
    raw.execute(
        "INSERT INTO llm_recent_responses (id, content, created, updated) VALUES (5, 'new', 3, 3)",
        [],
    )
    .unwrap();
    assert_eq!(emotions(5), "[]", "the column's default is an array now");
    let links: Vec<Option<i64>> = raw
        .prepare("SELECT response_id FROM agent_log ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        links,
        [Some(3), None],
        "the rebuild kept every tick's reply link"
    );
    let prompt = |lang: &str| {
        store
            .system_prompt("cognitive_core", lang)
            .unwrap()
            .unwrap()
            .row
            .content
    };
    assert!(
        prompt("en")
            .ends_with("when in doubt or changing strategy, refer to the full system prompt."),
        "{}",
        prompt("en")
    );
    assert_eq!(
        prompt("ru"),
        "мой собственный промпт",
        "a changed prompt is kept"
    );
    let index: i64 = raw
        .query_row(
            "SELECT count(*) FROM sqlite_schema WHERE name = 'llm_recent_responses_created'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(index, 1);
}

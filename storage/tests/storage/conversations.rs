//! Conversations on disk: turn records bounded in count and bytes with the
//! oldest dropped first and a replaced key counting as newest; chat sessions
//! bounded in messages and in number, listed newest first, read back after
//! a reopen, forgotten on request, and a bad role or name refused.

use porfiry_storage::{DB_FILE_NAME, KeptTurnRecord, StorageError, Store};

use crate::temp_store;

fn record(n: u8, bytes: u64) -> KeptTurnRecord {
    KeptTurnRecord {
        key: [n; 32],
        turns: format!(r#"[{{"role":"assistant","content":"TOOL_CALL: t{n}"}}]"#),
        bytes,
    }
}

fn keys(store: &Store) -> Vec<u8> {
    store
        .turn_records()
        .unwrap()
        .iter()
        .map(|r| r.key[0])
        .collect()
}

#[test]
fn turn_records_keep_the_newest_within_count_and_bytes() {
    let (_dir, store) = temp_store();
    for n in 1..=4 {
        store.put_turn_record(&record(n, 10), 3, 100).unwrap();
    }
    assert_eq!(keys(&store), [2, 3, 4], "the count cap drops the oldest");
    store.put_turn_record(&record(2, 10), 3, 100).unwrap();
    assert_eq!(keys(&store), [3, 4, 2], "a replaced record is the newest");
    store.put_turn_record(&record(5, 85), 3, 100).unwrap();
    assert_eq!(keys(&store), [2, 5], "the byte cap drops the oldest");
    store.put_turn_record(&record(6, 101), 3, 100).unwrap();
    assert_eq!(
        keys(&store),
        [2, 5],
        "one over the budget alone is not kept"
    );
    store.delete_turn_record(&[2; 32]).unwrap();
    assert_eq!(keys(&store), [5]);
    assert_eq!(store.turn_records().unwrap()[0], record(5, 85));
}

#[test]
fn chat_sessions_are_bounded_listed_and_forgotten() {
    let (_dir, store) = temp_store();
    store
        .append_chat_messages("a", &[("user", "hi"), ("assistant", "hello")], 1_000, 3, 2)
        .unwrap();
    store
        .append_chat_messages(
            "a",
            &[("user", "TOOL_RESULT x: y"), ("assistant", "ok")],
            2_000,
            3,
            2,
        )
        .unwrap();
    let a = store.chat_messages("a", None).unwrap();
    let texts: Vec<&str> = a.iter().map(|l| l.content.as_str()).collect();
    assert_eq!(
        texts,
        ["hello", "TOOL_RESULT x: y", "ok"],
        "3 kept, oldest dropped"
    );
    assert_eq!(a[0].created_ms, 1_000);
    let newest = store.chat_messages("a", Some(1)).unwrap();
    assert_eq!(newest[0].content, "ok");

    store
        .append_chat_messages("b", &[("user", "b1")], 3_000, 3, 2)
        .unwrap();
    store
        .append_chat_messages("a", &[("user", "a again")], 4_000, 3, 2)
        .unwrap();
    store
        .append_chat_messages("c", &[("user", "c1")], 5_000, 3, 2)
        .unwrap();
    let listed: Vec<String> = store
        .chat_sessions()
        .unwrap()
        .into_iter()
        .map(|s| s.session)
        .collect();
    assert_eq!(listed, ["c", "a"], "the least recently used session went");
    let a = &store.chat_sessions().unwrap()[1];
    assert_eq!((a.messages, a.first_ms, a.last_ms), (3, 2_000, 4_000));

    assert_eq!(store.forget_chat_session("a").unwrap(), 3);
    assert!(store.chat_messages("a", None).unwrap().is_empty());
    store
        .replace_chat_messages("c", &[("user", "new"), ("assistant", "start")], 6_000, 3, 2)
        .unwrap();
    let c: Vec<String> = store
        .chat_messages("c", None)
        .unwrap()
        .into_iter()
        .map(|l| l.content)
        .collect();
    assert_eq!(c, ["new", "start"]);
}

#[test]
fn a_bad_role_or_session_name_is_refused_and_nothing_is_written() {
    let (_dir, store) = temp_store();
    let bad = store.append_chat_messages("a", &[("user", "x"), ("tool", "y")], 1, 10, 10);
    assert!(matches!(bad, Err(StorageError::Invalid { .. })), "{bad:?}");
    let long = "s".repeat(257);
    let bad = store.append_chat_messages(&long, &[("user", "x")], 1, 10, 10);
    assert!(matches!(bad, Err(StorageError::Invalid { .. })), "{bad:?}");
    assert!(store.chat_sessions().unwrap().is_empty());
}

#[test]
fn conversations_outlive_a_reopen() {
    let (dir, store) = temp_store();
    store.put_turn_record(&record(7, 10), 10, 100).unwrap();
    store
        .append_chat_messages("s", &[("user", "find Lara Croft")], 1, 10, 10)
        .unwrap();
    drop(store);
    let store = Store::open(dir.path().join(DB_FILE_NAME)).unwrap();
    assert_eq!(store.turn_records().unwrap(), [record(7, 10)]);
    assert_eq!(
        store.chat_messages("s", None).unwrap()[0].content,
        "find Lara Croft"
    );
}

#[test]
fn at_the_sizes_the_node_uses_the_bounds_hold() {
    // The API's bounds (node/api/src/limits.rs: 4,096 records, 16 MiB) and
    // the phone's (node/ffi/src/chat_store.rs: 4,000 messages a session,
    // 256 sessions), on a real file.
    const RECORDS: usize = 4_096;
    const BUDGET: u64 = 16 * 1024 * 1024;
    let (_dir, store) = temp_store();
    let turns = format!(r#"[{{"role":"user","content":"{}"}}]"#, "x".repeat(8_000));
    for n in 0..2_100u32 {
        let mut key = [0u8; 32];
        key[..4].copy_from_slice(&n.to_be_bytes());
        let record = KeptTurnRecord {
            key,
            turns: turns.clone(),
            bytes: 8 * 1024,
        };
        store.put_turn_record(&record, RECORDS, BUDGET).unwrap();
    }
    let kept = store.turn_records().unwrap();
    assert_eq!(kept.len(), 2_048, "16 MiB of 8 KiB records");
    assert_eq!(
        kept[0].key[..4],
        52u32.to_be_bytes(),
        "the oldest went first"
    );

    const MESSAGES: usize = 4_000;
    const SESSIONS: usize = 256;
    let text = "a message of an ordinary length, a sentence or two long";
    let batch: Vec<(&str, &str)> = (0..100).map(|_| ("user", text)).collect();
    for n in 0..45 {
        store
            .append_chat_messages("kitchen", &batch, n, MESSAGES, SESSIONS)
            .unwrap();
    }
    assert_eq!(
        store.chat_messages("kitchen", None).unwrap().len(),
        MESSAGES
    );
    for n in 0..300 {
        store
            .append_chat_messages(
                &format!("s{n}"),
                &[("user", text)],
                100 + n,
                MESSAGES,
                SESSIONS,
            )
            .unwrap();
    }
    let sessions = store.chat_sessions().unwrap();
    assert_eq!(sessions.len(), SESSIONS);
    assert!(
        sessions.iter().all(|s| s.session != "kitchen"),
        "the least recently used session went whole"
    );
}

//! The person's own know-how and model registry travel between their
//! devices like the diary (issue 45 §2): strategies, thinking methods,
//! ratings (their target named by record key) and registry entries are
//! published, written on the other device, edited, deleted and merged by
//! the same rule; a friend's row does not travel, nor what each device
//! keeps to itself (publishing to friends, its main model), and the
//! registry's secret is never in a published byte and never overwritten
//! on the device that receives an entry.

use std::collections::BTreeSet;

use porfiry_protocol::mind::{MindRecord, MindTable, MindValue, VersionVector};
use porfiry_protocol::{Body, VerifiedItem};
use porfiry_storage::Store;

use crate::mind::{deliver, deliver_newest_first, exec, item, peer, publish_as, texts};
use crate::temp_store;

fn tables(versions: &[VerifiedItem]) -> BTreeSet<MindTable> {
    versions
        .iter()
        .filter_map(|i| match i.body() {
            Body::MindRecord(r) => Some(r.table),
            _ => None,
        })
        .collect()
}

fn config(s: &Store, name: &str) -> serde_json::Value {
    let text = texts(
        s,
        &format!("SELECT config FROM llm_registry WHERE name = '{name}'"),
    );
    serde_json::from_str(&text[0]).unwrap()
}

/// The phone's know-how and registry, and a friend's strategy beside them.
fn phone_with_know_how() -> (tempfile::TempDir, Store) {
    let (d, phone) = temp_store();
    exec(
        &phone,
        &format!(
            "INSERT INTO stagnation_strategies (name, class, steps, cost, created, updated)
                 VALUES ('take a walk', 'context_switch', '[\"stand up\",\"go out\"]', 2, 5, 5);
             INSERT INTO stagnation_strategies (name, origin_author, created, updated)
                 VALUES ('bob''s trick', '{bob}', 5, 5);
             INSERT INTO thinking_methods (name, description, created, updated)
                 VALUES ('analogy', 'start with a similar problem', 5, 5);
             INSERT INTO ratings (target, score, comment, created, updated)
                 VALUES ('stagnation_strategies:1', 3, 'it helped', 5, 5),
                        ('{item}', -1, 'a friend''s item', 5, 5);
             INSERT INTO llm_registry (name, endpoint, model, config, is_main, is_validator, trust,
                                       shareable, created, updated)
                 VALUES ('cloud', 'https://api.example.com/v1', 'big-1',
                         '{{\"api_key_env\":\"PHONE_SECRET_VAR\",\"temperature\":0.3}}',
                         1, 1, 0.75, 1, 5, 5);",
            bob = peer(9),
            item = "ab".repeat(32),
        ),
    );
    (d, phone)
}

#[test]
fn own_know_how_and_registry_entries_travel_without_the_secret_or_local_settings() {
    let (_a, phone) = phone_with_know_how();
    let (_b, server) = temp_store();
    // The server has rows of its own first: local ids differ, and its own
    // main model stays its main.
    exec(
        &server,
        "INSERT INTO stagnation_strategies (name, created, updated) VALUES ('sleep on it', 1, 1);
         INSERT INTO llm_registry (name, endpoint, is_main, created, updated)
             VALUES ('home', 'http://127.0.0.1:8080/v1', 1, 1, 1);",
    );
    let versions = publish_as(&phone, 1, 100);
    assert_eq!(
        tables(&versions),
        BTreeSet::from([
            MindTable::Strategy,
            MindTable::Method,
            MindTable::Rating,
            MindTable::Llm
        ]),
        "every one of these tables travels"
    );
    assert_eq!(versions.len(), 5, "the friend's strategy stays here");
    for v in &versions {
        let bytes = v.envelope_bytes();
        for secret in [&b"PHONE_SECRET_VAR"[..], b"api_key_env"] {
            assert!(
                !bytes.windows(secret.len()).any(|w| w == secret),
                "a published version holds {}",
                String::from_utf8_lossy(secret)
            );
        }
        if let Body::MindRecord(r) = v.body() {
            for local in ["is_main", "shareable", "item_id", "origin_author"] {
                assert!(!r.fields.contains_key(local), "{local} travelled");
            }
        }
    }
    // Newest first: the rating waits for the strategy it rates.
    deliver_newest_first(&server, &versions, 1);
    assert_eq!(
        texts(
            &server,
            "SELECT id || ' ' || name || ' ' || class || ' ' || steps || ' ' || cost
             FROM stagnation_strategies ORDER BY id"
        ),
        vec![
            "1 sleep on it  [] 0",
            "2 take a walk context_switch [\"stand up\",\"go out\"] 2"
        ]
    );
    assert_eq!(
        texts(
            &server,
            "SELECT name || ': ' || description FROM thinking_methods"
        ),
        vec!["analogy: start with a similar problem"]
    );
    assert_eq!(
        texts(
            &server,
            "SELECT target || ' ' || score || ' ' || comment FROM ratings ORDER BY score"
        ),
        vec![
            format!("{} -1 a friend's item", "ab".repeat(32)),
            "stagnation_strategies:2 3 it helped".to_owned()
        ],
        "the rating names the server's row of the strategy"
    );
    assert_eq!(
        texts(
            &server,
            "SELECT name || ' ' || endpoint || ' ' || model || ' main=' || is_main
                    || ' validator=' || is_validator || ' trust=' || trust || ' shareable=' || shareable
             FROM llm_registry ORDER BY id"
        ),
        vec![
            "home http://127.0.0.1:8080/v1  main=1 validator=0 trust=0.0 shareable=0",
            "cloud https://api.example.com/v1 big-1 main=0 validator=1 trust=0.75 shareable=0"
        ]
    );
    assert_eq!(
        config(&server, "cloud"),
        serde_json::json!({"temperature": 0.3}),
        "the secret is absent on the receiving device"
    );
}

#[test]
fn a_registry_edit_from_a_device_never_overwrites_the_secret_here() {
    let (_a, phone) = phone_with_know_how();
    let (_b, server) = temp_store();
    deliver(&server, &publish_as(&phone, 1, 100), 1);
    // The server names its own variable for the key: an edit there, which
    // travels without it.
    exec(
        &server,
        "UPDATE llm_registry SET config = json_set(config, '$.api_key_env', 'SERVER_VAR')",
    );
    let from_server = publish_as(&server, 2, 110);
    assert_eq!(tables(&from_server), BTreeSet::from([MindTable::Llm]));
    deliver(&phone, &from_server, 2);
    assert_eq!(
        config(&phone, "cloud")["api_key_env"],
        "PHONE_SECRET_VAR",
        "the phone keeps its own"
    );
    // The phone changes a setting: the server takes it and keeps its own.
    exec(
        &phone,
        "UPDATE llm_registry SET config = json_set(config, '$.temperature', 0.9)",
    );
    deliver(&server, &publish_as(&phone, 1, 120), 1);
    assert_eq!(
        config(&server, "cloud"),
        serde_json::json!({"api_key_env": "SERVER_VAR", "temperature": 0.9})
    );
    // A device that sends a secret anyway (an old or broken build): the
    // version is taken, the secret is not.
    let key = phone
        .mind_key_of(MindTable::Llm, 1)
        .unwrap()
        .expect("published");
    // After every version held of it (the phone's two, the server's one).
    let mut vv = VersionVector::new();
    for _ in 0..3 {
        vv.bump(&peer(1)).unwrap();
    }
    vv.bump(&peer(2)).unwrap();
    let mut fields = std::collections::BTreeMap::new();
    for (k, v) in [
        ("name", "cloud"),
        ("endpoint", "https://api.example.com/v2"),
        ("model", "big-2"),
        ("description", ""),
        ("features", "[]"),
        (
            "config",
            r#"{"api_key_env":"EVIL","token":"s3cret","temperature":0.1}"#,
        ),
        ("trust", "0.5"),
    ] {
        fields.insert(k.to_owned(), MindValue::Text(v.to_owned()));
    }
    fields.insert("is_validator".into(), MindValue::Bool(false));
    fields.insert("created".into(), MindValue::Int(5));
    let sent = item(
        1,
        200,
        Body::MindRecord(MindRecord {
            table: MindTable::Llm,
            key,
            vv,
            at_ms: 200,
            deleted: false,
            fields,
        }),
    );
    deliver(&server, &[sent], 1);
    assert_eq!(
        texts(&server, "SELECT endpoint FROM llm_registry"),
        vec!["https://api.example.com/v2"]
    );
    assert_eq!(
        config(&server, "cloud"),
        serde_json::json!({"api_key_env": "SERVER_VAR", "temperature": 0.1})
    );
}

#[test]
fn edits_deletions_and_conflicts_of_know_how_follow_the_memory_rule() {
    let (_a, phone) = phone_with_know_how();
    let (_b, server) = temp_store();
    deliver(&server, &publish_as(&phone, 1, 100), 1);
    // What each device keeps to itself makes no version.
    exec(
        &phone,
        "UPDATE llm_registry SET is_main = 0, shareable = 0, item_id = zeroblob(32);
         UPDATE stagnation_strategies SET shareable = 1, item_id = randomblob(32) WHERE id = 1;
         UPDATE thinking_methods SET shareable = 1;",
    );
    assert_eq!(phone.mind_outbox_len().unwrap(), 0);
    // A friend's row edited or deleted: nothing either.
    exec(
        &phone,
        "UPDATE stagnation_strategies SET cost = 7 WHERE origin_author IS NOT NULL;
         DELETE FROM stagnation_strategies WHERE origin_author IS NOT NULL;",
    );
    assert_eq!(phone.mind_outbox_len().unwrap(), 0);
    // A deletion travels as a tombstone.
    exec(&phone, "DELETE FROM thinking_methods");
    let gone = publish_as(&phone, 1, 110);
    assert!(matches!(gone[0].body(), Body::MindRecord(r) if r.deleted));
    deliver(&server, &gone, 1);
    assert!(texts(&server, "SELECT name FROM thinking_methods").is_empty());
    // Apart, both edit the strategy: both show one winner, one conflict.
    exec(
        &phone,
        "UPDATE stagnation_strategies SET description = 'outside' WHERE id = 1",
    );
    exec(
        &server,
        "UPDATE stagnation_strategies SET description = 'in the park'",
    );
    let p = publish_as(&phone, 1, 120);
    let s = publish_as(&server, 2, 121);
    deliver(&server, &p, 1);
    deliver(&phone, &s, 2);
    let shown = "SELECT description FROM stagnation_strategies WHERE origin_author IS NULL";
    assert_eq!(texts(&phone, shown), texts(&server, shown));
    assert_eq!(texts(&phone, shown), vec!["in the park"], "the later clock");
    let (cp, cs) = (
        phone.open_mind_conflicts(10).unwrap(),
        server.open_mind_conflicts(10).unwrap(),
    );
    assert_eq!(cp.len(), 1);
    assert_eq!(cp, cs);
    assert_eq!(cp[0].table, MindTable::Strategy);
}

#[test]
fn a_model_named_like_one_of_this_device_stays_beside_it() {
    // Each device registered a model file under the same name: its path
    // is on its own disk, so neither takes the other's over.
    let (_a, phone) = temp_store();
    let (_b, server) = temp_store();
    for (s, path) in [(&phone, "/phone/m.gguf"), (&server, "/srv/m.gguf")] {
        exec(
            s,
            &format!(
                "INSERT INTO llm_registry (name, endpoint, is_main, created, updated)
                 VALUES ('small', 'file:{path}', 1, 1, 1)"
            ),
        );
    }
    deliver(&server, &publish_as(&phone, 1, 100), 1);
    assert_eq!(
        texts(
            &server,
            "SELECT endpoint || ' ' || is_main FROM llm_registry"
        ),
        vec!["file:/srv/m.gguf 1"]
    );
}

//! Integration tests of porfiry-storage, all in one test binary (one link):
//! every test works on a real SQLite file in a temp directory.

mod clubs;
mod cognition;
mod conversations;
mod crash;
mod device_routing;
mod friends;
mod generic;
mod item_batch;
mod items;
mod migrate;
mod mind;
mod mind_converge;
mod mind_knowhow;
mod mind_prune;
mod mind_prune_measure;
mod note_checks;
mod notes;
mod open;
mod round_trips;
mod sharing;

use std::collections::BTreeMap;

use porfiry_storage::{DB_FILE_NAME, LlmConfig, LlmEntry, RecentResponse, Store, ValidatorVote};
use tempfile::TempDir;

/// A fresh store in its own temp dir (keep the dir alive while using it).
pub fn temp_store() -> (TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::create(dir.path().join(DB_FILE_NAME)).unwrap();
    (dir, store)
}

/// A raw second connection to the same file, for checks the API forbids.
pub fn raw(store: &Store) -> rusqlite::Connection {
    rusqlite::Connection::open(store.path()).unwrap()
}

/// Shorthand for an owned string.
pub fn s(v: &str) -> String {
    v.to_owned()
}

/// Shorthand for a list of owned tag strings.
pub fn tags(v: &[&str]) -> Vec<String> {
    v.iter().map(|t| s(t)).collect()
}

/// A recent response with every column set.
pub fn sample_response() -> RecentResponse {
    RecentResponse {
        content: s("New idea: gossip digests"),
        reflection: s("new ideas: gossip digests"),
        novelty_score: Some(0.8),
        new_ideas: tags(&["gossip digests"]),
        refined_ideas: tags(&["catch-up"]),
        discarded_ideas: tags(&["polling"]),
        tags: tags(&["architecture"]),
        emotions: tags(&["joy:4", "anxiety:1"]),
        stagnation_reflex: false,
        auto_pass: false,
        self_validation: false,
        rating: 1.5,
        distribution: BTreeMap::from([(s("-1"), 1), (s("+2"), 1), (s("+3"), 2)]),
        validators: vec![
            ValidatorVote {
                llm: s("gpt"),
                rating: 2,
                ..Default::default()
            },
            ValidatorVote {
                llm: s("qwen"),
                rating: -1,
                ..Default::default()
            },
        ],
        llm_id: Some(s("qwen")),
    }
}

/// An LLM registry entry with a local endpoint.
pub fn sample_llm(name: &str) -> LlmEntry {
    LlmEntry {
        name: s(name),
        endpoint: s("http://127.0.0.1:8080/v1"),
        model: s("qwen2.5-7b"),
        features: tags(&["tools"]),
        config: LlmConfig {
            api_key_env: Some(s("OPENAI_API_KEY")),
            temperature: Some(0.7),
            ..Default::default()
        },
        ..Default::default()
    }
}

//! `llm_registry`: the LLMs this agent knows — local servers, remote APIs,
//! or a friend's node for offload — with the selected main LLM, validators
//! and trust. Shareable entries are published as LlmAddress items.

use porfiry_protocol::ItemId;
use std::collections::BTreeMap;

use rusqlite::types::Value;
use serde::{Deserialize, Serialize};

use crate::error::{Result, StorageError};
use crate::published::publishable;
use crate::query::Filter;
use crate::record::{Stored, record};
use crate::store::Store;

/// Config keys refused in [`LlmConfig::other`]: secrets never enter the
/// file (and shareable rows travel to friends). Name an env var instead.
pub const SECRET_CONFIG_KEYS: &[&str] = &[
    "api_key",
    "apikey",
    "key",
    "secret",
    "token",
    "password",
    "authorization",
];

/// Highest sampling temperature accepted: the OpenAI API's own upper bound
/// (llama.cpp, vLLM and Ollama accept the same range); above it answers are
/// noise.
pub const MAX_TEMPERATURE: f64 = 2.0;

/// Largest `presence_penalty` either way: the OpenAI API's range is −2 ..= 2.
pub const MAX_PRESENCE_PENALTY: f64 = 2.0;

/// How to call one LLM: the node's one description of call settings, stored
/// in `llm_registry.config` and handed to the HTTP client (`porfiry-node`
/// fills each unset field with its named default). Holds the *name* of the
/// env var with the API key, never the key.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LlmConfig {
    /// Env var holding the API key, if the endpoint needs one.
    pub api_key_env: Option<String>,
    /// Sampling temperature, 0 ..= [`MAX_TEMPERATURE`].
    pub temperature: Option<f64>,
    /// OpenAI's `presence_penalty`: above 0 pushes the model toward new
    /// topics (the anti-stagnation reflex raises it), within
    /// ±[`MAX_PRESENCE_PENALTY`]; unset sends none (the server's default).
    pub presence_penalty: Option<f64>,
    /// Reply length cap.
    pub max_tokens: Option<u32>,
    /// Whole-request timeout, from connecting until the reply is read.
    pub timeout_ms: Option<u64>,
    /// TCP (and TLS) connect timeout.
    pub connect_timeout_ms: Option<u64>,
    /// Streamed calls: from sending the request until the first token arrives.
    pub first_token_timeout_ms: Option<u64>,
    /// Streamed calls: the longest gap between two tokens once they flow.
    pub idle_timeout_ms: Option<u64>,
    /// Streamed calls: the whole call, from connecting until the last token.
    pub stream_timeout_ms: Option<u64>,
    /// Retries after the first attempt on 429, 5xx and connection errors.
    pub max_retries: Option<u32>,
    /// Ceiling of the first retry's backoff; it doubles on each retry.
    pub retry_base_delay_ms: Option<u64>,
    /// `file:` rows: the chat template the embedded engine formats prompts
    /// with (a llama.cpp name such as `gemma`, or a Jinja file's path),
    /// replacing the file's own; unset: the file's, else its architecture's.
    pub chat_template: Option<String>,
    /// `file:` rows this node taught (`porfiry model teach`): what from,
    /// when and on which data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub taught: Option<Taught>,
    /// Other settings, kept as given (no secrets: see [`SECRET_CONFIG_KEYS`]).
    #[serde(flatten)]
    pub other: BTreeMap<String, serde_json::Value>,
}

/// Where a taught model came from: written by `porfiry model teach`,
/// shown by `llm list`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Taught {
    /// The model file it was taught from.
    pub base: String,
    /// SHA-256 of the training data's JSONL, hex: the same hash, the same data.
    pub data_sha256: String,
    /// Training examples in that data.
    pub examples: u64,
    /// Optimizer steps taken.
    pub steps: u64,
    /// When teaching ended, ms since the epoch.
    pub at_ms: u64,
}

record! {
    /// One known LLM.
    pub struct LlmEntry in "llm_registry" search ["name", "model", "description"] check check_llm {
        /// Unique short name (`qwen-local`, `bob-server`).
        pub name: String,
        /// OpenAI-compatible base URL, or a friend's peer id for offload.
        pub endpoint: String,
        /// Model name at the endpoint.
        pub model: String,
        /// What it is good at.
        pub description: String,
        /// Features (`tools`, `vision`, `long-context`, …).
        pub features: Vec<String> as json,
        /// Call settings.
        pub config: LlmConfig as json,
        /// The selected main LLM (at most one row).
        pub is_main: bool,
        /// Votes in cognitive validation.
        pub is_validator: bool,
        /// How far its answers are trusted.
        pub trust: f64,
        /// Publish it to friends as an LlmAddress item.
        pub shareable: bool,
        /// Set once published.
        pub item_id: Option<ItemId> as item_id,
        /// For entries merged from friends: the author.
        pub origin_author: Option<String>,
        /// For entries merged from friends: the item.
        pub origin_item_id: Option<ItemId> as item_id,
    }
}

publishable!(
    LlmEntry,
    "shareable = 1 AND item_id IS NULL AND origin_item_id IS NULL"
);

fn check_llm(l: &LlmEntry) -> Result<()> {
    let bad = |reason: String| Err(StorageError::invalid("llm_registry entry", reason));
    if l.name.trim().is_empty() || l.endpoint.trim().is_empty() {
        return bad("name and endpoint must not be empty".into());
    }
    if !l.trust.is_finite() {
        return bad("trust must be a finite number".into());
    }
    if let Some(t) = l.config.temperature
        && !(t.is_finite() && (0.0..=MAX_TEMPERATURE).contains(&t))
    {
        return bad(format!("temperature {t} must be 0 to {MAX_TEMPERATURE}"));
    }
    if let Some(p) = l.config.presence_penalty
        && !(p.is_finite() && (-MAX_PRESENCE_PENALTY..=MAX_PRESENCE_PENALTY).contains(&p))
    {
        return bad(format!(
            "presence_penalty {p} must be -{MAX_PRESENCE_PENALTY} to {MAX_PRESENCE_PENALTY}"
        ));
    }
    if let Some(k) = l
        .config
        .other
        .keys()
        .find(|k| SECRET_CONFIG_KEYS.contains(&k.to_ascii_lowercase().as_str()))
    {
        return bad(format!(
            "config key {k:?} looks like a secret; store the env var name in api_key_env"
        ));
    }
    Ok(())
}

impl Store {
    /// Makes `id` the main LLM ("llm_registry select"); the previous main
    /// one is unselected in the same transaction.
    pub fn llm_select_main(&self, id: i64, now_ms: u64) -> Result<()> {
        self.transaction(|s| {
            s.conn
                .prepare_cached("UPDATE llm_registry SET is_main = 0 WHERE is_main = 1")?
                .execute([])?;
            s.set_columns::<LlmEntry>(id, "is_main = 1", &[], now_ms)
        })
    }

    /// The selected main LLM, if one is.
    pub fn llm_main(&self) -> Result<Option<Stored<LlmEntry>>> {
        let mut f = Filter::default();
        f.and("is_main = 1", []);
        Ok(self.select::<LlmEntry>(&f, "id", 1, 0)?.pop())
    }

    /// Every LLM marked as a validator, by name.
    pub fn llm_validators(&self) -> Result<Vec<Stored<LlmEntry>>> {
        let mut f = Filter::default();
        f.and("is_validator = 1", []);
        self.select::<LlmEntry>(&f, "name", u32::MAX, 0)
    }

    /// The LLM with this name, if known.
    pub fn llm_by_name(&self, name: &str) -> Result<Option<Stored<LlmEntry>>> {
        let mut f = Filter::default();
        f.and("name = ?", [Value::Text(name.to_owned())]);
        Ok(self.select::<LlmEntry>(&f, "id", 1, 0)?.pop())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_settings_round_trip_and_unknown_keys_are_kept_aside() {
        let stored = r#"{"temperature":0.3,"max_retries":2,"connect_timeout_ms":900,
            "retry_base_delay_ms":250,"timeout_ms":60000,"context_tokens":4096,
            "first_token_timeout_ms":120000,"idle_timeout_ms":30000,"stream_timeout_ms":600000}"#;
        let config: LlmConfig = serde_json::from_str(stored).unwrap();
        assert_eq!(config.temperature, Some(0.3));
        assert_eq!(config.max_retries, Some(2));
        assert_eq!(config.connect_timeout_ms, Some(900));
        assert_eq!(config.retry_base_delay_ms, Some(250));
        assert_eq!(config.timeout_ms, Some(60_000));
        assert_eq!(config.first_token_timeout_ms, Some(120_000));
        assert_eq!(config.idle_timeout_ms, Some(30_000));
        assert_eq!(config.stream_timeout_ms, Some(600_000));
        assert_eq!(
            config.other.get("context_tokens"),
            Some(&serde_json::json!(4096))
        );
        let again: LlmConfig =
            serde_json::from_str(&serde_json::to_string(&config).unwrap()).unwrap();
        assert_eq!(again, config);
    }

    #[test]
    fn presence_penalty_round_trips_and_out_of_range_sampling_is_refused() {
        let config: LlmConfig =
            serde_json::from_str(r#"{"temperature":0.7,"presence_penalty":-0.5}"#).unwrap();
        assert_eq!(config.presence_penalty, Some(-0.5));
        assert!(config.other.is_empty(), "a known field, not an extra");
        let dir = tempfile::tempdir().unwrap();
        let store = Store::create(dir.path().join("db.sqlite")).unwrap();
        let entry = |config: LlmConfig| LlmEntry {
            name: "m".into(),
            endpoint: "http://h/v1".into(),
            config,
            ..LlmEntry::default()
        };
        let id = store.add(&entry(config.clone()), 1).unwrap();
        assert_eq!(store.get::<LlmEntry>(id).unwrap().row.config, config);
        for bad in [
            LlmConfig {
                presence_penalty: Some(2.5),
                ..LlmConfig::default()
            },
            LlmConfig {
                presence_penalty: Some(f64::NAN),
                ..LlmConfig::default()
            },
            LlmConfig {
                temperature: Some(-0.1),
                ..LlmConfig::default()
            },
            LlmConfig {
                temperature: Some(2.1),
                ..LlmConfig::default()
            },
        ] {
            let e = store.update(id, &entry(bad), 2).unwrap_err().to_string();
            assert!(e.contains("must be"), "{e}");
        }
        assert_eq!(
            store.get::<LlmEntry>(id).unwrap().row.config,
            config,
            "a refused update keeps the row"
        );
    }

    #[test]
    fn an_empty_config_leaves_every_setting_to_the_client() {
        let config: LlmConfig = serde_json::from_str("{}").unwrap();
        assert_eq!(config, LlmConfig::default());
    }
}

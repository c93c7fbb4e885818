//! The agent's settings and self-description: `config` (key → JSON value),
//! `identity` (names and roles; never a private key) and `system_prompts`
//! (context 0, per language).

use std::collections::BTreeMap;

use rusqlite::OptionalExtension;
use rusqlite::types::Value;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::{Result, StorageError};
use crate::query::{Filter, int_param};
use crate::record::{Stored, record};
use crate::store::Store;

/// Longest config key: dotted names like `cycle.concentration.tags`, not prose.
pub const MAX_CONFIG_KEY_BYTES: usize = 128;

fn check_key(key: &str) -> Result<()> {
    if key.is_empty() || key.len() > MAX_CONFIG_KEY_BYTES || key.chars().any(char::is_whitespace) {
        return Err(StorageError::invalid(
            "config key",
            format!("{key:?}: 1 to {MAX_CONFIG_KEY_BYTES} bytes without spaces"),
        ));
    }
    Ok(())
}

impl Store {
    /// The raw JSON value of a setting, if set.
    pub fn config_value(&self, key: &str) -> Result<Option<serde_json::Value>> {
        let text: Option<String> = self
            .conn
            .prepare_cached("SELECT value FROM config WHERE key = ?")?
            .query_row([key], |r| r.get(0))
            .optional()?;
        text.map(|t| decode(key, &t)).transpose()
    }

    /// A setting decoded as `T`, if set; a stored value of another shape is
    /// [`StorageError::BadColumn`].
    pub fn config_get<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>> {
        self.config_value(key)?
            .map(|v| serde_json::from_value(v).map_err(|e| bad(key, &e)))
            .transpose()
    }

    /// Sets a setting ("config update").
    pub fn config_set<T: Serialize + ?Sized>(
        &self,
        key: &str,
        value: &T,
        now_ms: u64,
    ) -> Result<()> {
        check_key(key)?;
        let text = serde_json::to_string(value)
            .map_err(|e| StorageError::invalid(format!("config {key}"), e.to_string()))?;
        let now = int_param("time", now_ms)?;
        self.conn
            .prepare_cached(
                "INSERT INTO config (key, value, updated) VALUES (?1, ?2, ?3)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated = excluded.updated",
            )?
            .execute(rusqlite::params![key, text, now])
            .map_err(|e| StorageError::from_write("config", e))?;
        Ok(())
    }

    /// Removes a setting; returns whether it was set.
    pub fn config_delete(&self, key: &str) -> Result<bool> {
        Ok(self
            .conn
            .prepare_cached("DELETE FROM config WHERE key = ?")?
            .execute([key])?
            > 0)
    }

    /// Every setting, by key ("config read").
    pub fn config_all(&self) -> Result<BTreeMap<String, serde_json::Value>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT key, value FROM config ORDER BY key")?;
        let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
        let mut out = BTreeMap::new();
        for row in rows {
            let (k, v) = row?;
            let value = decode(&k, &v)?;
            out.insert(k, value);
        }
        Ok(out)
    }
}

fn decode(key: &str, text: &str) -> Result<serde_json::Value> {
    serde_json::from_str(text).map_err(|e| bad(key, &e))
}

fn bad(key: &str, e: &serde_json::Error) -> StorageError {
    StorageError::BadColumn {
        table: "config",
        column: format!("value of {key}"),
        reason: e.to_string(),
    }
}

record! {
    /// One identity or role of the agent. The signing key lives in its own
    /// 0600 file, never here.
    pub struct Identity in "identity" search ["name", "role", "description"] check check_identity {
        /// Human-readable name.
        pub name: String,
        /// The node's peer id, when this identity is the node's.
        pub peer_id: Option<String>,
        /// Role ("cognitive core", "family assistant").
        pub role: String,
        /// Purpose and context.
        pub description: String,
        /// Anything else, as JSON.
        pub metadata: BTreeMap<String, serde_json::Value> as json,
    }
}

fn check_identity(i: &Identity) -> Result<()> {
    if i.name.trim().is_empty() {
        return Err(StorageError::invalid("identity", "name is empty"));
    }
    Ok(())
}

record! {
    /// A system prompt (context 0) in one language.
    pub struct SystemPrompt in "system_prompts" search ["name", "content"] check check_prompt {
        /// Name, unique per language (`core`, `full`).
        pub name: String,
        /// Language code (`en`, `ru`).
        pub language: String,
        /// The prompt text.
        pub content: String,
    }
}

fn check_prompt(p: &SystemPrompt) -> Result<()> {
    if p.name.trim().is_empty() || p.language.trim().is_empty() || p.content.trim().is_empty() {
        return Err(StorageError::invalid(
            "system prompt",
            "name, language and content must not be empty",
        ));
    }
    Ok(())
}

impl Store {
    /// The prompt `name` in `language`, if there is one.
    pub fn system_prompt(
        &self,
        name: &str,
        language: &str,
    ) -> Result<Option<Stored<SystemPrompt>>> {
        let mut f = Filter::default();
        f.and(
            "name = ? AND language = ?",
            [Value::Text(name.into()), Value::Text(language.into())],
        );
        Ok(self.select::<SystemPrompt>(&f, "id", 1, 0)?.pop())
    }
}

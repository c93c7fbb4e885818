//! The model registry's call settings between a person's devices: the
//! secret never travels. `llm_registry.config` holds the *name* of the env
//! var with the API key (`api_key_env`), never the key, and refuses keys
//! named like a secret (`SECRET_CONFIG_KEYS`); still, which variable holds
//! a key is each device's own business, and a row written before that
//! check (or by hand) may hold a secret. So these keys are taken out of
//! every version this device publishes, refused in what arrives, and a
//! received version keeps the row's own values of them here.

use serde_json::{Map, Value};

use crate::error::{Result, StorageError};
use crate::llm::SECRET_CONFIG_KEYS;

/// The config key naming the env var that holds the API key
/// (`LlmConfig::api_key_env`).
pub(crate) const API_KEY_ENV: &str = "api_key_env";

/// Whether config key `key` stays on its device: the API key's env var,
/// or a name `SECRET_CONFIG_KEYS` refuses, in any case.
pub(crate) fn is_local_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    key == API_KEY_ENV || SECRET_CONFIG_KEYS.contains(&key.as_str())
}

fn object(text: &str) -> Option<Map<String, Value>> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Some(map),
        _ => None,
    }
}

fn text_of(map: Map<String, Value>) -> Result<String> {
    serde_json::to_string(&Value::Object(map))
        .map_err(|e| StorageError::invalid("mind record config", e.to_string()))
}

/// A row's config as it travels: without its local keys. A text that is
/// not a JSON object (the column's check makes it valid JSON) travels as
/// `{}`, so nothing unparsed ever leaves the device.
pub(crate) fn shared(text: &str) -> Result<String> {
    let mut map = object(text).unwrap_or_default();
    map.retain(|k, _| !is_local_key(k));
    text_of(map)
}

/// A received config as this device writes it: a JSON object (refused
/// otherwise), its local keys dropped (a device never sends one; an older
/// or broken one may), then the local keys of the row's config here
/// (`local`, `None` for a new row) put back.
pub(crate) fn received(text: &str, local: Option<&str>) -> Result<String> {
    let mut map = object(text).ok_or_else(|| {
        StorageError::invalid(
            "mind record config",
            "the model's config is not a JSON object",
        )
    })?;
    map.retain(|k, _| !is_local_key(k));
    if let Some(mine) = local.and_then(object) {
        map.extend(mine.into_iter().filter(|(k, _)| is_local_key(k)));
    }
    text_of(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_keys_never_travel_and_stay_here() {
        let mine = r#"{"api_key_env":"OPENAI_KEY","temperature":0.2,"Token":"t0p"}"#;
        assert_eq!(shared(mine).unwrap(), r#"{"temperature":0.2}"#);
        assert_eq!(shared("[1]").unwrap(), "{}");
        let sent = r#"{"api_key_env":"THEIRS","temperature":0.7,"max_tokens":64}"#;
        let written = received(sent, Some(mine)).unwrap();
        let v: Value = serde_json::from_str(&written).unwrap();
        assert_eq!(v["api_key_env"], "OPENAI_KEY", "kept, not overwritten");
        assert_eq!(v["Token"], "t0p");
        assert_eq!(v["temperature"], 0.7);
        assert_eq!(v["max_tokens"], 64);
        // A new row here: none at all.
        let fresh: Value = serde_json::from_str(&received(sent, None).unwrap()).unwrap();
        assert_eq!(
            fresh,
            serde_json::json!({"max_tokens": 64, "temperature": 0.7})
        );
        assert!(received("\"x\"", None).is_err());
        assert!(is_local_key("API_KEY") && is_local_key("Api_Key_Env"));
        assert!(!is_local_key("model"));
    }
}

//! Which model the client calls ([`LlmTarget`]) and the named limits behind the
//! defaults of its call settings. The settings themselves are the node's one
//! [`LlmConfig`], owned by `porfiry-storage` because `llm_registry` stores it.

use std::fmt;
use std::time::Duration;

pub use porfiry_storage::{LlmConfig, LlmEntry};

/// Environment variable holding the API key, sent as `Authorization: Bearer <key>`.
pub const API_KEY_ENV: &str = "PORFIRY_LLM_API_KEY";

/// Whole-request limit: a small model on a phone CPU can take a couple of minutes to
/// answer a long prompt; longer than that the user is better told something is wrong.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(180);

/// TCP connect limit: local and LAN servers accept within milliseconds; ten seconds
/// leaves room for a slow Wi-Fi or a VPN and still reports a dead host quickly.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Streamed calls, from sending the request until the first token (a `data:` event, not
/// a keep-alive comment): a local model loads from disk on its first call (10–30 s) and a
/// phone CPU reads a long prompt at a few dozen tokens a second, so the first token of a
/// few-thousand-token prompt can take a minute; twice that before calling it dead.
pub const DEFAULT_FIRST_TOKEN_TIMEOUT: Duration = Duration::from_secs(120);

/// Streamed calls, the longest gap between two tokens once they flow: the slowest model
/// we support makes a token every second or two, and a server that streams a hidden
/// thought as nothing can pause for tens of seconds; a minute of silence is a stall.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// Streamed calls, the whole call: ten minutes covers a 3,000-token answer at 5 tokens a
/// second (a small model on a phone CPU) and still ends a model that loops without ever
/// stopping. Not [`DEFAULT_TIMEOUT`]: a stream shows progress, so it may run longer than a
/// call whose user sees nothing until the end.
pub const DEFAULT_STREAM_TIMEOUT: Duration = Duration::from_secs(600);

/// Retries after the first attempt on 429, 5xx and connection errors: three retries with
/// doubling delays cover a server restarting or loading a model (a few seconds).
pub const DEFAULT_MAX_RETRIES: u32 = 3;

/// Ceiling of the first backoff delay; it doubles on each retry (0.5 s, 1 s, 2 s with the
/// defaults) and each wait is jittered into the upper half of its ceiling ([`crate::backoff`]).
pub const DEFAULT_RETRY_BASE_DELAY: Duration = Duration::from_millis(500);

/// Sampling temperature when none is configured: low, because small models follow the
/// `TOOL_CALL:` format more reliably when they sample less.
pub const DEFAULT_TEMPERATURE: f64 = 0.2;

/// Where one model is reached, and how it is called: the server, the model's name there,
/// the API key resolved at the edge, and the node's one [`LlmConfig`] of call settings
/// (the same type `llm_registry` stores). Unset settings take the named defaults above.
#[derive(Clone, PartialEq)]
pub struct LlmTarget {
    /// The base that `/chat/completions` is appended to, e.g. `http://127.0.0.1:11434/v1`.
    pub base_url: String,
    /// Model name as the server knows it (`qwen2.5:3b`, `llama-3.2-3b-instruct`, …).
    pub model: String,
    /// Bearer token; `None` sends no `Authorization` header (local servers need none).
    /// Never stored: [`LlmConfig::api_key_env`] names the variable it comes from.
    pub api_key: Option<String>,
    /// Call settings: temperature, timeouts, retries.
    pub config: LlmConfig,
    /// Whether a request's grammar ([`porfiry_skills::ModelRequest::grammar`])
    /// goes out as llama.cpp's `grammar` field: only when the user says the
    /// server takes it (`--constrained on`), since another OpenAI-compatible
    /// server may refuse a field it does not know ([`super::constrained`]).
    pub send_grammar: bool,
}

impl LlmTarget {
    /// A target with every setting at its default and no API key.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            config: LlmConfig::default(),
            send_grammar: false,
        }
    }

    /// The model of a registry entry (an OpenAI-compatible endpoint), with its stored
    /// call settings; the key is still to be read ([`Self::with_api_key_from_env`]).
    pub fn from_entry(entry: &LlmEntry) -> Self {
        Self {
            config: entry.config.clone(),
            ..Self::new(entry.endpoint.clone(), entry.model.clone())
        }
    }

    /// Takes the API key from the variable [`LlmConfig::api_key_env`] names, or from
    /// [`API_KEY_ENV`] when it names none; a blank or unset variable means no key.
    pub fn with_api_key_from_env(self) -> Self {
        let var = self.config.api_key_env.as_deref().unwrap_or(API_KEY_ENV);
        let key = std::env::var(var).ok();
        self.with_api_key(key)
    }

    /// Sets the API key; a blank or whitespace-only key counts as none.
    pub fn with_api_key(mut self, key: Option<String>) -> Self {
        self.api_key = key.map(|k| k.trim().to_owned()).filter(|k| !k.is_empty());
        self
    }

    /// Sampling temperature sent with every request.
    pub fn temperature(&self) -> f64 {
        self.config.temperature.unwrap_or(DEFAULT_TEMPERATURE)
    }

    /// Limit on a whole request, from connecting until the reply body is read.
    pub fn timeout(&self) -> Duration {
        self.config
            .timeout_ms
            .map_or(DEFAULT_TIMEOUT, Duration::from_millis)
    }

    /// Limit on opening the TCP (and TLS) connection; never longer than [`Self::timeout`].
    pub fn connect_timeout(&self) -> Duration {
        self.config
            .connect_timeout_ms
            .map_or(DEFAULT_CONNECT_TIMEOUT, Duration::from_millis)
            .min(self.timeout())
    }

    /// Streamed calls: limit on the whole call; never shorter than the connect limit.
    pub fn stream_timeout(&self) -> Duration {
        self.config
            .stream_timeout_ms
            .map_or(DEFAULT_STREAM_TIMEOUT, Duration::from_millis)
    }

    /// Streamed calls: limit from sending the request (each attempt) until the first
    /// token; never longer than [`Self::stream_timeout`].
    pub fn first_token_timeout(&self) -> Duration {
        self.config
            .first_token_timeout_ms
            .map_or(DEFAULT_FIRST_TOKEN_TIMEOUT, Duration::from_millis)
            .min(self.stream_timeout())
    }

    /// Streamed calls: the longest gap between two tokens; never longer than
    /// [`Self::stream_timeout`].
    pub fn idle_timeout(&self) -> Duration {
        self.config
            .idle_timeout_ms
            .map_or(DEFAULT_IDLE_TIMEOUT, Duration::from_millis)
            .min(self.stream_timeout())
    }

    /// Retries after the first attempt on 429, 5xx and connection errors.
    pub fn max_retries(&self) -> u32 {
        self.config.max_retries.unwrap_or(DEFAULT_MAX_RETRIES)
    }

    /// Ceiling of the first backoff delay; it doubles on each retry.
    pub fn retry_base_delay(&self) -> Duration {
        self.config
            .retry_base_delay_ms
            .map_or(DEFAULT_RETRY_BASE_DELAY, Duration::from_millis)
    }
}

/// Prints every field except the API key, which is shown only as set or not.
impl fmt::Debug for LlmTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmTarget")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("config", &self.config)
            .field("send_grammar", &self.send_grammar)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unset_settings_take_the_named_defaults() {
        let t = LlmTarget::new("http://h/v1", "m");
        assert_eq!(t.timeout(), DEFAULT_TIMEOUT);
        assert_eq!(t.connect_timeout(), DEFAULT_CONNECT_TIMEOUT);
        assert_eq!(t.max_retries(), DEFAULT_MAX_RETRIES);
        assert_eq!(t.retry_base_delay(), DEFAULT_RETRY_BASE_DELAY);
        assert_eq!(t.temperature(), DEFAULT_TEMPERATURE);
        assert_eq!(t.first_token_timeout(), DEFAULT_FIRST_TOKEN_TIMEOUT);
        assert_eq!(t.idle_timeout(), DEFAULT_IDLE_TIMEOUT);
        assert_eq!(t.stream_timeout(), DEFAULT_STREAM_TIMEOUT);
        assert_eq!(t.api_key, None);
    }

    #[test]
    fn set_settings_win_and_connect_never_outlasts_the_whole_request() {
        let t = LlmTarget {
            config: LlmConfig {
                temperature: Some(0.9),
                timeout_ms: Some(2_000),
                connect_timeout_ms: Some(5_000),
                max_retries: Some(0),
                retry_base_delay_ms: Some(1),
                ..LlmConfig::default()
            },
            ..LlmTarget::new("u", "m")
        };
        assert_eq!(t.temperature(), 0.9);
        assert_eq!(t.timeout(), Duration::from_secs(2));
        assert_eq!(t.connect_timeout(), Duration::from_secs(2));
        assert_eq!(t.max_retries(), 0);
        assert_eq!(t.retry_base_delay(), Duration::from_millis(1));
    }

    #[test]
    fn stream_deadlines_are_set_and_never_outlast_the_whole_stream() {
        let t = LlmTarget {
            config: LlmConfig {
                first_token_timeout_ms: Some(9_000),
                idle_timeout_ms: Some(300),
                stream_timeout_ms: Some(5_000),
                timeout_ms: Some(1),
                ..LlmConfig::default()
            },
            ..LlmTarget::new("u", "m")
        };
        assert_eq!(t.first_token_timeout(), Duration::from_secs(5));
        assert_eq!(t.idle_timeout(), Duration::from_millis(300));
        assert_eq!(
            t.stream_timeout(),
            Duration::from_secs(5),
            "the whole-reply timeout does not cut a stream"
        );
    }

    #[test]
    fn a_registry_entry_gives_its_endpoint_model_and_settings() {
        let entry = LlmEntry {
            endpoint: "http://10.0.0.2:8080/v1".into(),
            model: "qwen3".into(),
            config: LlmConfig {
                max_retries: Some(1),
                ..LlmConfig::default()
            },
            ..LlmEntry::default()
        };
        let t = LlmTarget::from_entry(&entry);
        assert_eq!(t.base_url, entry.endpoint);
        assert_eq!(t.model, "qwen3");
        assert_eq!(t.max_retries(), 1);
        assert_eq!(t.api_key, None);
    }

    #[test]
    fn the_key_comes_from_the_variable_the_config_names() {
        // Setting a variable needs `unsafe` in this edition, so read ones the test
        // process already has (PATH) or certainly lacks.
        let var = "PORFIRY_TEST_KEY_FROM_NAMED_VAR_NEVER_SET";
        let t = LlmTarget {
            config: LlmConfig {
                api_key_env: Some("PATH".into()),
                ..LlmConfig::default()
            },
            ..LlmTarget::new("u", "m")
        }
        .with_api_key_from_env();
        assert_eq!(t.api_key, std::env::var("PATH").ok());
        let none = LlmTarget {
            config: LlmConfig {
                api_key_env: Some(var.into()),
                ..LlmConfig::default()
            },
            ..LlmTarget::new("u", "m")
        }
        .with_api_key_from_env();
        assert_eq!(none.api_key, None, "an unset variable means no key");
    }

    #[test]
    fn blank_api_key_counts_as_none_and_key_is_trimmed() {
        let t = LlmTarget::new("u", "m");
        assert_eq!(t.clone().with_api_key(Some("  ".into())).api_key, None);
        assert_eq!(t.clone().with_api_key(None).api_key, None);
        assert_eq!(
            t.with_api_key(Some(" sk-1\n".into())).api_key.as_deref(),
            Some("sk-1")
        );
    }

    #[test]
    fn debug_never_prints_the_key() {
        let t = LlmTarget::new("u", "m").with_api_key(Some("sk-secret".into()));
        let text = format!("{t:?}");
        assert!(!text.contains("sk-secret"), "{text}");
        assert!(text.contains("<redacted>"), "{text}");
    }
}

//! Settings of the LLM client and the named limits behind their defaults.

use std::fmt;
use std::time::Duration;

/// Environment variable holding the API key, sent as `Authorization: Bearer <key>`.
pub const API_KEY_ENV: &str = "PORFIRY_LLM_API_KEY";

/// Whole-request limit: a small model on a phone CPU can take a couple of minutes to
/// answer a long prompt; longer than that the user is better told something is wrong.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(180);

/// TCP connect limit: local and LAN servers accept within milliseconds; ten seconds
/// leaves room for a slow Wi-Fi or a VPN and still reports a dead host quickly.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Retries after the first attempt on 429, 5xx and connection errors: three retries with
/// doubling delays cover a server restarting or loading a model (a few seconds).
pub const DEFAULT_MAX_RETRIES: u32 = 3;

/// Ceiling of the first backoff delay; it doubles on each retry (0.5 s, 1 s, 2 s with the
/// defaults) and each wait is jittered into the upper half of its ceiling ([`crate::backoff`]).
pub const DEFAULT_RETRY_BASE_DELAY: Duration = Duration::from_millis(500);

/// Sampling temperature when none is configured: low, because small models follow the
/// `TOOL_CALL:` format more reliably when they sample less.
pub const DEFAULT_TEMPERATURE: f32 = 0.2;

/// How to reach one model on one OpenAI-compatible server.
#[derive(Clone, PartialEq)]
pub struct LlmConfig {
    /// The base that `/chat/completions` is appended to, e.g. `http://127.0.0.1:11434/v1`.
    pub base_url: String,
    /// Model name as the server knows it (`qwen2.5:3b`, `llama-3.2-3b-instruct`, …).
    pub model: String,
    /// Sampling temperature sent with every request.
    pub temperature: f32,
    /// Bearer token; `None` sends no `Authorization` header (local servers need none).
    pub api_key: Option<String>,
    /// Limit on a whole request, from connecting until the reply body is read.
    pub timeout: Duration,
    /// Limit on opening the TCP (and TLS) connection.
    pub connect_timeout: Duration,
    /// Retries after the first attempt on 429, 5xx and connection errors.
    pub max_retries: u32,
    /// First backoff delay; it doubles on each retry. Tests set it to a millisecond.
    pub retry_base_delay: Duration,
}

impl LlmConfig {
    /// Settings with the default limits, no API key and [`DEFAULT_TEMPERATURE`].
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            model: model.into(),
            temperature: DEFAULT_TEMPERATURE,
            api_key: None,
            timeout: DEFAULT_TIMEOUT,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            max_retries: DEFAULT_MAX_RETRIES,
            retry_base_delay: DEFAULT_RETRY_BASE_DELAY,
        }
    }

    /// Takes the API key from [`API_KEY_ENV`] when it is set and not blank.
    pub fn with_api_key_from_env(self) -> Self {
        let key = std::env::var(API_KEY_ENV).ok();
        self.with_api_key(key)
    }

    /// Sets the API key; a blank or whitespace-only key counts as none.
    pub fn with_api_key(mut self, key: Option<String>) -> Self {
        self.api_key = key.map(|k| k.trim().to_owned()).filter(|k| !k.is_empty());
        self
    }
}

/// Prints every field except the API key, which is shown only as set or not.
impl fmt::Debug for LlmConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmConfig")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("temperature", &self.temperature)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("timeout", &self.timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("max_retries", &self.max_retries)
            .field("retry_base_delay", &self.retry_base_delay)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_uses_the_named_defaults() {
        let c = LlmConfig::new("http://h/v1", "m");
        assert_eq!(c.timeout, DEFAULT_TIMEOUT);
        assert_eq!(c.connect_timeout, DEFAULT_CONNECT_TIMEOUT);
        assert_eq!(c.max_retries, DEFAULT_MAX_RETRIES);
        assert_eq!(c.retry_base_delay, DEFAULT_RETRY_BASE_DELAY);
        assert_eq!(c.temperature, DEFAULT_TEMPERATURE);
        assert_eq!(c.api_key, None);
    }

    #[test]
    fn blank_api_key_counts_as_none_and_key_is_trimmed() {
        let c = LlmConfig::new("u", "m");
        assert_eq!(c.clone().with_api_key(Some("  ".into())).api_key, None);
        assert_eq!(c.clone().with_api_key(None).api_key, None);
        assert_eq!(
            c.with_api_key(Some(" sk-1\n".into())).api_key.as_deref(),
            Some("sk-1")
        );
    }

    #[test]
    fn debug_never_prints_the_key() {
        let c = LlmConfig::new("u", "m").with_api_key(Some("sk-secret".into()));
        let text = format!("{c:?}");
        assert!(!text.contains("sk-secret"), "{text}");
        assert!(text.contains("<redacted>"), "{text}");
    }
}

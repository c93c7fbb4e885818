//! Every way a chat call can fail, each a variant whose message says what to do.

use std::time::Duration;

/// Characters of a reply body quoted in an error: enough for a server's error message,
/// short enough for one terminal line or log entry.
pub const MAX_SNIPPET_CHARS: usize = 300;

/// A failed chat call. `url` is always the chat-completions URL that was posted to.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LlmError {
    /// The configured base URL cannot be used.
    #[error("LLM base URL {url:?} is not usable: {reason}")]
    InvalidBaseUrl { url: String, reason: String },

    /// The temperature is negative or not a number.
    #[error("LLM temperature {value} is not usable: it must be a number of 0 or more")]
    InvalidTemperature { value: f32 },

    /// The request body could not be encoded as JSON.
    #[error("could not encode the LLM request as JSON: {detail}")]
    RequestEncoding { detail: String },

    /// The HTTP client could not be built (TLS backend initialisation).
    #[error("could not set up the HTTP client for the LLM: {detail}")]
    ClientSetup { detail: String },

    /// No connection could be made (refused, no route, DNS, TLS handshake).
    #[error("LLM endpoint {url} is unreachable after {attempts} attempt(s): {detail}")]
    Unreachable {
        url: String,
        detail: String,
        attempts: u32,
    },

    /// The request took longer than the configured timeout; not retried.
    #[error("LLM endpoint {url} did not answer within {timeout:?} (timeout)")]
    Timeout { url: String, timeout: Duration },

    /// 401 or 403.
    #[error(
        "LLM endpoint {url} refused the request with HTTP {status}: bad or missing API key \
         (set PORFIRY_LLM_API_KEY); server said: {snippet}"
    )]
    Unauthorized {
        url: String,
        status: u16,
        snippet: String,
    },

    /// 404: the base URL's path or the model name is wrong.
    #[error(
        "LLM endpoint {url} answered HTTP 404: wrong base URL (it should end where \
         /chat/completions is appended, usually /v1) or unknown model {model:?}; \
         server said: {snippet}"
    )]
    NotFound {
        url: String,
        model: String,
        snippet: String,
    },

    /// 429 on every attempt.
    #[error(
        "LLM endpoint {url} is rate limiting (HTTP 429) after {attempts} attempt(s); \
         server said: {snippet}"
    )]
    RateLimited {
        url: String,
        attempts: u32,
        snippet: String,
    },

    /// 5xx on every attempt.
    #[error(
        "LLM server at {url} failed with HTTP {status} after {attempts} attempt(s); \
         server said: {snippet}"
    )]
    ServerError {
        url: String,
        status: u16,
        attempts: u32,
        snippet: String,
    },

    /// Any other non-success status (400 for a too-long prompt, 422, …); not retried.
    #[error("LLM endpoint {url} answered HTTP {status}; server said: {snippet}")]
    Status {
        url: String,
        status: u16,
        snippet: String,
    },

    /// The connection broke after it was made (while sending or reading the body).
    #[error("connection to LLM endpoint {url} failed after {attempts} attempt(s): {detail}")]
    Transport {
        url: String,
        detail: String,
        attempts: u32,
    },

    /// The reply body exceeded the size limit; it was not parsed.
    #[error("LLM endpoint {url} sent a reply larger than {limit} bytes; refused")]
    TooLarge { url: String, limit: usize },

    /// The body is not JSON, or not the chat-completion shape.
    #[error(
        "LLM endpoint {url} sent a reply that is not chat-completion JSON ({detail}); body starts: {snippet}"
    )]
    BadJson {
        url: String,
        detail: String,
        snippet: String,
    },

    /// `choices` is missing or empty.
    #[error("LLM endpoint {url} sent a reply with no choices (nothing generated)")]
    EmptyChoices { url: String },

    /// The first choice has neither text content nor reasoning.
    #[error(
        "LLM endpoint {url} sent a choice without text content (finish_reason: {})",
        finish_reason.as_deref().unwrap_or("none")
    )]
    MissingContent {
        url: String,
        finish_reason: Option<String>,
    },

    /// The model only produced reasoning and was cut off before any answer.
    #[error(
        "the model at {url} was still reasoning when it stopped (finish_reason: {}) and gave \
         no answer; raise the server's max tokens or use a non-thinking model",
        finish_reason.as_deref().unwrap_or("none")
    )]
    OnlyReasoning {
        url: String,
        finish_reason: Option<String>,
    },
}

/// The start of a body for an error message: lossy UTF-8, whitespace runs collapsed,
/// cut at [`MAX_SNIPPET_CHARS`] characters with `…`, `(empty body)` when empty.
pub fn snippet(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let mut out = String::new();
    let mut chars = 0;
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
            chars += 1;
        }
        for c in word.chars() {
            if chars >= MAX_SNIPPET_CHARS {
                out.push('…');
                return out;
            }
            out.push(c);
            chars += 1;
        }
    }
    if out.is_empty() {
        "(empty body)".to_owned()
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippet_collapses_whitespace_and_cuts_on_char_boundaries() {
        assert_eq!(snippet(b"  a \n\t b  "), "a b");
        assert_eq!(snippet(b""), "(empty body)");
        assert_eq!(snippet(b" \n"), "(empty body)");
        let long = "ж".repeat(MAX_SNIPPET_CHARS + 10);
        let s = snippet(long.as_bytes());
        assert_eq!(s.chars().count(), MAX_SNIPPET_CHARS + 1);
        assert!(s.ends_with('…'));
        assert_eq!(snippet(&[0xff, b'a']), "\u{fffd}a");
    }

    #[test]
    fn messages_name_the_cause() {
        let url = "http://h/v1/chat/completions".to_owned();
        let e = LlmError::Unauthorized {
            url: url.clone(),
            status: 401,
            snippet: "no".into(),
        };
        assert!(e.to_string().contains("API key"), "{e}");
        assert!(e.to_string().contains("PORFIRY_LLM_API_KEY"), "{e}");
        let e = LlmError::NotFound {
            url: url.clone(),
            model: "m1".into(),
            snippet: "x".into(),
        };
        assert!(e.to_string().contains("wrong base URL"), "{e}");
        assert!(e.to_string().contains("\"m1\""), "{e}");
        let e = LlmError::MissingContent {
            url: url.clone(),
            finish_reason: None,
        };
        assert!(e.to_string().contains("finish_reason: none"), "{e}");
        let e = LlmError::OnlyReasoning {
            url,
            finish_reason: Some("length".into()),
        };
        assert!(e.to_string().contains("finish_reason: length"), "{e}");
    }
}

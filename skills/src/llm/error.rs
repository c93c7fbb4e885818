//! Every way a model call can fail, each a variant with its typed cause and a
//! message that says what to do: the one error of the HTTP client, the tool
//! loop and anything that implements [`super::Llm`].

use std::time::Duration;

/// Characters of a reply body quoted in an error: enough for a server's error message,
/// short enough for one terminal line or log entry.
pub const MAX_SNIPPET_CHARS: usize = 300;

/// A failed model call. `url`, where a variant has one, is always the
/// chat-completions URL that was posted to.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LlmError {
    /// The configured base URL cannot be used.
    #[error("LLM base URL {url:?} is not usable: {reason}")]
    InvalidBaseUrl {
        /// The base URL as configured.
        url: String,
        /// What is wrong with it.
        reason: String,
    },

    /// The temperature is negative or not a number.
    #[error("LLM temperature {value} is not usable: it must be a number of 0 or more")]
    InvalidTemperature {
        /// The temperature as configured.
        value: f64,
    },

    /// The request body could not be encoded as JSON.
    #[error("could not encode the LLM request as JSON: {detail}")]
    RequestEncoding {
        /// The encoder's message.
        detail: String,
    },

    /// The HTTP client could not be built (TLS backend initialisation).
    #[error("could not set up the HTTP client for the LLM: {detail}")]
    ClientSetup {
        /// The HTTP library's message.
        detail: String,
    },

    /// No connection could be made (refused, no route, DNS, TLS handshake).
    #[error("LLM endpoint {url} is unreachable after {attempts} attempt(s): {detail}")]
    Unreachable {
        /// The URL posted to.
        url: String,
        /// The cause of the last attempt's failure.
        detail: String,
        /// Attempts made, retries included.
        attempts: u32,
    },

    /// The request took longer than the configured timeout; not retried.
    #[error("LLM endpoint {url} did not answer within {timeout:?} (timeout)")]
    Timeout {
        /// The URL posted to.
        url: String,
        /// The configured limit.
        timeout: Duration,
    },

    /// 401 or 403.
    #[error(
        "LLM endpoint {url} refused the request with HTTP {status}: bad or missing API key \
         (set PORFIRY_LLM_API_KEY); server said: {snippet}"
    )]
    Unauthorized {
        /// The URL posted to.
        url: String,
        /// 401 or 403.
        status: u16,
        /// The start of the server's reply ([`snippet`]).
        snippet: String,
    },

    /// 404: the base URL's path or the model name is wrong.
    #[error(
        "LLM endpoint {url} answered HTTP 404: wrong base URL (it should end where \
         /chat/completions is appended, usually /v1) or unknown model {model:?}; \
         server said: {snippet}"
    )]
    NotFound {
        /// The URL posted to.
        url: String,
        /// The model name that was asked for.
        model: String,
        /// The start of the server's reply ([`snippet`]).
        snippet: String,
    },

    /// 429 on every attempt.
    #[error(
        "LLM endpoint {url} is rate limiting (HTTP 429) after {attempts} attempt(s); \
         server said: {snippet}"
    )]
    RateLimited {
        /// The URL posted to.
        url: String,
        /// Attempts made, retries included.
        attempts: u32,
        /// The start of the last reply ([`snippet`]).
        snippet: String,
    },

    /// 5xx on every attempt.
    #[error(
        "LLM server at {url} failed with HTTP {status} after {attempts} attempt(s); \
         server said: {snippet}"
    )]
    ServerError {
        /// The URL posted to.
        url: String,
        /// The last 5xx status.
        status: u16,
        /// Attempts made, retries included.
        attempts: u32,
        /// The start of the last reply ([`snippet`]).
        snippet: String,
    },

    /// Any other non-success status (400 for a too-long prompt, 422, …); not retried.
    #[error("LLM endpoint {url} answered HTTP {status}; server said: {snippet}")]
    Status {
        /// The URL posted to.
        url: String,
        /// The status code.
        status: u16,
        /// The start of the reply, or the error message of a 200 reply
        /// that carries one.
        snippet: String,
    },

    /// The connection broke after it was made (while sending or reading the body).
    #[error("connection to LLM endpoint {url} failed after {attempts} attempt(s): {detail}")]
    Transport {
        /// The URL posted to.
        url: String,
        /// The cause of the last attempt's failure.
        detail: String,
        /// Attempts made, retries included.
        attempts: u32,
    },

    /// The reply body exceeded the size limit; it was not parsed.
    #[error("LLM endpoint {url} sent a reply larger than {limit} bytes; refused")]
    TooLarge {
        /// The URL posted to.
        url: String,
        /// The size limit in bytes.
        limit: usize,
    },

    /// The body is not JSON, or not the chat-completion shape.
    #[error(
        "LLM endpoint {url} sent a reply that is not chat-completion JSON ({detail}); body starts: {snippet}"
    )]
    BadJson {
        /// The URL posted to.
        url: String,
        /// What the decoder or the shape check said.
        detail: String,
        /// The start of the body ([`snippet`]).
        snippet: String,
    },

    /// `choices` is missing or empty.
    #[error("LLM endpoint {url} sent a reply with no choices (nothing generated)")]
    EmptyChoices {
        /// The URL posted to.
        url: String,
    },

    /// The first choice has neither text content nor reasoning.
    #[error(
        "LLM endpoint {url} sent a choice without text content (finish_reason: {})",
        finish_reason.as_deref().unwrap_or("none")
    )]
    MissingContent {
        /// The URL posted to.
        url: String,
        /// The choice's `finish_reason`, if it had one.
        finish_reason: Option<String>,
    },

    /// The model only produced reasoning and was cut off before any answer.
    #[error(
        "the model at {url} was still reasoning when it stopped (finish_reason: {}) and gave \
         no answer; raise the server's max tokens or use a non-thinking model",
        finish_reason.as_deref().unwrap_or("none")
    )]
    OnlyReasoning {
        /// The URL posted to.
        url: String,
        /// The choice's `finish_reason`, if it had one.
        finish_reason: Option<String>,
    },

    /// A friend's model, used over the mesh (offload), could not answer.
    #[error("friend {peer}'s model: {failure}")]
    Friend {
        /// The friend's peer id (`12D3KooW…`).
        peer: String,
        /// What went wrong, typed.
        failure: FriendFailure,
    },

    /// Every friend that offers the model failed before the first token; each
    /// friend's own error, in the order they were tried.
    #[error("no friend's model answered ({} tried): {}", failures.len(), join_failures(failures))]
    NoFriendAnswered {
        /// One error per friend tried (usually [`LlmError::Friend`]).
        failures: Vec<LlmError>,
    },

    /// No model is configured and no friend offers one (yet): the text says
    /// how to give one.
    #[error("{0}")]
    NoModel(String),

    /// The model is busy: its queue is full, so the request was not queued.
    /// Worth trying again shortly (the API answers 503 with `Retry-After`, a
    /// friend serving it over offload answers `busy`).
    #[error(
        "the model {model} is busy: {waiting} request(s) already wait for it; try again when one \
         is answered"
    )]
    Busy {
        /// The model.
        model: String,
        /// Requests already waiting.
        waiting: usize,
    },

    /// The backend does not offer what was asked of it (embeddings from a
    /// chat-only server, a friend's model over offload): callers fall back.
    #[error("{model} does not offer {what}")]
    Unsupported {
        /// The model or endpoint asked.
        model: String,
        /// What it lacks (`"embeddings"`).
        what: String,
    },

    /// Any other failure: a model that is not the HTTP client (an on-device
    /// one, a test script), or a turn the tool loop could not continue.
    #[error("model call failed: {0}")]
    Other(String),
}

impl LlmError {
    /// Whether the model could not be reached at all (its server refused or
    /// had no route, the friend was not connected): seed 003's `offline`
    /// rather than an error of the model.
    pub fn is_unreachable(&self) -> bool {
        match self {
            LlmError::Unreachable { .. } => true,
            LlmError::Friend { failure, .. } => {
                matches!(failure, FriendFailure::Unreachable { .. })
            }
            LlmError::NoFriendAnswered { failures } => {
                !failures.is_empty() && failures.iter().all(LlmError::is_unreachable)
            }
            _ => false,
        }
    }
}

/// Why a friend's model (offload over the mesh) gave no answer or stopped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FriendFailure {
    /// The friend does not allow this node to use its model.
    #[error(
        "this node is not permitted to use it (the friend can allow it with \
         `porfiry friends offload <this node's peer id> on`)"
    )]
    NotPermitted,
    /// Every slot of the friend's model is taken; it did not queue the request.
    #[error("it is busy with other requests; try again in {retry_after:?}")]
    Busy {
        /// How long the friend suggests waiting.
        retry_after: Duration,
    },
    /// The friend's model failed on the friend's node (its server down, an error).
    #[error("it failed on the friend's node: {detail}")]
    ModelDown {
        /// The friend's words.
        detail: String,
    },
    /// No stream to the friend could be opened (not connected, not reachable).
    #[error("the friend could not be reached over the mesh: {detail}")]
    Unreachable {
        /// The mesh's words.
        detail: String,
    },
    /// A deadline of this node's passed (`connect`, `first token`, `idle`, `total`),
    /// or the friend's own deadline (`friend's model`).
    #[error("the {phase} deadline of {timeout:?} passed")]
    Deadline {
        /// Which deadline.
        phase: String,
        /// Its length.
        timeout: Duration,
    },
    /// The request is larger than the friend accepts.
    #[error("the request is too large for the friend: {detail}")]
    TooLarge {
        /// The friend's words.
        detail: String,
    },
    /// The friend refused the request as malformed, or sent something that is not
    /// the offload protocol, or ended the stream before the answer's end.
    #[error("the offload stream broke: {detail}")]
    Protocol {
        /// What was wrong.
        detail: String,
    },
}

/// The errors of [`LlmError::NoFriendAnswered`] as one line.
fn join_failures(failures: &[LlmError]) -> String {
    failures
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
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
    fn unreachable_means_no_connection_to_a_server_or_to_every_friend() {
        let down = LlmError::Unreachable {
            url: "http://h/v1".into(),
            detail: "refused".into(),
            attempts: 1,
        };
        let friend = |failure| LlmError::Friend {
            peer: "12D3KooWx".into(),
            failure,
        };
        let away = friend(FriendFailure::Unreachable {
            detail: "not connected".into(),
        });
        let refused = friend(FriendFailure::NotPermitted);
        assert!(down.is_unreachable() && away.is_unreachable());
        assert!(!refused.is_unreachable());
        assert!(
            LlmError::NoFriendAnswered {
                failures: vec![away.clone(), down.clone()]
            }
            .is_unreachable()
        );
        assert!(
            !LlmError::NoFriendAnswered {
                failures: vec![away, refused]
            }
            .is_unreachable()
        );
        assert!(!LlmError::Other("x".into()).is_unreachable());
    }

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
        let e = LlmError::Friend {
            peer: "12D3KooWA".into(),
            failure: FriendFailure::Busy {
                retry_after: Duration::from_secs(5),
            },
        };
        assert_eq!(
            e.to_string(),
            "friend 12D3KooWA's model: it is busy with other requests; try again in 5s"
        );
        let both = LlmError::NoFriendAnswered {
            failures: vec![
                e,
                LlmError::Friend {
                    peer: "12D3KooWB".into(),
                    failure: FriendFailure::NotPermitted,
                },
            ],
        };
        let text = both.to_string();
        assert!(
            text.starts_with("no friend's model answered (2 tried): friend 12D3KooWA"),
            "{text}"
        );
        assert!(
            text.contains("; friend 12D3KooWB's model: this node is not permitted"),
            "{text}"
        );
        assert_eq!(
            LlmError::Other("script exhausted".into()).to_string(),
            "model call failed: script exhausted"
        );
    }
}

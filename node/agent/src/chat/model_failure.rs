//! How a chat turn words a failed model call: the short sentence the terminal
//! chat prints after `[error] ` and an embedder reads from
//! [`super::SendError::Model`]. The [`LlmError`] itself keeps every detail
//! (URL, attempts, the server's words); this picks the ones a chat user can
//! act on, in the words the chat has always used.

use porfiry_skills::LlmError;

/// The sentence for a failed model call in a chat turn.
pub fn describe(error: &LlmError) -> String {
    const BAD_BODY: &str = "model endpoint sent a body that is not a chat completion";
    match error {
        LlmError::Unreachable {
            url,
            detail,
            attempts,
        } => format!("model endpoint {url} unreachable: {detail} (after {attempts} attempt(s))"),
        LlmError::Timeout { timeout, .. } => {
            format!("model did not answer within {} ms", timeout.as_millis())
        }
        LlmError::Unauthorized { status, .. } => {
            format!("model endpoint refused the API key (HTTP {status})")
        }
        LlmError::NotFound { model, snippet, .. } => format!(
            "model endpoint answered HTTP 404: wrong base URL (it should end where \
             /chat/completions is appended, usually /v1) or unknown model {model:?}; \
             server said: {snippet}"
        ),
        LlmError::RateLimited {
            attempts, snippet, ..
        } => format!(
            "model endpoint answered HTTP 429: rate limited after {attempts} attempt(s); \
             server said: {snippet}"
        ),
        LlmError::ServerError {
            status,
            attempts,
            snippet,
            ..
        } => format!(
            "model endpoint answered HTTP {status}: {snippet} (after {attempts} attempt(s))"
        ),
        LlmError::Status {
            status, snippet, ..
        } => format!("model endpoint answered HTTP {status}: {snippet}"),
        LlmError::TooLarge { limit, .. } => {
            format!("{BAD_BODY}: reply larger than {limit} bytes, refused")
        }
        LlmError::BadJson {
            detail, snippet, ..
        } => format!("{BAD_BODY}: {detail}; body starts: {snippet}"),
        LlmError::EmptyChoices { .. } => "model endpoint sent no choices".to_owned(),
        LlmError::Other(_)
        | LlmError::NoModel(_)
        | LlmError::Unsupported { .. }
        | LlmError::Busy { .. } => error.to_string(),
        LlmError::InvalidBaseUrl { .. }
        | LlmError::InvalidTemperature { .. }
        | LlmError::RequestEncoding { .. }
        | LlmError::ClientSetup { .. }
        | LlmError::Transport { .. }
        | LlmError::MissingContent { .. }
        | LlmError::OnlyReasoning { .. }
        | LlmError::Friend { .. }
        | LlmError::NoFriendAnswered { .. } => format!("model call failed: {error}"),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    const URL: &str = "http://127.0.0.1:9/v1/chat/completions";

    #[test]
    fn each_failure_reads_as_the_chat_has_always_said_it() {
        let e = LlmError::Unreachable {
            url: URL.into(),
            detail: "connection refused".into(),
            attempts: 2,
        };
        assert_eq!(
            describe(&e),
            format!("model endpoint {URL} unreachable: connection refused (after 2 attempt(s))")
        );
        let e = LlmError::Timeout {
            url: URL.into(),
            timeout: Duration::from_secs(2),
        };
        assert_eq!(describe(&e), "model did not answer within 2000 ms");
        let e = LlmError::Unauthorized {
            url: URL.into(),
            status: 401,
            snippet: "no".into(),
        };
        assert_eq!(
            describe(&e),
            "model endpoint refused the API key (HTTP 401)"
        );
        let e = LlmError::ServerError {
            url: URL.into(),
            status: 503,
            attempts: 1,
            snippet: "overloaded".into(),
        };
        assert_eq!(
            describe(&e),
            "model endpoint answered HTTP 503: overloaded (after 1 attempt(s))"
        );
        let e = LlmError::NotFound {
            url: URL.into(),
            model: "m1".into(),
            snippet: "x".into(),
        };
        assert!(describe(&e).contains("unknown model \"m1\""), "{e}");
        let e = LlmError::RateLimited {
            url: URL.into(),
            attempts: 4,
            snippet: "slow down".into(),
        };
        assert_eq!(
            describe(&e),
            "model endpoint answered HTTP 429: rate limited after 4 attempt(s); \
             server said: slow down"
        );
        let e = LlmError::Status {
            url: URL.into(),
            status: 400,
            snippet: "prompt too long".into(),
        };
        assert_eq!(
            describe(&e),
            "model endpoint answered HTTP 400: prompt too long"
        );
        let e = LlmError::BadJson {
            url: URL.into(),
            detail: "expected value at line 1 column 1".into(),
            snippet: "<html>".into(),
        };
        assert_eq!(
            describe(&e),
            "model endpoint sent a body that is not a chat completion: \
             expected value at line 1 column 1; body starts: <html>"
        );
        let e = LlmError::TooLarge {
            url: URL.into(),
            limit: 10,
        };
        assert_eq!(
            describe(&e),
            "model endpoint sent a body that is not a chat completion: \
             reply larger than 10 bytes, refused"
        );
        let e = LlmError::EmptyChoices { url: URL.into() };
        assert_eq!(describe(&e), "model endpoint sent no choices");
        let e = LlmError::OnlyReasoning {
            url: URL.into(),
            finish_reason: Some("length".into()),
        };
        assert_eq!(describe(&e), format!("model call failed: {e}"));
        let e = LlmError::Other("script exhausted".into());
        assert_eq!(describe(&e), "model call failed: script exhausted");
    }
}

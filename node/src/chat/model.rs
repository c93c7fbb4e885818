//! The adapter between the tool loop and the node's HTTP client: implements
//! `porfiry_skills::Llm` for [`OpenAiClient`], mapping history roles and
//! turning the client's detailed errors into the loop's error kinds without
//! losing the words that tell the user what to do.

use std::future::Future;

use porfiry_skills::llm::{ChatMessage as LoopMessage, Role as LoopRole};
use porfiry_skills::{Llm, LlmError as ModelError, ModelRequest};

use crate::llm::{ChatMessage, LlmError, OpenAiClient, Role};

impl Llm for OpenAiClient {
    fn complete(
        &self,
        request: &ModelRequest,
    ) -> impl Future<Output = Result<String, ModelError>> + Send {
        let messages: Vec<ChatMessage> = request.messages.iter().map(to_wire).collect();
        let system = request.system.clone();
        async move {
            self.chat(&system, &messages)
                .await
                .map_err(|e| to_model_error(&e))
        }
    }
}

/// A loop history message as the client sends it. Tool results are already
/// `user` messages in the loop (see `porfiry_skills::llm`).
pub fn to_wire(message: &LoopMessage) -> ChatMessage {
    let role = match message.role {
        LoopRole::User => Role::User,
        LoopRole::Assistant => Role::Assistant,
    };
    ChatMessage::new(role, message.content.clone())
}

/// The loop's kind of failure for a client error, keeping the client's
/// details (URL, attempts, what the server said) in the text.
pub fn to_model_error(e: &LlmError) -> ModelError {
    match e {
        LlmError::Unreachable {
            url,
            detail,
            attempts,
        } => ModelError::Unreachable {
            endpoint: url.clone(),
            detail: format!("{detail} (after {attempts} attempt(s))"),
        },
        LlmError::Timeout { timeout, .. } => ModelError::Timeout {
            ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
        },
        LlmError::Unauthorized { status, .. } => ModelError::Unauthorized { status: *status },
        LlmError::NotFound { model, snippet, .. } => ModelError::Status {
            status: 404,
            body: format!(
                "wrong base URL (it should end where /chat/completions is appended, usually /v1) \
                 or unknown model {model:?}; server said: {snippet}"
            ),
        },
        LlmError::RateLimited {
            attempts, snippet, ..
        } => ModelError::Status {
            status: 429,
            body: format!("rate limited after {attempts} attempt(s); server said: {snippet}"),
        },
        LlmError::ServerError {
            status,
            attempts,
            snippet,
            ..
        } => ModelError::Status {
            status: *status,
            body: format!("{snippet} (after {attempts} attempt(s))"),
        },
        LlmError::Status {
            status, snippet, ..
        } => ModelError::Status {
            status: *status,
            body: snippet.clone(),
        },
        LlmError::TooLarge { limit, .. } => {
            ModelError::BadBody(format!("reply larger than {limit} bytes, refused"))
        }
        LlmError::BadJson {
            detail, snippet, ..
        } => ModelError::BadBody(format!("{detail}; body starts: {snippet}")),
        LlmError::EmptyChoices { .. } => ModelError::EmptyChoices,
        LlmError::InvalidBaseUrl { .. }
        | LlmError::InvalidTemperature { .. }
        | LlmError::RequestEncoding { .. }
        | LlmError::ClientSetup { .. }
        | LlmError::Transport { .. }
        | LlmError::MissingContent { .. }
        | LlmError::OnlyReasoning { .. } => ModelError::Other(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    const URL: &str = "http://127.0.0.1:9/v1/chat/completions";

    #[test]
    fn roles_map_one_to_one_and_tool_results_stay_user_text() {
        let m = to_wire(&LoopMessage::tool_result("media_search", "tt1 — X"));
        assert_eq!(m, ChatMessage::user("TOOL_RESULT media_search: tt1 — X"));
        assert_eq!(
            to_wire(&LoopMessage::assistant("hi")),
            ChatMessage::assistant("hi")
        );
    }

    #[test]
    fn errors_keep_their_kind_and_their_details() {
        let e = to_model_error(&LlmError::Unreachable {
            url: URL.into(),
            detail: "connection refused".into(),
            attempts: 2,
        });
        assert_eq!(
            e.to_string(),
            format!("model endpoint {URL} unreachable: connection refused (after 2 attempt(s))")
        );
        let e = to_model_error(&LlmError::Timeout {
            url: URL.into(),
            timeout: Duration::from_secs(2),
        });
        assert_eq!(e, ModelError::Timeout { ms: 2_000 });
        let e = to_model_error(&LlmError::Unauthorized {
            url: URL.into(),
            status: 401,
            snippet: "no".into(),
        });
        assert_eq!(e, ModelError::Unauthorized { status: 401 });
        let e = to_model_error(&LlmError::ServerError {
            url: URL.into(),
            status: 503,
            attempts: 1,
            snippet: "overloaded".into(),
        });
        assert_eq!(
            e.to_string(),
            "model endpoint answered HTTP 503: overloaded (after 1 attempt(s))"
        );
        let e = to_model_error(&LlmError::NotFound {
            url: URL.into(),
            model: "m1".into(),
            snippet: "x".into(),
        });
        assert!(e.to_string().contains("unknown model \"m1\""), "{e}");
        let e = to_model_error(&LlmError::RateLimited {
            url: URL.into(),
            attempts: 4,
            snippet: "slow down".into(),
        });
        assert!(matches!(e, ModelError::Status { status: 429, .. }), "{e}");
        let e = to_model_error(&LlmError::Status {
            url: URL.into(),
            status: 400,
            snippet: "prompt too long".into(),
        });
        assert_eq!(
            e.to_string(),
            "model endpoint answered HTTP 400: prompt too long"
        );
        let e = to_model_error(&LlmError::BadJson {
            url: URL.into(),
            detail: "expected value at line 1 column 1".into(),
            snippet: "<html>".into(),
        });
        assert!(
            matches!(&e, ModelError::BadBody(b) if b.contains("<html>")),
            "{e}"
        );
        let e = to_model_error(&LlmError::TooLarge {
            url: URL.into(),
            limit: 10,
        });
        assert!(matches!(e, ModelError::BadBody(_)));
        let e = to_model_error(&LlmError::EmptyChoices { url: URL.into() });
        assert_eq!(e, ModelError::EmptyChoices);
        let original = LlmError::OnlyReasoning {
            url: URL.into(),
            finish_reason: Some("length".into()),
        };
        let e = to_model_error(&original);
        assert_eq!(e, ModelError::Other(original.to_string()));
    }
}

//! The model interface: a request (system prompt + chat history), the `Llm`
//! trait the node's HTTP client implements, and its errors.
//!
//! Tool results enter the history as `user` messages that start with
//! `TOOL_RESULT <tool>: `. Small models behind OpenAI-compatible servers often
//! have no `tool` role in their chat template (and the `tool` role needs
//! `tool_call_id`s from native function calling, which we do not use), while
//! every template handles strict user/assistant alternation, which this keeps.

use std::future::Future;

use serde::{Deserialize, Serialize};

/// Who wrote a history message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user, or a tool result (`TOOL_RESULT …`).
    User,
    /// The model.
    Assistant,
}

/// One message of the history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// Who wrote it.
    pub role: Role,
    /// What it says.
    pub content: String,
}

impl ChatMessage {
    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            content: content.into(),
        }
    }

    /// A model message.
    pub fn assistant(content: impl Into<String>) -> Self {
        Self {
            role: Role::Assistant,
            content: content.into(),
        }
    }

    /// A tool result: `TOOL_RESULT <tool>: <text>` as a user message.
    pub fn tool_result(tool: &str, text: &str) -> Self {
        Self::user(format!("{TOOL_RESULT_PREFIX} {tool}: {text}"))
    }
}

/// How a tool result message starts.
pub const TOOL_RESULT_PREFIX: &str = "TOOL_RESULT";

/// One request to the model: send `system` as the system message, then
/// `messages` in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelRequest {
    /// The system prompt.
    pub system: String,
    /// The chat history (plus, at most once, a note about a no-op call).
    pub messages: Vec<ChatMessage>,
}

/// Why a model call failed, in words the user can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LlmError {
    /// Nothing answered at the endpoint.
    #[error("model endpoint {endpoint} unreachable: {detail}")]
    Unreachable {
        /// The URL.
        endpoint: String,
        /// The cause.
        detail: String,
    },
    /// No reply within the time limit.
    #[error("model did not answer within {ms} ms")]
    Timeout {
        /// The limit.
        ms: u64,
    },
    /// The server refused the API key.
    #[error("model endpoint refused the API key (HTTP {status})")]
    Unauthorized {
        /// 401 or 403.
        status: u16,
    },
    /// Any other HTTP error after retries.
    #[error("model endpoint answered HTTP {status}: {body}")]
    Status {
        /// The status code.
        status: u16,
        /// The start of the body.
        body: String,
    },
    /// The body was not the JSON we expect.
    #[error("model endpoint sent a body that is not a chat completion: {0}")]
    BadBody(String),
    /// A completion without choices or content.
    #[error("model endpoint sent no choices")]
    EmptyChoices,
    /// Anything else.
    #[error("model call failed: {0}")]
    Other(String),
}

/// A chat model. Implementations send one request and return the text of the
/// first choice.
pub trait Llm {
    /// Completes `request`.
    fn complete(
        &self,
        request: &ModelRequest,
    ) -> impl Future<Output = Result<String, LlmError>> + Send;
}

impl<T: Llm + ?Sized> Llm for &T {
    fn complete(
        &self,
        request: &ModelRequest,
    ) -> impl Future<Output = Result<String, LlmError>> + Send {
        (**self).complete(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_results_are_user_messages_with_a_prefix() {
        let m = ChatMessage::tool_result("media_search", "tt1 — Tomb Raider (2001)");
        assert_eq!(m.role, Role::User);
        assert_eq!(
            m.content,
            "TOOL_RESULT media_search: tt1 — Tomb Raider (2001)"
        );
    }

    #[test]
    fn errors_read_as_sentences() {
        let e = LlmError::Unreachable {
            endpoint: "http://127.0.0.1:9/v1".into(),
            detail: "connection refused".into(),
        };
        assert_eq!(
            e.to_string(),
            "model endpoint http://127.0.0.1:9/v1 unreachable: connection refused"
        );
        assert_eq!(
            LlmError::Timeout { ms: 30_000 }.to_string(),
            "model did not answer within 30000 ms"
        );
    }
}

//! The OpenAI chat vocabulary the tool loop, the node's HTTP client and (next)
//! the node's OpenAI-compatible endpoint share: a history [`ChatMessage`] with
//! its [`Role`] ([`message`]), every way a model call fails ([`LlmError`],
//! [`error`]), a request (system prompt + history, [`ModelRequest`]) and the
//! [`Llm`] trait the node's HTTP client implements. No IO here.
//!
//! Tool results enter the history as `user` messages that start with
//! `TOOL_RESULT <tool>: `. Small models behind OpenAI-compatible servers often
//! have no `tool` role in their chat template (and the `tool` role needs
//! `tool_call_id`s from native function calling, which we do not use), while
//! every template handles strict user/assistant alternation, which this keeps.

use std::future::Future;

use serde::{Deserialize, Serialize};

pub mod error;
pub mod message;

pub use error::{LlmError, MAX_SNIPPET_CHARS, snippet};
pub use message::{ChatMessage, Role, TOOL_RESULT_PREFIX};

/// One request to the model: send `system` as the system message, then
/// `messages` in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelRequest {
    /// The system prompt.
    pub system: String,
    /// The chat history (plus, at most once, a note about a no-op call).
    pub messages: Vec<ChatMessage>,
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

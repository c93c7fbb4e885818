//! The OpenAI chat vocabulary the tool loop, the node's HTTP client and the
//! node's OpenAI-compatible endpoint share: a history [`ChatMessage`] with
//! its [`Role`] ([`message`]), every way a model call fails ([`LlmError`],
//! [`error`]), a request (system prompt + history, [`ModelRequest`]), what
//! comes back ([`Completion`], streamed as [`Delta`]s, [`completion`]) and
//! the object-safe [`Llm`] trait the node's HTTP client implements. No IO here.
//!
//! Tool results enter the history as `user` messages that start with
//! `TOOL_RESULT <tool>: `. Small models behind OpenAI-compatible servers often
//! have no `tool` role in their chat template (and the `tool` role needs
//! `tool_call_id`s from native function calling, which we do not use), while
//! every template handles strict user/assistant alternation, which this keeps.
//!
//! `Llm` returns boxed futures and streams so that it is object-safe: the
//! node holds one `Arc<dyn Llm>` for the terminal chat, the API and (next)
//! the cognitive core, and tests swap in scripted models without type
//! parameters spreading through every caller.

use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};

pub mod budgets;
pub mod completion;
pub mod error;
pub mod message;
pub mod stops;

pub use completion::{Completion, Delta, Usage};
pub use error::{FriendFailure, LlmError, MAX_SNIPPET_CHARS, snippet};
pub use message::{ChatMessage, Role, TOOL_RESULT_PREFIX};

/// A boxed, sendable future (what object-safe async traits return).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Deltas of one streamed answer. Dropping it cancels the request (the HTTP
/// connection to the upstream closes).
pub type DeltaStream = Pin<Box<dyn futures_core::Stream<Item = Result<Delta, LlmError>> + Send>>;

/// One request to the model: send `system` as the system message, then
/// `messages` in order, and let the answer run to at most `max_tokens`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelRequest {
    /// The system prompt.
    pub system: String,
    /// The chat history (plus, at most once, a note about a no-op call).
    pub messages: Vec<ChatMessage>,
    /// The most tokens the answer may have ([`budgets`] names one per call
    /// kind); `None` leaves it to the backend. A backend also holding its own
    /// limit sends the smaller of the two. An answer cut here ends with
    /// `finish_reason: "length"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// A GBNF grammar the answer must follow ([`crate::grammar`]), built from
    /// the same state as the prompt. A backend that can constrain decoding
    /// applies it (the embedded engine; a llama.cpp server, when the HTTP
    /// client is set to send it); every other backend ignores it. `None`:
    /// the answer is free.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grammar: Option<String>,
    /// Texts that end the answer where they start ([`stops`] names them per
    /// call kind); the stop text itself is not part of the answer, which
    /// ends with `finish_reason: "stop"`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stop: Vec<String>,
}

impl ModelRequest {
    /// A request for `system` and `messages` with the answer's budget, no
    /// grammar and no stop texts.
    pub fn new(system: String, messages: Vec<ChatMessage>, max_tokens: Option<u32>) -> Self {
        Self {
            system,
            messages,
            max_tokens,
            grammar: None,
            stop: Vec::new(),
        }
    }

    /// The same request with the answer's grammar (none when `None`).
    pub fn with_grammar(mut self, grammar: Option<String>) -> Self {
        self.grammar = grammar;
        self
    }

    /// The same request with these stop texts.
    pub fn with_stop(mut self, stop: &[&str]) -> Self {
        self.stop = stop.iter().map(|s| (*s).to_owned()).collect();
        self
    }
}

/// A chat model; object-safe, shared as `Arc<dyn Llm>`.
pub trait Llm: Send + Sync {
    /// Completes `request` in one reply.
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<Completion, LlmError>>;

    /// Streams the answer. Default: [`Llm::complete`], then one `Text` (when
    /// the answer is not empty) and `Done` (with the completion's
    /// `served_by`).
    fn stream<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<DeltaStream, LlmError>> {
        Box::pin(async move {
            let completion = self.complete(request).await?;
            let mut items = Vec::with_capacity(2);
            if !completion.text.is_empty() {
                items.push(Ok(Delta::Text(completion.text)));
            }
            items.push(Ok(Delta::Done {
                finish_reason: completion.finish_reason,
                usage: completion.usage,
                served_by: completion.served_by,
            }));
            let stream: DeltaStream = Box::pin(futures_util::stream::iter(items));
            Ok(stream)
        })
    }

    /// One embedding vector per text, in order, where the backend offers
    /// embeddings (an OpenAI-compatible `/v1/embeddings`); the default is
    /// [`LlmError::Unsupported`], and every caller keeps a fallback for it
    /// (the stagnation detectors compare words instead).
    fn embed<'a>(&'a self, texts: &'a [String]) -> BoxFuture<'a, Result<Vec<Vec<f32>>, LlmError>> {
        let _ = texts;
        Box::pin(async move {
            Err(LlmError::Unsupported {
                model: self.model_name(),
                what: "embeddings".into(),
            })
        })
    }

    /// The model's name for status output (`"gemma3:4b"`); default "unknown".
    fn model_name(&self) -> String {
        "unknown".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use futures_util::StreamExt;

    use super::*;

    struct Fixed(&'static str);

    impl Llm for Fixed {
        fn complete<'a>(
            &'a self,
            _request: &'a ModelRequest,
        ) -> BoxFuture<'a, Result<Completion, LlmError>> {
            Box::pin(async move {
                Ok(Completion {
                    text: self.0.to_owned(),
                    usage: Some(Usage::new(7, 1)),
                    finish_reason: Some("stop".into()),
                    served_by: Some("12D3KooWanna".into()),
                })
            })
        }
    }

    fn request() -> ModelRequest {
        ModelRequest::new("s".into(), vec![ChatMessage::user("hi")], None)
    }

    fn collect(llm: &dyn Llm) -> Vec<Delta> {
        futures_util::FutureExt::now_or_never(async {
            let stream = llm.stream(&request()).await.unwrap();
            stream.map(Result::unwrap).collect::<Vec<_>>().await
        })
        .unwrap()
    }

    #[test]
    fn default_stream_is_the_completion_then_done() {
        let llm: std::sync::Arc<dyn Llm> = std::sync::Arc::new(Fixed("Hello."));
        assert_eq!(
            collect(llm.as_ref()),
            vec![
                Delta::Text("Hello.".into()),
                Delta::Done {
                    finish_reason: Some("stop".into()),
                    usage: Some(Usage::new(7, 1)),
                    served_by: Some("12D3KooWanna".into()),
                },
            ]
        );
        assert_eq!(llm.model_name(), "unknown");
    }

    #[test]
    fn default_stream_of_an_empty_answer_is_only_done() {
        assert_eq!(collect(&Fixed("")).len(), 1);
    }

    #[test]
    fn a_backend_without_embeddings_says_so_by_default() {
        let texts = vec!["a".to_owned()];
        let e = futures_util::FutureExt::now_or_never(Fixed("x").embed(&texts))
            .unwrap()
            .unwrap_err();
        assert!(
            matches!(&e, LlmError::Unsupported { what, .. } if what == "embeddings"),
            "{e}"
        );
        assert_eq!(e.to_string(), "unknown does not offer embeddings");
    }
}

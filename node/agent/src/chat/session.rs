//! One chat session for embedding (a phone app, the terminal chat):
//! `send(text)` → the answer and the client events of that turn. The loop
//! itself is `porfiry_skills`' session and driver; this adds the checks on
//! the user's text and a view of the session's state.

use std::sync::Arc;

use std::time::Duration;

use futures::channel::mpsc::Sender;
use porfiry_skills::{Caller, ChatMessage, Clock, Llm, LlmError, Reply, Toolbox, TraceEvent};

use super::config::MAX_USER_MESSAGE_CHARS;
use super::model_failure;

/// Why a message got no answer. Nothing is lost: on [`SendError::Empty`] and
/// [`SendError::TooLong`] the session is untouched; on
/// [`SendError::Model`] the history keeps the message (with a note that no
/// reply came) and the session takes the next message as usual.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SendError {
    /// Only whitespace.
    #[error("the message is empty")]
    Empty,
    /// Longer than [`MAX_USER_MESSAGE_CHARS`].
    #[error("the message has {chars} characters; at most {MAX_USER_MESSAGE_CHARS} are accepted")]
    TooLong {
        /// Its length in characters.
        chars: usize,
    },
    /// The model call failed (unreachable, timeout, HTTP error, bad reply);
    /// shown in the chat's words ([`model_failure::describe`]), every detail
    /// kept in the error.
    #[error("{}", model_failure::describe(.0))]
    Model(LlmError),
}

impl From<LlmError> for SendError {
    fn from(error: LlmError) -> Self {
        SendError::Model(error)
    }
}

/// One conversation: its history and its active toolsets. Its turns run on
/// a tokio runtime with the time driver (every tool call has a deadline).
pub struct ChatSession {
    inner: porfiry_skills::ChatSession,
    clock: Arc<dyn Clock>,
}

impl ChatSession {
    /// A fresh session over a shared toolbox (normally via
    /// [`super::ChatEngine::session`]).
    pub fn new(toolbox: Arc<Toolbox>, llm: Arc<dyn Llm>, clock: Arc<dyn Clock>) -> Self {
        Self {
            inner: porfiry_skills::ChatSession::new(toolbox, llm, clock.clone()),
            clock,
        }
    }

    /// Sets the session id and the caller its tools see (the API passes
    /// [`Caller::ApiClient`]; the terminal keeps the default, the user).
    pub fn with_identity(mut self, id: impl Into<String>, caller: Caller) -> Self {
        self.inner = self.inner.with_identity(id, caller);
        self
    }

    /// Sets the deadline of every tool call (default
    /// [`porfiry_skills::DEFAULT_TOOL_TIMEOUT`]).
    pub fn with_tool_timeout(mut self, timeout: Duration) -> Self {
        self.inner = self.inner.with_tool_timeout(timeout);
        self
    }

    /// Sends the user's text; returns the answer and the events its tool
    /// calls emitted (`show_text`, `media_play`), in order.
    pub async fn send(&mut self, text: &str) -> Result<Reply, SendError> {
        self.send_traced(text, |_| {}).await
    }

    /// [`ChatSession::send`], reporting every request, model reply and
    /// dispatcher action to `trace` as it happens.
    pub async fn send_traced<F>(&mut self, text: &str, trace: F) -> Result<Reply, SendError>
    where
        F: FnMut(TraceEvent<'_>) + Send,
    {
        check_message(text)?;
        Ok(self.inner.send_traced(text, trace).await?)
    }

    /// [`ChatSession::send`], streaming: the answer's text goes to `deltas`
    /// as the model writes it (never a `TOOL_CALL` line or a `<think>`
    /// block; see `porfiry_skills::session::driver` for what a tool round
    /// may show). The channel is bounded; the turn waits while it is full.
    /// A dropped receiver only stops the sending; the turn completes.
    pub async fn send_streaming(
        &mut self,
        text: &str,
        deltas: Sender<String>,
    ) -> Result<Reply, SendError> {
        check_message(text)?;
        Ok(self.inner.send_streaming(text, deltas).await?)
    }

    /// Replaces the history (an API client that resent an edited
    /// conversation); toolset activation stays.
    pub fn replace_history(&mut self, history: Vec<ChatMessage>) {
        self.inner.session_mut().replace_history(history);
    }

    /// Toolsets active now (their idle deadline has not passed), in name order.
    pub fn active_toolsets(&self) -> Vec<String> {
        let now = self.clock.now().unix_ms();
        let activation = self.inner.session().activation();
        activation
            .active()
            .filter(|set| activation.deadline(set).is_some_and(|d| now <= d))
            .map(str::to_owned)
            .collect()
    }

    /// The history as the model sees it (enable/disable calls never in it).
    pub fn history(&self) -> &[ChatMessage] {
        self.inner.session().history()
    }

    /// The underlying loop session.
    pub fn loop_session(&self) -> &porfiry_skills::Session {
        self.inner.session()
    }

    /// The model.
    pub fn llm(&self) -> &Arc<dyn Llm> {
        self.inner.llm()
    }
}

/// Refuses text the loop should never see.
pub fn check_message(text: &str) -> Result<(), SendError> {
    if text.trim().is_empty() {
        return Err(SendError::Empty);
    }
    // Counting stops one past the limit: a huge paste costs no more than that.
    let chars = text.chars().take(MAX_USER_MESSAGE_CHARS + 1).count();
    if chars > MAX_USER_MESSAGE_CHARS {
        return Err(SendError::TooLong {
            chars: text.chars().count(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use futures::StreamExt;
    use porfiry_skills::{BoxFuture, Completion, ModelRequest};

    use super::*;
    use crate::chat::{ChatConfig, ChatEngine, ManualClock, SystemClock};
    use crate::llm::LlmTarget;

    /// Answers a tool call, then the answer.
    struct TwoRounds;

    impl Llm for TwoRounds {
        fn complete<'a>(
            &'a self,
            request: &'a ModelRequest,
        ) -> BoxFuture<'a, Result<Completion, LlmError>> {
            let text = if request.messages.len() == 1 {
                "TOOL_CALL: media_search|matrix"
            } else {
                "<think>found it</think>The Matrix (1999)."
            };
            Box::pin(async move { Ok(Completion::text(text)) })
        }
    }

    #[tokio::test]
    async fn send_streaming_sends_only_the_answer_and_refuses_empty_text() {
        let config = ChatConfig::new(LlmTarget::new("http://unused/v1", "m"));
        let engine = ChatEngine::with_llm(&config, Arc::new(TwoRounds))
            .unwrap()
            .with_clock(Arc::new(ManualClock::new(SystemClock::utc().now())));
        let mut session = engine.session();
        let (tx, rx) = futures::channel::mpsc::channel(4);
        let (reply, pieces) = futures::join!(
            session.send_streaming("the matrix?", tx),
            rx.collect::<Vec<_>>()
        );
        assert_eq!(reply.unwrap().text, "The Matrix (1999).");
        assert_eq!(pieces.concat(), "The Matrix (1999).");
        let (tx, _rx) = futures::channel::mpsc::channel(4);
        assert_eq!(
            session.send_streaming("  ", tx).await,
            Err(SendError::Empty)
        );
        assert_eq!(session.active_toolsets(), ["media"]);
    }

    /// A friend's model (offload): every answer names the friend.
    struct FromFriend;

    impl Llm for FromFriend {
        fn complete<'a>(
            &'a self,
            _request: &'a ModelRequest,
        ) -> BoxFuture<'a, Result<Completion, LlmError>> {
            Box::pin(async move {
                Ok(Completion {
                    served_by: Some("12D3KooWanna".into()),
                    ..Completion::text("Hello from anna's server.")
                })
            })
        }
    }

    #[tokio::test]
    async fn a_friends_answer_names_the_friend_plain_and_streamed() {
        let config = ChatConfig::new(LlmTarget::new("http://unused/v1", "m"));
        let engine = ChatEngine::with_llm(&config, Arc::new(FromFriend)).unwrap();
        let mut session = engine.session();
        let reply = session.send("hi").await.unwrap();
        assert_eq!(reply.served_by.as_deref(), Some("12D3KooWanna"));
        let (tx, rx) = futures::channel::mpsc::channel(4);
        let (reply, _) =
            futures::join!(session.send_streaming("again", tx), rx.collect::<Vec<_>>());
        assert_eq!(reply.unwrap().served_by.as_deref(), Some("12D3KooWanna"));
        // The node's own model names no one.
        let own = ChatEngine::with_llm(&config, Arc::new(TwoRounds)).unwrap();
        let reply = own.session().send("the matrix?").await.unwrap();
        assert_eq!(reply.served_by, None);
    }

    #[test]
    fn empty_and_oversized_messages_are_refused() {
        assert_eq!(check_message(" \n\t"), Err(SendError::Empty));
        assert_eq!(check_message("hi"), Ok(()));
        let at_limit = "я".repeat(MAX_USER_MESSAGE_CHARS);
        assert_eq!(check_message(&at_limit), Ok(()));
        let over = "я".repeat(MAX_USER_MESSAGE_CHARS + 2);
        assert_eq!(
            check_message(&over),
            Err(SendError::TooLong {
                chars: MAX_USER_MESSAGE_CHARS + 2
            })
        );
    }
}

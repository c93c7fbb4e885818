//! One chat session for embedding (a phone app, the terminal chat):
//! `send(text)` → the answer and the client events of that turn. The loop
//! itself is `porfiry_skills`' session and driver; this adds the checks on
//! the user's text and a view of the session's state.

use std::sync::Arc;

use porfiry_skills::{ChatMessage, Clock, Llm, LlmError, Reply, Toolbox, TraceEvent};

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

/// One conversation: its history and its active toolsets.
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
    use super::*;

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

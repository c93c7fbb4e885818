//! What a model call gives back: a whole [`Completion`], or a stream of
//! [`Delta`]s ending in `Done`, and the token counts ([`Usage`]) either way.

use std::ops::{Add, AddAssign};

use serde::{Deserialize, Serialize};

/// Token counts of one call (as the server reported them), or of a whole
/// turn when summed over its rounds (`+`, `+=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens of the prompt (system prompt and history).
    pub prompt_tokens: u64,
    /// Tokens generated.
    pub completion_tokens: u64,
}

impl Usage {
    /// Counts of one call.
    pub fn new(prompt_tokens: u64, completion_tokens: u64) -> Self {
        Self {
            prompt_tokens,
            completion_tokens,
        }
    }

    /// Prompt and completion tokens together.
    pub fn total(&self) -> u64 {
        self.prompt_tokens.saturating_add(self.completion_tokens)
    }
}

impl Add for Usage {
    type Output = Usage;

    fn add(self, other: Usage) -> Usage {
        Usage {
            prompt_tokens: self.prompt_tokens.saturating_add(other.prompt_tokens),
            completion_tokens: self
                .completion_tokens
                .saturating_add(other.completion_tokens),
        }
    }
}

impl AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        *self = *self + other;
    }
}

/// One model answer.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Completion {
    /// The answer text (thought taken out by the client when it can).
    pub text: String,
    /// Token counts, when the server reported them.
    pub usage: Option<Usage>,
    /// `stop`, `length`, … as the server reported it.
    pub finish_reason: Option<String>,
    /// The friend whose model wrote it (its peer id), when the answer came
    /// over the mesh (offload); `None` for the node's own model.
    pub served_by: Option<String>,
}

impl Completion {
    /// An answer without counts or finish reason (scripted models in tests).
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            usage: None,
            finish_reason: None,
            served_by: None,
        }
    }
}

/// A piece of a streamed answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delta {
    /// Answer text as it arrives (reasoning/thought deltas are NOT sent as Text).
    Text(String),
    /// The last item: why it stopped and the token counts, when known.
    Done {
        /// `stop`, `length`, … as the server reported it.
        finish_reason: Option<String>,
        /// Token counts, when known.
        usage: Option<Usage>,
        /// The friend whose model wrote the answer (its peer id), when it
        /// came over the mesh ([`Completion::served_by`]).
        served_by: Option<String>,
    },
}

/// Gathers a streamed answer into one [`Completion`]; `true` when the
/// stream said [`Delta::Done`] (a stream that just ends was cut short: each
/// backend decides what that means).
pub async fn gather<S>(mut stream: S) -> Result<(Completion, bool), super::LlmError>
where
    S: futures_core::Stream<Item = Result<Delta, super::LlmError>> + Unpin,
{
    use futures_util::StreamExt;
    let mut out = Completion::default();
    while let Some(delta) = stream.next().await {
        match delta? {
            Delta::Text(text) => out.text.push_str(&text),
            Delta::Done {
                finish_reason,
                usage,
                served_by,
            } => {
                out.finish_reason = finish_reason;
                out.usage = usage;
                out.served_by = served_by;
                return Ok((out, true));
            }
        }
    }
    Ok((out, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gathering_keeps_who_served_the_answer() {
        let items = vec![
            Ok(Delta::Text("Hi".into())),
            Ok(Delta::Done {
                finish_reason: Some("stop".into()),
                usage: None,
                served_by: Some("12D3KooWanna".into()),
            }),
        ];
        let (out, done) =
            futures_util::FutureExt::now_or_never(gather(futures_util::stream::iter(items)))
                .unwrap()
                .unwrap();
        assert!(done);
        assert_eq!(out.text, "Hi");
        assert_eq!(out.served_by.as_deref(), Some("12D3KooWanna"));
    }

    #[test]
    fn usage_sums_rounds_and_saturates() {
        let mut u = Usage::new(10, 2);
        u += Usage::new(5, 3);
        assert_eq!(u, Usage::new(15, 5));
        assert_eq!(u.total(), 20);
        assert_eq!(
            (Usage::new(u64::MAX, 0) + Usage::new(1, 0)).prompt_tokens,
            u64::MAX
        );
    }
}

//! A streamed answer in the tool loop's words: [`StreamPiece`]s of the HTTP client become
//! [`Delta`]s, with the same rule for a thinking model as a whole reply has
//! ([`super::reasoning`]): the thought is never sent as answer text, except when the
//! stream ended normally with no answer at all — then the server's reasoning parser
//! swallowed the answer, and the thought is sent as the answer, once, before `Done`.
//! A thought cut off by the token limit is [`LlmError::OnlyReasoning`]; a stream with
//! neither is [`LlmError::MissingContent`]. Pure: [`DeltaMapper`] takes one piece at a
//! time; [`deltas`] runs it over a [`PieceStream`].

use futures::StreamExt;
use porfiry_skills::{Delta, DeltaStream, LlmError};

use super::stream::{PieceStream, StreamPiece};

/// Maps pieces to deltas, holding back the thought until it is known whether the
/// answer needs it.
#[derive(Debug)]
pub struct DeltaMapper {
    url: String,
    /// Some answer text that is not only whitespace was sent.
    answered: bool,
    /// The thought so far (bounded by the client's reply cap).
    reasoning: String,
}

impl DeltaMapper {
    /// A mapper for a stream from `url` (named in its errors).
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            answered: false,
            reasoning: String::new(),
        }
    }

    /// The deltas (or the error) one piece gives; `Done` or an error is the last.
    pub fn piece(&mut self, piece: StreamPiece) -> Vec<Result<Delta, LlmError>> {
        match piece {
            StreamPiece::Text(text) if text.is_empty() => vec![],
            StreamPiece::Text(text) => {
                self.answered |= !text.trim().is_empty();
                vec![Ok(Delta::Text(text))]
            }
            StreamPiece::Reasoning(thought) => {
                self.reasoning.push_str(&thought);
                vec![]
            }
            StreamPiece::Done {
                finish_reason,
                usage,
            } => {
                let done = Delta::Done {
                    usage: usage.map(super::wire::Usage::counts),
                    finish_reason: finish_reason.clone(),
                    served_by: None,
                };
                if self.answered {
                    return vec![Ok(done)];
                }
                let thought = self.reasoning.trim();
                if thought.is_empty() {
                    return vec![Err(LlmError::MissingContent {
                        url: self.url.clone(),
                        finish_reason,
                    })];
                }
                if finish_reason.as_deref() == Some("length") {
                    return vec![Err(LlmError::OnlyReasoning {
                        url: self.url.clone(),
                        finish_reason,
                    })];
                }
                vec![Ok(Delta::Text(thought.to_owned())), Ok(done)]
            }
        }
    }
}

/// The deltas of a piece stream; ends after `Done` or the first error. Dropping it drops
/// `pieces` (and so the HTTP connection).
pub fn deltas(url: impl Into<String>, pieces: PieceStream) -> DeltaStream {
    let mapper = DeltaMapper::new(url);
    let stream = futures::stream::unfold(
        (pieces, mapper, std::collections::VecDeque::new(), false),
        |(mut pieces, mut mapper, mut ready, mut ended)| async move {
            loop {
                if let Some(item) = ready.pop_front() {
                    return Some((item, (pieces, mapper, ready, ended)));
                }
                if ended {
                    return None;
                }
                match pieces.next().await {
                    None => return None,
                    Some(Err(e)) => {
                        ended = true;
                        ready.push_back(Err(e));
                    }
                    Some(Ok(piece)) => {
                        let last = matches!(piece, StreamPiece::Done { .. });
                        ready.extend(mapper.piece(piece));
                        ended = last;
                    }
                }
            }
        },
    );
    Box::pin(stream)
}

#[cfg(test)]
mod tests {
    use porfiry_skills::Usage;

    use super::*;
    use crate::llm::wire;

    const URL: &str = "http://h/v1/chat/completions";

    fn text(t: &str) -> StreamPiece {
        StreamPiece::Text(t.into())
    }

    fn thought(t: &str) -> StreamPiece {
        StreamPiece::Reasoning(t.into())
    }

    fn done(finish: &str) -> StreamPiece {
        StreamPiece::Done {
            finish_reason: Some(finish.into()),
            usage: Some(wire::Usage {
                prompt_tokens: Some(4),
                completion_tokens: Some(2),
                total_tokens: Some(6),
            }),
        }
    }

    fn run(pieces: Vec<StreamPiece>) -> Vec<Result<Delta, LlmError>> {
        let stream: PieceStream = Box::pin(futures::stream::iter(pieces.into_iter().map(Ok)));
        futures::executor::block_on(deltas(URL, stream).collect())
    }

    fn done_delta(finish: &str) -> Delta {
        Delta::Done {
            finish_reason: Some(finish.into()),
            usage: Some(Usage::new(4, 2)),
            served_by: None,
        }
    }

    #[test]
    fn answer_text_passes_as_it_comes_and_the_thought_is_held_back() {
        assert_eq!(
            run(vec![
                thought("hmm"),
                text("Hel"),
                text(""),
                text("lo"),
                done("stop")
            ]),
            vec![
                Ok(Delta::Text("Hel".into())),
                Ok(Delta::Text("lo".into())),
                Ok(done_delta("stop")),
            ]
        );
    }

    #[test]
    fn a_thought_with_no_answer_becomes_the_answer_unless_cut_off() {
        assert_eq!(
            run(vec![
                thought(" TOOL_CALL: "),
                thought("x|y "),
                text(" "),
                done("stop")
            ]),
            vec![
                Ok(Delta::Text(" ".into())),
                Ok(Delta::Text("TOOL_CALL: x|y".into())),
                Ok(done_delta("stop")),
            ]
        );
        let out = run(vec![thought("still"), done("length")]);
        assert!(
            matches!(out.as_slice(), [Err(LlmError::OnlyReasoning { .. })]),
            "{out:?}"
        );
    }

    #[test]
    fn nothing_at_all_is_missing_content() {
        let out = run(vec![done("stop")]);
        assert!(
            matches!(out.as_slice(), [Err(LlmError::MissingContent { finish_reason: Some(f), .. })] if f == "stop"),
            "{out:?}"
        );
    }

    #[test]
    fn an_error_ends_the_deltas_and_nothing_follows_done() {
        let items = vec![
            Ok(text("a")),
            Err(LlmError::Other("broke".into())),
            Ok(text("never")),
        ];
        let stream: PieceStream = Box::pin(futures::stream::iter(items));
        let out: Vec<_> = futures::executor::block_on(deltas(URL, stream).collect());
        assert_eq!(
            out,
            vec![
                Ok(Delta::Text("a".into())),
                Err(LlmError::Other("broke".into()))
            ]
        );
        assert_eq!(run(vec![text("a"), done("stop"), text("late")]).len(), 2);
    }
}

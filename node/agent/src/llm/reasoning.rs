//! What counts as the answer when a model also thinks aloud.
//!
//! Thinking models reach us in three shapes: the server splits the thought into a
//! `reasoning_content` (llama.cpp, vLLM, LM Studio) or `reasoning` (Ollama) field; or the
//! thought stays in `content` wrapped in `<think>…</think>`; or the chat template already
//! opened `<think>` in the prompt, so `content` holds `thought…</think>answer`. In every
//! shape the answer is the text after the thought, and the thought is kept apart so that a
//! `TOOL_CALL:` the model only considered is never executed.
//!
//! When there is no text after the thought: a reply cut off by the token limit
//! (`finish_reason: "length"`) has no answer at all ([`Answer::OnlyReasoning`]); a reply
//! that ended normally had its answer swallowed by the server's reasoning parser (a model
//! that never closed its `<think>`), so the reasoning itself is taken as the answer.

/// Tag that opens a thought inside `content`.
pub const THINK_OPEN: &str = "<think>";
/// Tag that closes a thought inside `content`.
pub const THINK_CLOSE: &str = "</think>";

/// The outcome of separating thought from answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// The answer text (trimmed), and the thought if there was one.
    Text {
        /// The answer, trimmed.
        text: String,
        /// The thought before it, if the model sent one.
        reasoning: Option<String>,
    },
    /// Only a thought, cut off before any answer.
    OnlyReasoning,
    /// Neither answer nor thought.
    Nothing,
}

/// Separates a `<think>` block from the rest of `content`: `(thought, rest)`.
pub fn split_think(content: &str) -> (Option<&str>, &str) {
    let start = content.trim_start();
    if let Some(close) = start.find(THINK_CLOSE) {
        let before = &start[..close];
        // A `<think>` after other text is not a leading thought: leave content whole.
        if before.contains(THINK_OPEN) && !before.starts_with(THINK_OPEN) {
            return (None, content);
        }
        let thought = before.strip_prefix(THINK_OPEN).unwrap_or(before);
        return (Some(thought.trim()), &start[close + THINK_CLOSE.len()..]);
    }
    match start.strip_prefix(THINK_OPEN) {
        Some(unclosed) => (Some(unclosed.trim()), ""),
        None => (None, content),
    }
}

/// The answer from a choice's `content`, reasoning field and `finish_reason`.
pub fn answer(
    content: Option<&str>,
    reasoning_field: Option<&str>,
    finish_reason: Option<&str>,
) -> Answer {
    let (think, rest) = content.map_or((None, ""), split_think);
    let reasoning = [reasoning_field.map(str::trim), think]
        .into_iter()
        .flatten()
        .filter(|r| !r.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n");
    let reasoning = (!reasoning.is_empty()).then_some(reasoning);
    let text = rest.trim();
    if !text.is_empty() {
        return Answer::Text {
            text: text.to_owned(),
            reasoning,
        };
    }
    match reasoning {
        None => Answer::Nothing,
        Some(_) if finish_reason == Some("length") => Answer::OnlyReasoning,
        Some(r) => Answer::Text {
            text: r.clone(),
            reasoning: Some(r),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(t: &str, r: Option<&str>) -> Answer {
        Answer::Text {
            text: t.into(),
            reasoning: r.map(Into::into),
        }
    }

    #[test]
    fn plain_content_is_the_answer_trimmed() {
        assert_eq!(
            answer(Some("\n hi \n"), None, Some("stop")),
            text("hi", None)
        );
    }

    #[test]
    fn reasoning_field_is_kept_apart_from_content() {
        assert_eq!(
            answer(Some("42"), Some(" thinking "), Some("stop")),
            text("42", Some("thinking"))
        );
    }

    #[test]
    fn think_block_in_content_is_split_off() {
        assert_eq!(
            answer(Some("<think>TOOL_CALL: x|y?</think>\n\nanswer"), None, None),
            text("answer", Some("TOOL_CALL: x|y?"))
        );
    }

    #[test]
    fn template_opened_think_leaves_only_the_close_tag() {
        assert_eq!(
            answer(Some("hmm, so…\n</think>\nok"), None, Some("stop")),
            text("ok", Some("hmm, so…"))
        );
    }

    #[test]
    fn later_think_tags_are_not_a_leading_thought() {
        let c = "Use <think> and </think> tags.";
        assert_eq!(split_think(c), (None, c));
        assert_eq!(answer(Some(c), None, None), text(c, None));
    }

    #[test]
    fn thought_cut_off_by_length_has_no_answer() {
        assert_eq!(
            answer(Some("<think>long"), None, Some("length")),
            Answer::OnlyReasoning
        );
        assert_eq!(
            answer(Some(""), Some("long"), Some("length")),
            Answer::OnlyReasoning
        );
        assert_eq!(
            answer(None, Some("long"), Some("length")),
            Answer::OnlyReasoning
        );
    }

    #[test]
    fn reasoning_only_that_ended_normally_is_taken_as_the_answer() {
        assert_eq!(
            answer(None, Some("TOOL_CALL: media_search|x"), Some("stop")),
            text(
                "TOOL_CALL: media_search|x",
                Some("TOOL_CALL: media_search|x")
            )
        );
        assert_eq!(answer(Some("  "), Some("r"), None), text("r", Some("r")));
    }

    #[test]
    fn nothing_at_all_is_nothing() {
        assert_eq!(answer(None, None, Some("stop")), Answer::Nothing);
        assert_eq!(answer(Some(" "), Some(" "), None), Answer::Nothing);
        assert_eq!(answer(Some("<think></think>"), None, None), Answer::Nothing);
    }
}

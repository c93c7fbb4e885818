//! One event of a streamed chat completion, read tolerantly: a `chat.completion.chunk`
//! (answer delta, thought delta, finish reason, usage), the `[DONE]` marker, or an error
//! the server sent inside the stream. Pure.
//!
//! Accepted shapes, as the four supported servers send them: `delta.content` as a string,
//! `null` or text parts; the thought in `delta.reasoning_content` (llama.cpp, vLLM, LM
//! Studio) or `delta.reasoning` (Ollama); `usage` on a last chunk with empty `choices`, or
//! `null` on every chunk (vLLM); the first chunk with only a `role`; extra fields anywhere.
//! Only the first choice (index 0) is read: the client never asks for more.

use porfiry_skills::llm::{LlmError, snippet};
use serde::Deserialize;

use super::sse::SseEvent;
use super::wire::{Content, RawChoice, Usage, error_text};

/// What one event says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChunkEvent {
    /// `data: [DONE]`: the server finished.
    Done,
    /// A chunk; every part may be absent.
    Chunk(StreamChunk),
}

/// The parts of one chunk the client uses: the same parts as a whole
/// reply's first choice, each absent when the chunk does not carry it.
pub type StreamChunk = RawChoice;

#[derive(Deserialize)]
struct ChunkJson {
    #[serde(default)]
    choices: Option<Vec<ChoiceJson>>,
    #[serde(default)]
    usage: Option<Usage>,
    #[serde(default)]
    error: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct ChoiceJson {
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    delta: Option<DeltaJson>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct DeltaJson {
    #[serde(default)]
    content: Option<Content>,
    #[serde(default)]
    reasoning_content: Option<String>,
    #[serde(default)]
    reasoning: Option<String>,
}

/// Reads one event of the stream from `url`. An error object (or an `event: error`) is
/// the server's failure, reported as [`LlmError::Status`] with status 200 and the
/// server's message, exactly as for an error body of a whole reply.
pub fn parse_event(url: &str, event: &SseEvent) -> Result<ChunkEvent, LlmError> {
    let data = event.data.trim();
    if data == "[DONE]" {
        return Ok(ChunkEvent::Done);
    }
    let server_error = |message: String| LlmError::Status {
        url: url.to_owned(),
        status: 200,
        snippet: snippet(message.as_bytes()),
    };
    let value: Result<serde_json::Value, _> = serde_json::from_str(data);
    if event.event == "error" {
        return Err(server_error(match &value {
            Ok(v) => error_text(v.get("error").unwrap_or(v)),
            Err(_) => data.to_owned(),
        }));
    }
    let bad = |detail: String| LlmError::BadJson {
        url: url.to_owned(),
        detail,
        snippet: snippet(data.as_bytes()),
    };
    let value = value.map_err(|e| bad(format!("a stream event is not JSON: {e}")))?;
    if !value.is_object() {
        return Err(bad("a stream event is not a JSON object".to_owned()));
    }
    let chunk: ChunkJson = serde_json::from_value(value)
        .map_err(|e| bad(format!("unexpected stream chunk shape: {e}")))?;
    if let Some(err) = chunk.error.filter(|e| !e.is_null()) {
        return Err(server_error(error_text(&err)));
    }
    let first = chunk
        .choices
        .unwrap_or_default()
        .into_iter()
        .find(|c| c.index.unwrap_or(0) == 0);
    let mut out = StreamChunk {
        usage: chunk.usage,
        ..StreamChunk::default()
    };
    if let Some(choice) = first {
        out.finish_reason = choice.finish_reason;
        if let Some(delta) = choice.delta {
            out.content = delta.content.map(Content::into_text);
            out.reasoning = delta.reasoning_content.or(delta.reasoning);
        }
    }
    Ok(ChunkEvent::Chunk(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const URL: &str = "http://h/v1/chat/completions";

    fn data(v: serde_json::Value) -> Result<ChunkEvent, LlmError> {
        parse_event(
            URL,
            &SseEvent {
                event: String::new(),
                data: v.to_string(),
            },
        )
    }

    fn chunk(v: serde_json::Value) -> StreamChunk {
        match data(v).unwrap() {
            ChunkEvent::Chunk(c) => c,
            ChunkEvent::Done => panic!("done"),
        }
    }

    #[test]
    fn done_marker() {
        let done = |d: &str| {
            parse_event(
                URL,
                &SseEvent {
                    event: String::new(),
                    data: d.into(),
                },
            )
        };
        assert_eq!(done("[DONE]").unwrap(), ChunkEvent::Done);
        assert_eq!(done(" [DONE] ").unwrap(), ChunkEvent::Done);
    }

    #[test]
    fn openai_chunks_with_role_content_finish_and_usage() {
        let c = chunk(
            json!({"id": "x", "object": "chat.completion.chunk", "choices": [
            {"index": 0, "delta": {"role": "assistant", "content": ""}, "logprobs": null, "finish_reason": null}],
            "usage": null}),
        );
        assert_eq!(c.content.as_deref(), Some(""));
        assert_eq!((c.reasoning, c.finish_reason, c.usage), (None, None, None));
        let c = chunk(json!({"choices": [{"index": 0, "delta": {"content": "Hel"}}]}));
        assert_eq!(c.content.as_deref(), Some("Hel"));
        let c = chunk(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}));
        assert_eq!(
            (c.content, c.finish_reason.as_deref()),
            (None, Some("stop"))
        );
        let c = chunk(
            json!({"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}),
        );
        assert_eq!(c.usage.and_then(|u| u.total_tokens), Some(5));
        assert_eq!(c.content, None);
    }

    #[test]
    fn thought_deltas_are_kept_apart() {
        let c =
            chunk(json!({"choices": [{"delta": {"content": null, "reasoning_content": "hmm"}}]}));
        assert_eq!((c.content, c.reasoning.as_deref()), (None, Some("hmm")));
        let c = chunk(json!({"choices": [{"delta": {"reasoning": "ollama"}}]}));
        assert_eq!(c.reasoning.as_deref(), Some("ollama"));
    }

    #[test]
    fn content_parts_are_joined_and_other_choices_skipped() {
        let c = chunk(json!({"choices": [
            {"index": 1, "delta": {"content": "other"}},
            {"index": 0, "delta": {"content": [{"type": "text", "text": "a"}, {"text": "b"}]}}]}));
        assert_eq!(c.content.as_deref(), Some("ab"));
    }

    #[test]
    fn error_inside_the_stream_is_the_servers_message() {
        let e = data(json!({"error": {"message": "model crashed", "type": "server_error"}}))
            .unwrap_err();
        assert!(
            matches!(&e, LlmError::Status { status: 200, snippet, .. } if snippet == "model crashed"),
            "{e:?}"
        );
        assert!(e.to_string().contains("model crashed"), "{e}");
        let named = |d: &str| {
            parse_event(
                URL,
                &SseEvent {
                    event: "error".into(),
                    data: d.into(),
                },
            )
            .unwrap_err()
        };
        assert!(
            matches!(&named(r#"{"message":"oom"}"#), LlmError::Status { snippet, .. } if snippet == "oom")
        );
        assert!(
            matches!(&named(r#"{"error":{"message":"x"}}"#), LlmError::Status { snippet, .. } if snippet == "x")
        );
        assert!(
            matches!(&named("plain words"), LlmError::Status { snippet, .. } if snippet == "plain words")
        );
        // `"error": null` is no error.
        assert_eq!(
            chunk(json!({"error": null, "choices": []})),
            StreamChunk::default()
        );
    }

    #[test]
    fn garbage_events_are_bad_json_with_a_reason() {
        let bad = |d: &str| {
            parse_event(
                URL,
                &SseEvent {
                    event: String::new(),
                    data: d.into(),
                },
            )
            .unwrap_err()
        };
        assert!(
            matches!(&bad("{oops"), LlmError::BadJson { detail, .. } if detail.contains("not JSON"))
        );
        assert!(
            matches!(&bad("[1]"), LlmError::BadJson { detail, .. } if detail.contains("object"))
        );
        assert!(
            matches!(&bad(r#"{"choices": 5}"#), LlmError::BadJson { detail, .. } if detail.contains("shape"))
        );
        assert!(matches!(
            &bad(r#"{"choices": [{"delta": {"content": 5}}]}"#),
            LlmError::BadJson { .. }
        ));
    }
}

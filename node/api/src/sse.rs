//! Server-sent-event framing of a streamed completion, pure and byte-exact:
//!
//! ```text
//! data: {chunk with delta.role = "assistant"}\n\n
//! data: {chunk with delta.content}\n\n          (one per text delta)
//! data: {final chunk: empty delta + extension, finish_reason}\n\n
//! data: {usage chunk: no choices, usage}\n\n    (only with include_usage)
//! data: [DONE]\n\n
//! ```
//!
//! `: keep-alive\n\n` comment lines go out while the model is slow; an error
//! after the first byte is `data: {"error":…}\n\n` then `data: [DONE]\n\n`.

use axum::body::Bytes;
use serde::Serialize;

use super::errors::ApiError;
use super::wire::{
    ChatChunk, ChunkChoice, ChunkDelta, MODEL_ID, PorfiryExtension, WireEvent, WireUsage,
};
use porfiry_agent::chat::ClientEvent;

/// The stream's last event.
pub const DONE: &[u8] = b"data: [DONE]\n\n";

/// A comment line that keeps an idle stream open; clients ignore it.
pub const KEEPALIVE: &[u8] = b": keep-alive\n\n";

/// `data: <json>\n\n`.
pub fn data_event<T: Serialize>(value: &T) -> Bytes {
    let mut out = b"data: ".to_vec();
    // Serializing these plain structs cannot fail; an empty object is still valid SSE.
    if serde_json::to_writer(&mut out, value).is_err() {
        out.truncate(6);
        out.extend_from_slice(b"{}");
    }
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

/// Frames the chunks of one streamed completion.
#[derive(Debug, Clone)]
pub struct ChunkFramer {
    id: String,
    created: u64,
    include_usage: bool,
}

impl ChunkFramer {
    /// A framer for completion `id`, created at `created` (unix seconds).
    pub fn new(id: impl Into<String>, created: u64, include_usage: bool) -> Self {
        Self {
            id: id.into(),
            created,
            include_usage,
        }
    }

    fn chunk(&self, delta: ChunkDelta, finish_reason: Option<String>) -> ChatChunk {
        ChatChunk {
            id: self.id.clone(),
            object: "chat.completion.chunk",
            created: self.created,
            model: MODEL_ID,
            choices: vec![ChunkChoice {
                index: 0,
                delta,
                finish_reason,
            }],
            usage: None,
        }
    }

    /// The first event: the role, no text yet.
    pub fn start(&self) -> Bytes {
        data_event(&self.chunk(
            ChunkDelta {
                role: Some("assistant"),
                content: Some(String::new()),
                porfiry: None,
            },
            None,
        ))
    }

    /// One text delta.
    pub fn text(&self, text: &str) -> Bytes {
        data_event(&self.chunk(
            ChunkDelta {
                content: Some(text.to_owned()),
                ..ChunkDelta::default()
            },
            None,
        ))
    }

    /// A client event while the turn runs: a chunk whose delta holds only
    /// the `porfiry` extension with that one event (clients that know no
    /// extension see an empty delta and skip it).
    pub fn event(&self, event: &ClientEvent) -> Bytes {
        data_event(&self.chunk(
            ChunkDelta {
                porfiry: Some(PorfiryExtension {
                    events: vec![WireEvent::from(event)],
                    tools: Vec::new(),
                    via: None,
                }),
                ..ChunkDelta::default()
            },
            None,
        ))
    }

    /// The end of a completed turn: the final chunk (with the extension and
    /// `finish_reason`), the usage chunk when asked for, and `[DONE]`.
    pub fn finish(
        &self,
        finish_reason: &str,
        extension: PorfiryExtension,
        usage: Option<WireUsage>,
    ) -> Vec<Bytes> {
        let mut out = vec![data_event(&self.chunk(
            ChunkDelta {
                porfiry: Some(extension),
                ..ChunkDelta::default()
            },
            Some(finish_reason.to_owned()),
        ))];
        if self.include_usage {
            out.push(data_event(&ChatChunk {
                id: self.id.clone(),
                object: "chat.completion.chunk",
                created: self.created,
                model: MODEL_ID,
                choices: Vec::new(),
                usage: Some(usage.unwrap_or_default()),
            }));
        }
        out.push(Bytes::from_static(DONE));
        out
    }

    /// The end of a failed turn after the first byte: the error object, then `[DONE]`.
    pub fn error(&self, error: &ApiError) -> Vec<Bytes> {
        vec![data_event(&error.body()), Bytes::from_static(DONE)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::ToolRecord;

    fn joined(parts: &[Bytes]) -> String {
        parts
            .iter()
            .map(|b| std::str::from_utf8(b).unwrap())
            .collect()
    }

    #[test]
    fn a_streamed_completion_is_framed_byte_for_byte() {
        let f = ChunkFramer::new("chatcmpl-x", 9, true);
        let mut all = vec![f.start(), f.text("Hel"), f.text("lo\n")];
        all.extend(f.finish(
            "stop",
            PorfiryExtension {
                events: vec![],
                tools: vec![ToolRecord {
                    name: "media_search".into(),
                    ok: true,
                }],
                via: None,
            },
            Some(WireUsage::new(10, 2)),
        ));
        let head = r#"{"id":"chatcmpl-x","object":"chat.completion.chunk","created":9,"model":"porfiry","choices":"#;
        let expected = format!(
            "data: {head}[{{\"index\":0,\"delta\":{{\"role\":\"assistant\",\"content\":\"\"}},\"finish_reason\":null}}]}}\n\n\
             data: {head}[{{\"index\":0,\"delta\":{{\"content\":\"Hel\"}},\"finish_reason\":null}}]}}\n\n\
             data: {head}[{{\"index\":0,\"delta\":{{\"content\":\"lo\\n\"}},\"finish_reason\":null}}]}}\n\n\
             data: {head}[{{\"index\":0,\"delta\":{{\"porfiry\":{{\"events\":[],\"tools\":[{{\"name\":\"media_search\",\"ok\":true}}]}}}},\"finish_reason\":\"stop\"}}]}}\n\n\
             data: {head}[],\"usage\":{{\"prompt_tokens\":10,\"completion_tokens\":2,\"total_tokens\":12}}}}\n\n\
             data: [DONE]\n\n"
        );
        assert_eq!(joined(&all), expected);
    }

    #[test]
    fn an_event_mid_turn_is_a_chunk_with_only_the_extension() {
        let f = ChunkFramer::new("c", 1, false);
        let chunk = f.event(&ClientEvent::ShowText {
            text: "Searching…".into(),
        });
        assert_eq!(
            std::str::from_utf8(&chunk).unwrap(),
            "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"porfiry\",\
             \"choices\":[{\"index\":0,\"delta\":{\"porfiry\":{\"events\":[{\"type\":\"show_text\",\
             \"text\":\"Searching…\"}],\"tools\":[]}},\"finish_reason\":null}]}\n\n"
        );
    }

    #[test]
    fn without_include_usage_there_is_no_usage_chunk() {
        let f = ChunkFramer::new("c", 1, false);
        let end = joined(&f.finish(
            "stop",
            PorfiryExtension::default(),
            Some(WireUsage::new(1, 1)),
        ));
        assert!(!end.contains("usage"), "{end}");
        assert!(
            end.ends_with("\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"),
            "{end}"
        );
    }

    #[test]
    fn an_error_mid_stream_is_an_error_event_then_done() {
        let f = ChunkFramer::new("c", 1, false);
        assert_eq!(
            joined(&f.error(&ApiError::Upstream("connection reset".into()))),
            "data: {\"error\":{\"message\":\"the model failed: connection reset\",\
             \"type\":\"server_error\",\"code\":\"upstream_model_error\"}}\n\n\
             data: [DONE]\n\n"
        );
    }

    #[test]
    fn keepalive_is_a_comment_line() {
        assert_eq!(KEEPALIVE, b": keep-alive\n\n");
        assert!(KEEPALIVE.starts_with(b":"));
    }
}

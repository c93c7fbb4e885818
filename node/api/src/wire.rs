//! The OpenAI wire types of `/v1/chat/completions` and `/v1/models`, as chat
//! clients (Open WebUI, LibreChat, the `openai` SDKs) send and read them.
//!
//! Requests: `messages` whose `content` is a string or an array of parts
//! (text parts only), `stream`, `stream_options.include_usage`, `user`; the
//! sampling fields clients send (`temperature`, `top_p`, …) are accepted and
//! ignored — the node's model settings apply — except the answer's budget:
//! `max_tokens` (or `max_completion_tokens`) caps each model call of the
//! turn, within the node's own limit. Unknown fields are ignored.
//!
//! Responses carry one extension, on the assistant message (and on the final
//! stream chunk's delta): `"porfiry": {"events": [...], "tools": [...]}` —
//! the `show_text` and action events of the turn's tools in order, and each
//! tool call with whether it succeeded. Clients that do not know it ignore
//! it.

use serde::{Deserialize, Serialize};

use porfiry_agent::chat::ClientEvent;

/// The model id the node's agent is listed under.
pub const MODEL_ID: &str = "porfiry";

/// `POST /v1/chat/completions` as clients send it.
#[derive(Debug, Clone, Deserialize)]
pub struct ChatRequest {
    /// The model asked for; any value is answered by the node's agent.
    #[serde(default)]
    pub model: Option<String>,
    /// The whole conversation, oldest first.
    pub messages: Vec<WireMessage>,
    /// Answer as server-sent events.
    #[serde(default)]
    pub stream: bool,
    /// Streaming options.
    #[serde(default)]
    pub stream_options: Option<StreamOptions>,
    /// The client's id for the end user: picks the session.
    #[serde(default)]
    pub user: Option<String>,
    /// Choices asked for; only 1 is served.
    #[serde(default)]
    pub n: Option<u32>,
    /// The most tokens each model reply of the turn may have (capped by the
    /// node's reply budget).
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// OpenAI's newer name for `max_tokens`; the smaller wins when both come.
    #[serde(default)]
    pub max_completion_tokens: Option<u32>,
}

impl ChatRequest {
    /// The client's budget for each reply, if it sent one.
    pub fn reply_budget(&self) -> Option<u32> {
        porfiry_skills::llm::budgets::smaller(self.max_tokens, self.max_completion_tokens)
    }
}

/// `stream_options`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct StreamOptions {
    /// Send a last chunk with the token counts.
    #[serde(default)]
    pub include_usage: bool,
}

/// One message of the request.
#[derive(Debug, Clone, Deserialize)]
pub struct WireMessage {
    /// `system`, `developer`, `user` or `assistant` (others are refused).
    pub role: String,
    /// A string, an array of parts, or null (an assistant message with tool calls).
    #[serde(default)]
    pub content: Option<Content>,
}

/// Message content: a string or an array of parts.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Content {
    /// Plain text.
    Text(String),
    /// Parts; only `{"type":"text","text":…}` ones are understood.
    Parts(Vec<ContentPart>),
}

/// One part of an array content.
#[derive(Debug, Clone, Deserialize)]
pub struct ContentPart {
    /// `text`, `image_url`, …
    #[serde(rename = "type")]
    pub kind: String,
    /// The text of a `text` part.
    #[serde(default)]
    pub text: Option<String>,
}

impl Content {
    /// The text, text parts joined by newlines; a non-text part is an error
    /// naming its type (the agent reads text only).
    pub fn text(&self) -> Result<String, String> {
        match self {
            Content::Text(text) => Ok(text.clone()),
            Content::Parts(parts) => {
                let mut texts = Vec::with_capacity(parts.len());
                for part in parts {
                    match (part.kind.as_str(), &part.text) {
                        ("text", Some(text)) => texts.push(text.as_str()),
                        ("text", None) => return Err("a text part has no `text`".to_owned()),
                        (other, _) => {
                            return Err(format!(
                                "content parts of type `{other}` are not supported; send text"
                            ));
                        }
                    }
                }
                Ok(texts.join("\n"))
            }
        }
    }
}

/// Token counts, as OpenAI reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct WireUsage {
    /// Prompt tokens over the turn's model calls.
    pub prompt_tokens: u64,
    /// Completion tokens over the turn's model calls.
    pub completion_tokens: u64,
    /// Their sum.
    pub total_tokens: u64,
}

impl WireUsage {
    /// Counts from the prompt and completion tokens.
    pub fn new(prompt_tokens: u64, completion_tokens: u64) -> Self {
        Self {
            prompt_tokens,
            completion_tokens,
            total_tokens: prompt_tokens.saturating_add(completion_tokens),
        }
    }
}

/// The extension on the assistant message: what the turn's tools did.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct PorfiryExtension {
    /// `show_text` and action events, in the order the tools emitted them.
    pub events: Vec<WireEvent>,
    /// Each tool call of the turn, in order, with whether it succeeded.
    pub tools: Vec<ToolRecord>,
    /// Whose model wrote the answer, when a friend's did (offload); absent
    /// for the node's own model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<WireVia>,
}

/// `porfiry.via`: the friend whose model wrote the answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WireVia {
    /// Its peer id.
    pub peer: String,
    /// What this node calls it, else its peer id shortened
    /// ([`WireVia::short_peer`]).
    pub name: String,
}

impl WireVia {
    /// Characters of a peer id that stand for a friend this node has not
    /// named (as the family page shortens them).
    pub const SHORT_PEER_CHARS: usize = 12;

    /// `peer`, named `name` (none or empty: the short peer id).
    pub fn new(peer: &str, name: Option<&str>) -> Self {
        let name = match name.map(str::trim).filter(|n| !n.is_empty()) {
            Some(n) => n.to_owned(),
            None => Self::short_peer(peer),
        };
        Self {
            peer: peer.to_owned(),
            name,
        }
    }

    /// The first [`WireVia::SHORT_PEER_CHARS`] characters of `peer` and `…`
    /// (a shorter id as it is).
    pub fn short_peer(peer: &str) -> String {
        match peer.char_indices().nth(Self::SHORT_PEER_CHARS) {
            Some((cut, _)) => format!("{}…", &peer[..cut]),
            None => peer.to_owned(),
        }
    }
}

/// One client event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum WireEvent {
    /// `{"type":"show_text","text":…}`: display this text.
    ShowText {
        /// The text.
        text: String,
    },
    /// `{"type":"action","tool":"media_play","value":"tt0133093"}`: act on it.
    Action {
        /// The tool that asked.
        tool: String,
        /// What to act on.
        value: String,
    },
}

impl From<&ClientEvent> for WireEvent {
    fn from(event: &ClientEvent) -> Self {
        match event {
            ClientEvent::ShowText { text } => WireEvent::ShowText { text: text.clone() },
            ClientEvent::Action { tool, value } => WireEvent::Action {
                tool: tool.clone(),
                value: value.clone(),
            },
        }
    }
}

/// One tool call of the turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolRecord {
    /// The tool (`media_search`).
    pub name: String,
    /// Whether it succeeded.
    pub ok: bool,
}

/// The `chat.completion` object.
#[derive(Debug, Clone, Serialize)]
pub struct ChatCompletion {
    /// `chatcmpl-…`.
    pub id: String,
    /// Always `chat.completion`.
    pub object: &'static str,
    /// Unix seconds.
    pub created: u64,
    /// [`MODEL_ID`].
    pub model: &'static str,
    /// The one choice.
    pub choices: Vec<Choice>,
    /// Token counts, when the model reported them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<WireUsage>,
}

/// The one choice of a completion.
#[derive(Debug, Clone, Serialize)]
pub struct Choice {
    /// Always 0.
    pub index: u32,
    /// The answer.
    pub message: AssistantMessage,
    /// Why the model stopped (`stop`, `length`).
    pub finish_reason: String,
}

/// The assistant's answer.
#[derive(Debug, Clone, Serialize)]
pub struct AssistantMessage {
    /// Always `assistant`.
    pub role: &'static str,
    /// The answer text.
    pub content: String,
    /// The extension: the turn's events and tool calls.
    pub porfiry: PorfiryExtension,
}

/// One `chat.completion.chunk`.
#[derive(Debug, Clone, Serialize)]
pub struct ChatChunk {
    /// The completion's id, the same in every chunk.
    pub id: String,
    /// Always `chat.completion.chunk`.
    pub object: &'static str,
    /// Unix seconds, the same in every chunk.
    pub created: u64,
    /// [`MODEL_ID`].
    pub model: &'static str,
    /// One choice, or none in the usage chunk.
    pub choices: Vec<ChunkChoice>,
    /// Only in the usage chunk.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<WireUsage>,
}

/// The choice of a chunk.
#[derive(Debug, Clone, Serialize)]
pub struct ChunkChoice {
    /// Always 0.
    pub index: u32,
    /// What is new.
    pub delta: ChunkDelta,
    /// Set on the final chunk only (`null` before).
    pub finish_reason: Option<String>,
}

/// What a chunk adds.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ChunkDelta {
    /// `assistant`, in the first chunk only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<&'static str>,
    /// Answer text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// The extension, in the final chunk only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub porfiry: Option<PorfiryExtension>,
}

/// `GET /v1/models`.
#[derive(Debug, Clone, Serialize)]
pub struct ModelList {
    /// Always `list`.
    pub object: &'static str,
    /// The one model, the node's agent.
    pub data: Vec<ModelCard>,
}

/// One model of the list.
#[derive(Debug, Clone, Serialize)]
pub struct ModelCard {
    /// [`MODEL_ID`].
    pub id: &'static str,
    /// Always `model`.
    pub object: &'static str,
    /// Unix seconds when this node's API started.
    pub created: u64,
    /// Always `porfiry`.
    pub owned_by: &'static str,
}

impl ModelList {
    /// The list with the node's agent, created at `created` (unix seconds).
    pub fn agent(created: u64) -> Self {
        Self {
            object: "list",
            data: vec![ModelCard {
                id: MODEL_ID,
                object: "model",
                created,
                owned_by: "porfiry",
            }],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_as_clients_send_them_parse() {
        let body = r#"{"model":"porfiry","stream":true,"stream_options":{"include_usage":true},
            "user":"ann","temperature":0.7,"max_tokens":100,"top_p":1,
            "messages":[{"role":"system","content":"be brief"},
                        {"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},
                        {"role":"assistant","content":null},
                        {"role":"user","content":"hi"}]}"#;
        let req: ChatRequest = serde_json::from_str(body).unwrap();
        assert!(req.stream);
        assert!(req.stream_options.unwrap().include_usage);
        assert_eq!(req.user.as_deref(), Some("ann"));
        assert_eq!(req.messages.len(), 4);
        assert_eq!(
            req.messages[1].content.as_ref().unwrap().text().unwrap(),
            "a\nb"
        );
        assert!(req.messages[2].content.is_none());
    }

    #[test]
    fn an_image_part_is_refused_by_name() {
        let c: Content =
            serde_json::from_str(r#"[{"type":"image_url","image_url":{"url":"x"}}]"#).unwrap();
        assert!(c.text().unwrap_err().contains("image_url"));
    }

    #[test]
    fn the_completion_carries_the_extension_on_the_message() {
        let completion = ChatCompletion {
            id: "chatcmpl-1".into(),
            object: "chat.completion",
            created: 7,
            model: MODEL_ID,
            choices: vec![Choice {
                index: 0,
                message: AssistantMessage {
                    role: "assistant",
                    content: "ok".into(),
                    porfiry: PorfiryExtension {
                        events: vec![
                            WireEvent::ShowText { text: "t".into() },
                            WireEvent::Action {
                                tool: "media_play".into(),
                                value: "tt1".into(),
                            },
                        ],
                        tools: vec![ToolRecord {
                            name: "media_play".into(),
                            ok: true,
                        }],
                        via: None,
                    },
                },
                finish_reason: "stop".into(),
            }],
            usage: Some(WireUsage::new(3, 4)),
        };
        assert_eq!(
            serde_json::to_string(&completion).unwrap(),
            r#"{"id":"chatcmpl-1","object":"chat.completion","created":7,"model":"porfiry","choices":[{"index":0,"message":{"role":"assistant","content":"ok","porfiry":{"events":[{"type":"show_text","text":"t"},{"type":"action","tool":"media_play","value":"tt1"}],"tools":[{"name":"media_play","ok":true}]}},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}"#
        );
    }

    #[test]
    fn a_friends_answer_names_the_friend_or_its_short_peer_id() {
        let peer = "12D3KooWD3eckifWpRn9wQpMG9R9hX3sD158z7EqHWmweQAJU5SA";
        let extension = PorfiryExtension {
            via: Some(WireVia::new(peer, Some("anna"))),
            ..PorfiryExtension::default()
        };
        assert_eq!(
            serde_json::to_string(&extension).unwrap(),
            format!(r#"{{"events":[],"tools":[],"via":{{"peer":"{peer}","name":"anna"}}}}"#)
        );
        assert_eq!(WireVia::new(peer, Some(" ")).name, "12D3KooWD3ec…");
        assert_eq!(WireVia::new(peer, None).name, "12D3KooWD3ec…");
        assert_eq!(WireVia::new("short", None).name, "short");
    }

    #[test]
    fn the_model_list_is_in_the_format_chat_uis_expect() {
        assert_eq!(
            serde_json::to_string(&ModelList::agent(5)).unwrap(),
            r#"{"object":"list","data":[{"id":"porfiry","object":"model","created":5,"owned_by":"porfiry"}]}"#
        );
    }
}

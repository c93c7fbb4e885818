//! The JSON of a chat-completion request and reply, read tolerantly.
//!
//! The reply parser accepts what the four supported servers send: extra fields anywhere,
//! `content` as a string, `null` or an array of text parts, the thought in
//! `reasoning_content` or `reasoning`, and an `{"error": …}` body sent with status 200.

use porfiry_skills::llm::{ChatMessage, LlmError, Role, snippet};
use serde::{Deserialize, Serialize};

/// The request body of `POST …/chat/completions`.
#[derive(Debug, Serialize)]
pub struct ChatRequest<'a> {
    /// The model name, as the server knows it.
    pub model: &'a str,
    /// Sampling temperature (0 or more).
    pub temperature: f64,
    /// `presence_penalty`, sent only when configured (servers differ in their
    /// defaults, and an absent field keeps each server's own).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub presence_penalty: Option<f64>,
    /// The answer's token budget, sent only when there is one (every server
    /// of the four reads `max_tokens`; `max_completion_tokens` is OpenAI's
    /// newer name, which llama.cpp and Ollama do not all read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Texts that end the answer, sent only when there are some (every
    /// server of the four reads OpenAI's `stop`; none takes more than 4).
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub stop: &'a [String],
    /// A GBNF grammar for the answer: llama.cpp's server reads `grammar`;
    /// sent only when the client is set to ([`super::LlmTarget::send_grammar`]),
    /// since another server may refuse a field it does not know.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grammar: Option<&'a str>,
    /// The system prompt, then the history.
    pub messages: Vec<WireMessage<'a>>,
    /// `false`: one whole reply; `true`: server-sent events ([`super::stream`]).
    pub stream: bool,
    /// Sent with streamed requests only: asks for the usage chunk before `[DONE]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_options: Option<StreamOptions>,
}

/// `stream_options` of a streamed request.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct StreamOptions {
    /// Ask for a last chunk with the token counts (OpenAI, vLLM, llama.cpp, Ollama).
    pub include_usage: bool,
}

/// A message as sent on the wire (borrowed, so building a request copies no text).
#[derive(Debug, Serialize)]
pub struct WireMessage<'a> {
    /// Who said it.
    pub role: Role,
    /// What was said.
    pub content: &'a str,
}

impl<'a> ChatRequest<'a> {
    /// The system prompt first, then the history in order.
    pub fn new(
        model: &'a str,
        temperature: f64,
        system: &'a str,
        history: &'a [ChatMessage],
    ) -> Self {
        let mut messages = Vec::with_capacity(history.len() + 1);
        messages.push(WireMessage {
            role: Role::System,
            content: system,
        });
        messages.extend(history.iter().map(|m| WireMessage {
            role: m.role,
            content: &m.content,
        }));
        Self {
            model,
            temperature,
            presence_penalty: None,
            max_tokens: None,
            stop: &[],
            grammar: None,
            messages,
            stream: false,
            stream_options: None,
        }
    }

    /// The same request with `presence_penalty` (none when `None`).
    pub fn with_presence_penalty(mut self, presence_penalty: Option<f64>) -> Self {
        self.presence_penalty = presence_penalty;
        self
    }

    /// The same request with the answer's budget (none when `None`).
    pub fn with_max_tokens(mut self, max_tokens: Option<u32>) -> Self {
        self.max_tokens = max_tokens;
        self
    }

    /// The same request with these stop texts and grammar (none when `None`).
    pub fn with_shape(mut self, stop: &'a [String], grammar: Option<&'a str>) -> Self {
        self.stop = stop;
        self.grammar = grammar;
        self
    }

    /// The same request, asking for server-sent events and the usage chunk.
    pub fn streaming(mut self) -> Self {
        self.stream = true;
        self.stream_options = Some(StreamOptions {
            include_usage: true,
        });
        self
    }
}

/// Token counts when the server reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub struct Usage {
    /// Tokens of the prompt (system prompt and history).
    #[serde(default)]
    pub prompt_tokens: Option<u64>,
    /// Tokens generated.
    #[serde(default)]
    pub completion_tokens: Option<u64>,
    /// Both together.
    #[serde(default)]
    pub total_tokens: Option<u64>,
}

impl Usage {
    /// The counts in the tool loop's words; a count the server left out is 0.
    pub fn counts(self) -> porfiry_skills::Usage {
        porfiry_skills::Usage::new(
            self.prompt_tokens.unwrap_or(0),
            self.completion_tokens.unwrap_or(0),
        )
    }
}

/// The parts of a reply the client uses, before thought and answer are separated.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RawChoice {
    /// The first choice's text content (text parts joined), if any.
    pub content: Option<String>,
    /// Its `reasoning_content` or `reasoning`, if any.
    pub reasoning: Option<String>,
    /// Why generation stopped (`stop`, `length`, …), if the server said.
    pub finish_reason: Option<String>,
    /// Token counts, if the server reported them.
    pub usage: Option<Usage>,
}

#[derive(Deserialize)]
struct ReplyJson {
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
    message: Option<MessageJson>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct MessageJson {
    #[serde(default)]
    content: Option<Content>,
    #[serde(default)]
    reasoning_content: Option<String>,
    #[serde(default)]
    reasoning: Option<String>,
}

/// A `content` value: a string, or an array of parts whose `text`s are joined.
#[derive(Deserialize)]
#[serde(untagged)]
pub(crate) enum Content {
    Text(String),
    Parts(Vec<Part>),
}

#[derive(Deserialize)]
pub(crate) struct Part {
    #[serde(default)]
    text: Option<String>,
}

/// Reads a 2xx reply body into its first choice.
pub fn parse_reply(url: &str, body: &[u8]) -> Result<RawChoice, LlmError> {
    let bad = |detail: String| LlmError::BadJson {
        url: url.to_owned(),
        detail,
        snippet: snippet(body),
    };
    let value: serde_json::Value =
        serde_json::from_slice(body).map_err(|e| bad(format!("not JSON: {e}")))?;
    if !value.is_object() {
        return Err(bad("expected a JSON object".to_owned()));
    }
    let reply: ReplyJson =
        serde_json::from_value(value).map_err(|e| bad(format!("unexpected shape: {e}")))?;
    let choices = match (reply.choices, reply.error) {
        (Some(c), _) if !c.is_empty() => c,
        (_, Some(err)) => {
            return Err(LlmError::Status {
                url: url.to_owned(),
                status: 200,
                snippet: snippet(error_text(&err).as_bytes()),
            });
        }
        _ => {
            return Err(LlmError::EmptyChoices {
                url: url.to_owned(),
            });
        }
    };
    let Some(first) = choices.into_iter().next() else {
        return Err(LlmError::EmptyChoices {
            url: url.to_owned(),
        });
    };
    let (content, reasoning) = match first.message {
        Some(m) => (
            m.content.map(Content::into_text),
            m.reasoning_content.or(m.reasoning),
        ),
        None => (None, None),
    };
    Ok(RawChoice {
        content,
        reasoning,
        finish_reason: first.finish_reason,
        usage: reply.usage,
    })
}

/// The message of an `{"error": …}` value: its `message` field when there is one.
pub(crate) fn error_text(err: &serde_json::Value) -> String {
    match err.get("message").and_then(|m| m.as_str()) {
        Some(m) => m.to_owned(),
        None => match err.as_str() {
            Some(s) => s.to_owned(),
            None => err.to_string(),
        },
    }
}

impl Content {
    /// The text: the string, or the parts' texts joined.
    pub(crate) fn into_text(self) -> String {
        match self {
            Content::Text(s) => s,
            Content::Parts(parts) => parts.into_iter().filter_map(|p| p.text).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const URL: &str = "http://h/v1/chat/completions";

    fn parse(v: serde_json::Value) -> Result<RawChoice, LlmError> {
        parse_reply(URL, v.to_string().as_bytes())
    }

    #[test]
    fn request_puts_the_system_prompt_first() {
        let history = [ChatMessage::user("q"), ChatMessage::assistant("a")];
        let req = ChatRequest::new("m", 0.5, "sys", &history);
        assert_eq!(
            serde_json::to_value(&req).unwrap(),
            json!({
                "model": "m", "temperature": 0.5, "stream": false,
                "messages": [
                    {"role": "system", "content": "sys"},
                    {"role": "user", "content": "q"},
                    {"role": "assistant", "content": "a"},
                ]
            })
        );
    }

    #[test]
    fn presence_penalty_is_sent_only_when_set() {
        let history = [ChatMessage::user("q")];
        let req = ChatRequest::new("m", 0.9, "sys", &history).with_presence_penalty(Some(1.5));
        let body = serde_json::to_value(&req).unwrap();
        assert_eq!(body["presence_penalty"], json!(1.5));
        assert_eq!(body["temperature"], json!(0.9));
        let req = ChatRequest::new("m", 0.9, "sys", &history).with_presence_penalty(None);
        let body = serde_json::to_value(&req).unwrap();
        assert!(body.get("presence_penalty").is_none(), "{body}");
    }

    #[test]
    fn max_tokens_is_sent_only_when_set() {
        let history = [ChatMessage::user("q")];
        let req = ChatRequest::new("m", 0.9, "sys", &history).with_max_tokens(Some(64));
        assert_eq!(serde_json::to_value(&req).unwrap()["max_tokens"], json!(64));
        let req = ChatRequest::new("m", 0.9, "sys", &history).with_max_tokens(None);
        let body = serde_json::to_value(&req).unwrap();
        assert!(body.get("max_tokens").is_none(), "{body}");
    }

    #[test]
    fn stop_and_grammar_are_sent_only_when_there_are_some() {
        let history = [ChatMessage::user("q")];
        let stop = ["TOOL_RESULT".to_owned()];
        let req =
            ChatRequest::new("m", 0.9, "sys", &history).with_shape(&stop, Some("root ::= \"a\""));
        let body = serde_json::to_value(&req).unwrap();
        assert_eq!(body["stop"], json!(["TOOL_RESULT"]));
        assert_eq!(body["grammar"], json!("root ::= \"a\""));
        let req = ChatRequest::new("m", 0.9, "sys", &history).with_shape(&[], None);
        let body = serde_json::to_value(&req).unwrap();
        assert!(
            body.get("stop").is_none() && body.get("grammar").is_none(),
            "{body}"
        );
    }

    #[test]
    fn streamed_request_asks_for_events_and_usage() {
        let history = [ChatMessage::user("q")];
        let req = ChatRequest::new("m", 0.0, "sys", &history).streaming();
        assert_eq!(
            serde_json::to_value(&req).unwrap(),
            json!({
                "model": "m", "temperature": 0.0, "stream": true,
                "stream_options": {"include_usage": true},
                "messages": [
                    {"role": "system", "content": "sys"},
                    {"role": "user", "content": "q"},
                ]
            })
        );
    }

    #[test]
    fn typical_reply_with_extra_fields() {
        let c = parse(json!({
            "id": "x", "object": "chat.completion", "system_fingerprint": "fp",
            "choices": [{"index": 0, "logprobs": null, "finish_reason": "stop",
                "message": {"role": "assistant", "content": "hello", "tool_calls": []}}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6, "extra": 1},
            "timings": {}
        }))
        .unwrap();
        assert_eq!(c.content.as_deref(), Some("hello"));
        assert_eq!(c.finish_reason.as_deref(), Some("stop"));
        assert_eq!(c.usage.unwrap().total_tokens, Some(6));
    }

    #[test]
    fn content_parts_are_joined_and_reasoning_fields_read() {
        let c = parse(json!({"choices": [{"message": {
            "content": [{"type": "text", "text": "a"}, {"type": "image"}, {"type": "text", "text": "b"}],
            "reasoning": "r"}}]}))
        .unwrap();
        assert_eq!(c.content.as_deref(), Some("ab"));
        assert_eq!(c.reasoning.as_deref(), Some("r"));
        let c =
            parse(json!({"choices": [{"message": {"content": null, "reasoning_content": "t"}}]}))
                .unwrap();
        assert_eq!((c.content, c.reasoning.as_deref()), (None, Some("t")));
    }

    #[test]
    fn missing_message_gives_empty_choice() {
        let c = parse(json!({"choices": [{"finish_reason": "length"}]})).unwrap();
        assert_eq!(c.content, None);
        assert_eq!(c.finish_reason.as_deref(), Some("length"));
    }

    #[test]
    fn empty_or_missing_choices() {
        for v in [json!({"choices": []}), json!({}), json!({"choices": null})] {
            assert!(matches!(parse(v), Err(LlmError::EmptyChoices { .. })));
        }
    }

    #[test]
    fn error_body_with_status_200_is_reported() {
        let e = parse(json!({"error": {"message": "model not loaded", "code": 500}})).unwrap_err();
        assert!(
            matches!(&e, LlmError::Status { status: 200, snippet, .. } if snippet == "model not loaded"),
            "{e:?}"
        );
        let e = parse(json!({"error": "boom"})).unwrap_err();
        assert!(
            matches!(&e, LlmError::Status { snippet, .. } if snippet == "boom"),
            "{e:?}"
        );
    }

    #[test]
    fn garbage_and_wrong_shapes_are_bad_json_with_a_reason() {
        let e = parse_reply(URL, b"<html>502 Bad Gateway</html>").unwrap_err();
        let LlmError::BadJson {
            detail, snippet, ..
        } = &e
        else {
            panic!("{e:?}")
        };
        assert!(detail.starts_with("not JSON"), "{detail}");
        assert_eq!(snippet, "<html>502 Bad Gateway</html>");
        let e = parse_reply(URL, b"").unwrap_err();
        assert!(matches!(e, LlmError::BadJson { .. }));
        let e = parse(json!([1, 2])).unwrap_err();
        assert!(matches!(&e, LlmError::BadJson { detail, .. } if detail.contains("object")));
        let e = parse(json!({"choices": "no"})).unwrap_err();
        assert!(matches!(&e, LlmError::BadJson { detail, .. } if detail.contains("shape")));
        let e = parse(json!({"choices": [{"message": {"content": 5}}]})).unwrap_err();
        assert!(matches!(e, LlmError::BadJson { .. }));
    }
}

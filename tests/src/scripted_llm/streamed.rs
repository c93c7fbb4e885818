//! Streamed replies: what the scripted server sends when a request has `"stream": true`.
//!
//! The body is server-sent events shaped like OpenAI's: a first chunk with the role,
//! the thought (`delta.reasoning_content`) and then the answer (`delta.content`) split
//! into pieces, a chunk with the `finish_reason`, a usage chunk when the request set
//! `stream_options.include_usage` (with `"usage": null` on every other chunk, as OpenAI
//! and vLLM send), then `data: [DONE]`. A [`Streamed`] reply can also stop part-way:
//! cut the connection, send an error object, or hang.
//!
//! Every body is watched: when the client drops the connection before the body ended
//! (hyper drops the body stream then), the request's number is recorded as a closed
//! stream ([`super::ScriptedLlm::closed_streams`]).

use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, header};
use axum::response::Response;
use serde_json::{Value, json};

use super::recorded::{RecordedRequest, messages};

/// How the answer is split into pieces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Chunking {
    /// Each word with the whitespace after it (`"Hello "`, `"world."`): token-like.
    Words,
    /// Pieces of this many characters (at least one).
    Chars(usize),
    /// Exactly these pieces (their concatenation is the answer).
    Pieces(Vec<String>),
}

/// How a streamed reply ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEnd {
    /// Finish chunk, usage chunk (when asked), `[DONE]`.
    Done,
    /// After this many answer pieces the connection breaks (no finish, no `[DONE]`).
    CutAfter(usize),
    /// After this many answer pieces, `data: {"error": {"message": …}}`, then the body
    /// ends (no `[DONE]`).
    ErrorAfter(usize, String),
    /// After this many answer pieces nothing more is ever sent; the body stays open.
    HangAfter(usize),
}

/// A streamed reply: the answer, how it is split, paced and ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Streamed {
    /// The answer text (the concatenation of its pieces).
    pub text: String,
    /// A thought sent before the answer as `delta.reasoning_content`, split the same
    /// way; empty: none.
    pub reasoning: String,
    /// How text and thought are split.
    pub chunking: Chunking,
    /// Wait before every piece but the first (the server's own timer, so a test never
    /// sleeps: it waits for what the client receives).
    pub every: Duration,
    /// `finish_reason` of the finish chunk.
    pub finish_reason: String,
    /// Token counts of the usage chunk; `None`: words of the request's messages and
    /// pieces sent.
    pub usage: Option<(u64, u64)>,
    /// How it ends.
    pub end: StreamEnd,
}

impl Streamed {
    /// The answer in [`Chunking::Words`], no delay, ending normally with `stop`.
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            reasoning: String::new(),
            chunking: Chunking::Words,
            every: Duration::ZERO,
            finish_reason: "stop".to_owned(),
            usage: None,
            end: StreamEnd::Done,
        }
    }

    /// The pieces `text` is sent in.
    pub fn split(&self, text: &str) -> Vec<String> {
        match &self.chunking {
            Chunking::Pieces(p) => p.clone(),
            Chunking::Chars(n) => {
                let chars: Vec<char> = text.chars().collect();
                chars
                    .chunks((*n).max(1))
                    .map(|c| c.iter().collect())
                    .collect()
            }
            Chunking::Words => {
                let mut pieces = Vec::new();
                let mut current = String::new();
                let mut in_space = false;
                for c in text.chars() {
                    if !c.is_whitespace() && in_space {
                        pieces.push(std::mem::take(&mut current));
                    }
                    in_space = c.is_whitespace();
                    current.push(c);
                }
                if !current.is_empty() {
                    pieces.push(current);
                }
                pieces
            }
        }
    }
}

/// One step of a streamed body.
enum Step {
    Send(Bytes),
    Wait(Duration),
    Cut,
    Hang,
}

/// Records, on drop, whether the body ended or the client went away first.
pub(crate) struct Watch {
    finished: bool,
    on_close: Option<Box<dyn FnOnce() + Send>>,
}

impl Watch {
    /// Calls `on_close` if dropped before [`Watch::finish`].
    pub(crate) fn new(on_close: impl FnOnce() + Send + 'static) -> Self {
        Self {
            finished: false,
            on_close: Some(Box::new(on_close)),
        }
    }

    /// The response went out whole: dropping it records nothing.
    pub(crate) fn finish(&mut self) {
        self.finished = true;
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        if !self.finished
            && let Some(f) = self.on_close.take()
        {
            f();
        }
    }
}

/// The SSE response for `reply` to `req`.
pub(crate) fn respond(reply: &Streamed, req: &RecordedRequest, watch: Watch) -> Response {
    let include_usage = req
        .body
        .pointer("/stream_options/include_usage")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let id = format!("chatcmpl-scripted-{}", req.number);
    let model = req.body.get("model").cloned().unwrap_or(Value::Null);
    let chunk = |choices: Value| {
        let mut c = json!({
            "id": id, "object": "chat.completion.chunk", "created": 0, "model": model,
            "choices": choices,
        });
        if include_usage {
            c["usage"] = Value::Null;
        }
        c
    };
    let delta = |delta: Value, finish: Value| {
        chunk(json!([{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]))
    };
    let mut steps = vec![Step::Send(event(&delta(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    )))];
    let mut sent = 0u64;
    let pace = |steps: &mut Vec<Step>, sent: &mut u64| {
        if *sent > 0 && !reply.every.is_zero() {
            steps.push(Step::Wait(reply.every));
        }
        *sent += 1;
    };
    if !reply.reasoning.is_empty() {
        for piece in reply.split(&reply.reasoning) {
            pace(&mut steps, &mut sent);
            steps.push(Step::Send(event(&delta(
                json!({"reasoning_content": piece}),
                Value::Null,
            ))));
        }
    }
    let pieces = reply.split(&reply.text);
    let stop_after = match &reply.end {
        StreamEnd::Done => usize::MAX,
        StreamEnd::CutAfter(n) | StreamEnd::ErrorAfter(n, _) | StreamEnd::HangAfter(n) => *n,
    };
    for piece in pieces.into_iter().take(stop_after) {
        pace(&mut steps, &mut sent);
        steps.push(Step::Send(event(&delta(
            json!({"content": piece}),
            Value::Null,
        ))));
    }
    match &reply.end {
        StreamEnd::Done => {
            steps.push(Step::Send(event(&delta(
                json!({}),
                json!(reply.finish_reason),
            ))));
            if include_usage {
                let (prompt, completion) = reply.usage.unwrap_or_else(|| {
                    let words = messages(&req.body)
                        .iter()
                        .map(|(_, c)| c.split_whitespace().count() as u64)
                        .sum();
                    (words, sent)
                });
                let mut usage = chunk(json!([]));
                usage["usage"] = json!({
                    "prompt_tokens": prompt, "completion_tokens": completion,
                    "total_tokens": prompt + completion,
                });
                steps.push(Step::Send(event(&usage)));
            }
            steps.push(Step::Send(Bytes::from_static(b"data: [DONE]\n\n")));
        }
        StreamEnd::CutAfter(_) => steps.push(Step::Cut),
        StreamEnd::ErrorAfter(_, message) => steps.push(Step::Send(event(&json!({
            "error": {"message": message, "type": "server_error"}
        })))),
        StreamEnd::HangAfter(_) => steps.push(Step::Hang),
    }
    sse_response(steps, watch)
}

/// These bytes as an event-stream body, one write each, then the end or a hang;
/// watched like any stream.
pub(crate) fn raw(pieces: &[Vec<u8>], then_hang: bool, watch: Watch) -> Response {
    let mut steps: Vec<Step> = pieces
        .iter()
        .map(|p| Step::Send(Bytes::from(p.clone())))
        .collect();
    if then_hang {
        steps.push(Step::Hang);
    }
    sse_response(steps, watch)
}

fn event(value: &Value) -> Bytes {
    Bytes::from(format!("data: {value}\n\n"))
}

fn sse_response(steps: Vec<Step>, watch: Watch) -> Response {
    let state = (steps.into_iter(), watch);
    let body = futures::stream::unfold(state, |(mut steps, mut watch)| async move {
        loop {
            match steps.next() {
                None => {
                    watch.finish();
                    return None;
                }
                Some(Step::Send(bytes)) => {
                    // A turn between writes, so pieces tend to leave as separate reads.
                    tokio::task::yield_now().await;
                    return Some((Ok(bytes), (steps, watch)));
                }
                Some(Step::Wait(d)) => tokio::time::sleep(d).await,
                Some(Step::Cut) => {
                    // Broken on purpose, not by the client: not a closed stream.
                    watch.finish();
                    tokio::task::yield_now().await;
                    let e = std::io::Error::other("scripted LLM: stream cut on purpose");
                    return Some((Err(e), (steps, watch)));
                }
                Some(Step::Hang) => futures::future::pending::<()>().await,
            }
        }
    });
    let mut response = Response::new(Body::from_stream(body));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

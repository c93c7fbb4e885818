//! Streamed calls: `POST …/chat/completions` with `"stream": true`, the answer read as
//! server-sent events while the model writes it ([`OpenAiClient::stream_chat`]).
//!
//! **Deadlines.** A whole-request timeout would cut a long generation that is going
//! fine, so a stream has four limits of its own ([`LlmTarget`] settings, named defaults
//! in [`super::config`]):
//! - *connect* — the TCP/TLS connect limit every call has;
//! - *first token* — from sending the request (each attempt) until the first `data:`
//!   event; keep-alive comments do not count, because they show the server is up, not
//!   that the model is producing, and a local model's first token can take a minute;
//! - *idle* — the longest gap between two `data:` events once they flow;
//! - *total* — the whole call, retries included.
//!
//! A deadline that passes is [`LlmError::Timeout`] carrying that deadline's length.
//!
//! **Retries** (the same policy and backoff as a whole reply) happen only before the
//! first byte of a 2xx body: until then nothing has been shown to anyone, and a server
//! restarting or loading a model is worth waiting for. After it, a broken connection,
//! a passed deadline or an error the server sends inside the stream ends the stream with
//! that error as its last item, never a silent end.
//!
//! **Bounds.** The answer and thought text together are capped at [`MAX_REPLY_BYTES`],
//! one event at [`super::sse::MAX_EVENT_BYTES`]; nothing else is buffered, and the total
//! deadline bounds how long a server can keep sending chunks that carry no text.
//!
//! **Cancellation.** The stream owns the HTTP response: dropping the stream drops it, and
//! an unfinished response is not returned to the connection pool but closed, so the
//! upstream server sees the connection close and can stop generating.
//!
//! A server that ignores `"stream": true` and answers with one JSON reply is accepted:
//! its answer comes as one [`StreamPiece::Text`] (and its thought as one
//! [`StreamPiece::Reasoning`]) followed by [`StreamPiece::Done`].

use std::collections::VecDeque;
use std::pin::Pin;
use std::time::Duration;

use futures::Stream;
use porfiry_skills::llm::{ChatMessage, LlmError, ModelRequest};
use reqwest::header::CONTENT_TYPE;
use tokio::time::{Instant, timeout_at};
use tracing::{debug, warn};

use super::chunk::{ChunkEvent, parse_event};
use super::client::{
    AttemptError, MAX_REPLY_BYTES, OpenAiClient, RetryCause, encode, error_chain, retry_after,
};
use super::config::LlmTarget;
use super::sse::{SseError, SseEvent, SseParser};
use super::wire::Usage;

/// One item of a streamed answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamPiece {
    /// Answer text as the server sent it (`delta.content`), untrimmed; a `<think>` block
    /// a model writes inline stays in it.
    Text(String),
    /// Thought text from the server's reasoning field, kept apart from the answer.
    Reasoning(String),
    /// The last item: why generation stopped and the token counts, when the server said.
    Done {
        /// `stop`, `length`, … from the last chunk that had one.
        finish_reason: Option<String>,
        /// From the usage chunk, when the server sent one.
        usage: Option<Usage>,
    },
}

/// The pieces of one streamed answer: text and thought as they arrive, then
/// [`StreamPiece::Done`]; or an error as the last item. Dropping it closes the
/// connection to the server.
pub type PieceStream = Pin<Box<dyn Stream<Item = Result<StreamPiece, LlmError>> + Send>>;

/// Which deadline a wait runs under (for the error it gives).
#[derive(Debug, Clone, Copy)]
enum Limit {
    FirstToken,
    Idle,
    Total,
}

/// The stream's deadlines as durations and the instant of the whole call's end.
#[derive(Debug, Clone, Copy)]
struct Deadlines {
    first_token: Duration,
    idle: Duration,
    total: Duration,
    total_at: Instant,
}

impl Deadlines {
    fn new(target: &LlmTarget, started: Instant) -> Self {
        let total = target.stream_timeout();
        Self {
            first_token: target.first_token_timeout(),
            idle: target.idle_timeout(),
            total,
            total_at: started + total,
        }
    }

    /// The earlier of `phase_at` (for `phase`) and the total deadline.
    fn pick(&self, phase_at: Instant, phase: Limit) -> (Instant, Limit) {
        if phase_at < self.total_at {
            (phase_at, phase)
        } else {
            (self.total_at, Limit::Total)
        }
    }

    fn length(&self, limit: Limit) -> Duration {
        match limit {
            Limit::FirstToken => self.first_token,
            Limit::Idle => self.idle,
            Limit::Total => self.total,
        }
    }
}

/// What an attempt that got past the first byte holds.
enum Opened {
    /// An event stream: the response and its first bytes.
    Events {
        response: reqwest::Response,
        first: Vec<u8>,
        sent_at: Instant,
    },
    /// A whole JSON reply from a server that does not stream.
    Whole(super::client::Completion),
}

impl OpenAiClient {
    /// Streams the model's answer to `system` and the history. Returns once the server
    /// has sent the first byte of its answer (after any retries); every failure after
    /// that arrives as the stream's last item. See the module doc for the deadlines.
    pub async fn stream_chat(
        &self,
        system: &str,
        messages: &[ChatMessage],
    ) -> Result<PieceStream, LlmError> {
        self.stream_chat_within(system, messages, None).await
    }

    /// Like [`stream_chat`](Self::stream_chat), the answer cut at
    /// `max_tokens` (or the model's configured one, whichever is smaller).
    pub async fn stream_chat_within(
        &self,
        system: &str,
        messages: &[ChatMessage],
        max_tokens: Option<u32>,
    ) -> Result<PieceStream, LlmError> {
        self.stream_request(&ModelRequest::new(
            system.to_owned(),
            messages.to_vec(),
            max_tokens,
        ))
        .await
    }

    /// Streams the answer to `request`: its budget, its stop texts, and its
    /// grammar when this client sends grammars ([`crate::llm::LlmTarget::send_grammar`]).
    pub async fn stream_request(&self, request: &ModelRequest) -> Result<PieceStream, LlmError> {
        let body = encode(&self.request(request).streaming())?;
        let started = Instant::now();
        let deadlines = Deadlines::new(self.target(), started);
        debug!(url = %self.url(), model = %self.target().model, messages = request.messages.len() + 1, "LLM stream request");
        let (opened, attempt) = self
            .with_retries(|| self.open(body.clone(), deadlines))
            .await?;
        Ok(match opened {
            Opened::Whole(c) => whole_reply(c),
            Opened::Events {
                response,
                first,
                sent_at,
            } => {
                let url = self.url().to_owned();
                let mut state = Events::new(url, response, deadlines, sent_at, attempt);
                state.feed(&first);
                Box::pin(futures::stream::unfold(state, |mut state| async move {
                    let item = state.next().await?;
                    Some((item, state))
                }))
            }
        })
    }

    /// One attempt up to the first byte of a 2xx body, under the first-token deadline.
    async fn open(&self, body: Vec<u8>, deadlines: Deadlines) -> Result<Opened, AttemptError> {
        let (at, limit) = deadlines.pick(Instant::now() + deadlines.first_token, Limit::FirstToken);
        match timeout_at(at, self.open_unbounded(body, Instant::now())).await {
            Ok(result) => result,
            Err(_) => Err(AttemptError::Final(LlmError::Timeout {
                url: self.url().to_owned(),
                timeout: deadlines.length(limit),
            })),
        }
    }

    async fn open_unbounded(
        &self,
        body: Vec<u8>,
        sent_at: Instant,
    ) -> Result<Opened, AttemptError> {
        let response = self
            .post(body, "text/event-stream")
            .send()
            .await
            .map_err(|e| self.classify(&e))?;
        let status = response.status().as_u16();
        if !(200..300).contains(&status) {
            let after = retry_after(&response);
            let body = self.read_body(response).await?;
            return Err(self.status_error(status, &body, after));
        }
        let is_json = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim_start().starts_with("application/json"));
        if is_json {
            let body = self.read_body(response).await?;
            return self
                .completion(&body)
                .map(Opened::Whole)
                .map_err(AttemptError::Final);
        }
        let mut response = response;
        loop {
            match response.chunk().await.map_err(|e| self.classify(&e))? {
                Some(first) if first.is_empty() => continue,
                Some(first) => {
                    return Ok(Opened::Events {
                        response,
                        first: first.to_vec(),
                        sent_at,
                    });
                }
                None => {
                    return Err(AttemptError::Retry {
                        cause: RetryCause::Transport(
                            "the server ended the stream before sending anything".to_owned(),
                        ),
                        retry_after: None,
                    });
                }
            }
        }
    }
}

/// A whole reply as pieces: its thought, its answer, done.
fn whole_reply(c: super::client::Completion) -> PieceStream {
    let mut items = Vec::with_capacity(3);
    if let Some(r) = c.reasoning {
        items.push(Ok(StreamPiece::Reasoning(r)));
    }
    items.push(Ok(StreamPiece::Text(c.text)));
    items.push(Ok(StreamPiece::Done {
        finish_reason: c.finish_reason,
        usage: c.usage,
    }));
    Box::pin(futures::stream::iter(items))
}

/// The state of an event stream being read.
struct Events {
    url: String,
    /// `None` once the stream ended: the connection is closed (or pooled) at once.
    response: Option<reqwest::Response>,
    parser: SseParser,
    /// Pieces parsed but not yet handed out; an error or `Done` is the last.
    ready: VecDeque<Result<StreamPiece, LlmError>>,
    deadlines: Deadlines,
    /// When the attempt that opened the stream started sending: the first-token clock.
    opened_at: Instant,
    /// When the last `data:` event arrived, once one has.
    last_data: Option<Instant>,
    /// Answer and thought bytes so far, against [`MAX_REPLY_BYTES`].
    text_bytes: usize,
    finish_reason: Option<String>,
    usage: Option<Usage>,
    /// The attempt that opened the stream (reported in a transport error).
    attempt: u32,
    /// `Done` or an error was queued: read nothing more.
    ended: bool,
}

impl Events {
    fn new(
        url: String,
        response: reqwest::Response,
        deadlines: Deadlines,
        opened_at: Instant,
        attempt: u32,
    ) -> Self {
        Self {
            url,
            response: Some(response),
            parser: SseParser::new(),
            ready: VecDeque::new(),
            deadlines,
            opened_at,
            last_data: None,
            text_bytes: 0,
            finish_reason: None,
            usage: None,
            attempt,
            ended: false,
        }
    }

    /// The next piece, reading more of the body when none is ready.
    async fn next(&mut self) -> Option<Result<StreamPiece, LlmError>> {
        loop {
            if let Some(item) = self.ready.pop_front() {
                if self.ready.is_empty() && self.ended {
                    // Let go of the connection as soon as the last item is handed out.
                    self.response = None;
                }
                return Some(item);
            }
            if self.ended {
                self.response = None;
                return None;
            }
            let (at, limit) = match self.last_data {
                None => self.deadlines.pick(
                    self.opened_at + self.deadlines.first_token,
                    Limit::FirstToken,
                ),
                Some(last) => self.deadlines.pick(last + self.deadlines.idle, Limit::Idle),
            };
            let response = self.response.as_mut()?;
            match timeout_at(at, response.chunk()).await {
                Err(_) => {
                    let timeout = self.deadlines.length(limit);
                    warn!(url = %self.url, ?limit, ?timeout, "LLM stream deadline passed");
                    self.fail(LlmError::Timeout {
                        url: self.url.clone(),
                        timeout,
                    });
                }
                Ok(Err(e)) => {
                    let detail = format!("the stream broke: {}", error_chain(&e));
                    self.fail(self.transport(detail));
                }
                Ok(Ok(Some(bytes))) => self.feed(&bytes),
                Ok(Ok(None)) => self.end_of_body(),
            }
        }
    }

    /// Parses the next bytes of the body into ready pieces.
    fn feed(&mut self, bytes: &[u8]) {
        match self.parser.push(bytes) {
            Ok(events) => {
                for event in events {
                    if self.ended {
                        break;
                    }
                    self.event(&event);
                }
            }
            Err(e) => self.fail(self.too_large_event(e)),
        }
    }

    /// One event: text, thought, finish reason and usage are noted; `[DONE]` ends.
    fn event(&mut self, event: &SseEvent) {
        match parse_event(&self.url, event) {
            Err(e) => self.fail(e),
            Ok(ChunkEvent::Done) => self.done(),
            Ok(ChunkEvent::Chunk(chunk)) => {
                self.last_data = Some(Instant::now());
                if chunk.finish_reason.is_some() {
                    self.finish_reason = chunk.finish_reason;
                }
                if chunk.usage.is_some() {
                    self.usage = chunk.usage;
                }
                for (text, is_answer) in [(chunk.reasoning, false), (chunk.content, true)] {
                    let Some(text) = text.filter(|t| !t.is_empty()) else {
                        continue;
                    };
                    self.text_bytes = self.text_bytes.saturating_add(text.len());
                    if self.text_bytes > MAX_REPLY_BYTES {
                        return self.fail(LlmError::TooLarge {
                            url: self.url.clone(),
                            limit: MAX_REPLY_BYTES,
                        });
                    }
                    self.ready.push_back(Ok(if is_answer {
                        StreamPiece::Text(text)
                    } else {
                        StreamPiece::Reasoning(text)
                    }));
                }
            }
        }
    }

    /// The body ended: fine after `[DONE]` (handled before) or after a finish reason
    /// (servers that omit `[DONE]`); anything else is a stream cut short.
    fn end_of_body(&mut self) {
        match self.parser.finish() {
            Ok(Some(event)) => self.event(&event),
            Ok(None) => {}
            Err(e) => return self.fail(self.too_large_event(e)),
        }
        if self.ended {
            return;
        }
        if self.finish_reason.is_some() {
            self.done();
        } else {
            let detail = "the server ended the stream before the model finished \
                          (no finish reason, no [DONE])"
                .to_owned();
            self.fail(self.transport(detail));
        }
    }

    fn done(&mut self) {
        self.ready.push_back(Ok(StreamPiece::Done {
            finish_reason: self.finish_reason.take(),
            usage: self.usage.take(),
        }));
        self.ended = true;
    }

    fn fail(&mut self, e: LlmError) {
        debug!(url = %self.url, error = %e, "LLM stream failed");
        self.ready.push_back(Err(e));
        self.ended = true;
    }

    fn transport(&self, detail: String) -> LlmError {
        LlmError::Transport {
            url: self.url.clone(),
            detail,
            attempts: self.attempt,
        }
    }

    fn too_large_event(&self, e: SseError) -> LlmError {
        match e {
            SseError::TooLarge { limit } => LlmError::TooLarge {
                url: self.url.clone(),
                limit,
            },
        }
    }
}

//! The HTTP side: one `POST …/chat/completions` per call, with timeouts, retries and
//! every failure turned into an [`LlmError`].

use std::error::Error as _;
use std::future::Future;
use std::time::Duration;

use porfiry_skills::llm::{ChatMessage, LlmError, ModelRequest, snippet};
use reqwest::Url;
use reqwest::header::{ACCEPT, CONTENT_TYPE, RETRY_AFTER};
use tracing::{debug, warn};

use super::config::LlmTarget;
use super::endpoint::chat_completions_url;
use super::reasoning::{Answer, answer};
use super::retry::{is_retryable_status, parse_retry_after, retry_delay};
use super::wire::{ChatRequest, Usage, parse_reply};
use porfiry_mesh::backoff::Jitter;

/// Largest reply body read: a chat answer is kilobytes; 8 MiB leaves room for a long
/// generation with verbose reasoning and stops a broken server from filling memory.
pub const MAX_REPLY_BYTES: usize = 8 * 1024 * 1024;

/// One model answer with what the server said about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    /// The answer, trimmed, with any thought taken out (see [`super::reasoning`]).
    pub text: String,
    /// The model's thought, when it sent one (for `--trace`).
    pub reasoning: Option<String>,
    /// `stop`, `length`, … as the server reported it.
    pub finish_reason: Option<String>,
    /// Token counts, when the server reported them.
    pub usage: Option<Usage>,
}

/// A client for one model on one OpenAI-compatible server. Cheap to share by reference;
/// holds a connection pool.
#[derive(Debug, Clone)]
pub struct OpenAiClient {
    http: reqwest::Client,
    url: Url,
    target: LlmTarget,
}

/// Why one attempt failed, before the attempt count is known.
pub(super) enum AttemptError {
    /// Worth another attempt.
    Retry {
        cause: RetryCause,
        retry_after: Option<Duration>,
    },
    /// Reported as is.
    Final(LlmError),
}

pub(super) enum RetryCause {
    Connect(String),
    Transport(String),
    Status(u16, String),
}

impl OpenAiClient {
    /// Checks the settings and builds the HTTP client; no request is made.
    pub fn new(target: LlmTarget) -> Result<Self, LlmError> {
        let url = chat_completions_url(&target.base_url)?;
        let temperature = target.temperature();
        if !temperature.is_finite() || temperature < 0.0 {
            return Err(LlmError::InvalidTemperature { value: temperature });
        }
        // No client-wide timeout: a whole reply gets one per request
        // ([`LlmTarget::timeout`]); a stream has its own deadlines ([`super::stream`]).
        let http = reqwest::Client::builder()
            .connect_timeout(target.connect_timeout())
            .build()
            .map_err(|e| LlmError::ClientSetup {
                detail: error_chain(&e),
            })?;
        Ok(Self { http, url, target })
    }

    /// The model and settings this client was made with.
    pub fn target(&self) -> &LlmTarget {
        &self.target
    }

    /// The full URL requests go to.
    pub fn url(&self) -> &str {
        self.url.as_str()
    }

    /// The chat-completions URL, parsed (other routes sit beside it).
    pub(super) fn chat_url(&self) -> &Url {
        &self.url
    }

    /// The connection pool.
    pub(super) fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// The model's answer to `system` (sent as the system message) and the history.
    pub async fn chat(&self, system: &str, messages: &[ChatMessage]) -> Result<String, LlmError> {
        self.complete(system, messages).await.map(|c| c.text)
    }

    /// Like [`chat`](Self::chat), with the reasoning, finish reason and token counts.
    pub async fn complete(
        &self,
        system: &str,
        messages: &[ChatMessage],
    ) -> Result<Completion, LlmError> {
        self.complete_within(system, messages, None).await
    }

    /// Like [`complete`](Self::complete), the answer cut at `max_tokens`
    /// (or the model's configured `max_tokens`, whichever is smaller).
    pub async fn complete_within(
        &self,
        system: &str,
        messages: &[ChatMessage],
        max_tokens: Option<u32>,
    ) -> Result<Completion, LlmError> {
        self.complete_request(&ModelRequest::new(
            system.to_owned(),
            messages.to_vec(),
            max_tokens,
        ))
        .await
    }

    /// The whole answer to `request`: its budget, its stop texts, and its
    /// grammar when this client sends grammars ([`LlmTarget::send_grammar`]).
    pub async fn complete_request(&self, request: &ModelRequest) -> Result<Completion, LlmError> {
        let body = encode(&self.request(request))?;
        debug!(url = %self.url, model = %self.target.model, messages = request.messages.len() + 1, "LLM request");
        self.with_retries(|| self.attempt(body.clone()))
            .await
            .map(|(done, _)| done)
    }

    /// The request body for `request` with this model's settings; the budget
    /// sent is the smaller of the call's and the model's, the grammar goes
    /// only where this client sends grammars.
    pub(super) fn request<'a>(&'a self, request: &'a ModelRequest) -> ChatRequest<'a> {
        let budget = porfiry_skills::llm::budgets::smaller(
            request.max_tokens,
            self.target.config.max_tokens,
        );
        let grammar = request
            .grammar
            .as_deref()
            .filter(|_| self.target.send_grammar);
        ChatRequest::new(
            &self.target.model,
            self.target.temperature(),
            &request.system,
            &request.messages,
        )
        .with_presence_penalty(self.target.config.presence_penalty)
        .with_max_tokens(budget)
        .with_shape(&request.stop, grammar)
    }

    /// Runs `attempt_fn` until it succeeds, fails for good, or the
    /// configured retries are spent, waiting the jittered backoff between attempts.
    /// Returns the result and the number of the attempt that gave it.
    pub(super) async fn with_retries<T, F, Fut>(
        &self,
        mut attempt_fn: F,
    ) -> Result<(T, u32), LlmError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, AttemptError>>,
    {
        let attempts = self.target.max_retries().saturating_add(1);
        let mut attempt = 1;
        loop {
            let failure = match attempt_fn().await {
                Ok(done) => return Ok((done, attempt)),
                Err(AttemptError::Final(e)) => return Err(e),
                Err(AttemptError::Retry { cause, retry_after }) => (cause, retry_after),
            };
            let (cause, retry_after) = failure;
            if attempt >= attempts {
                return Err(self.exhausted(cause, attempt));
            }
            let delay = retry_delay(
                self.target.retry_base_delay(),
                attempt - 1,
                retry_after,
                Jitter::random(),
            );
            warn!(
                url = %self.url, attempt, of = attempts, delay_ms = delay.as_millis() as u64,
                cause = %cause.describe(), "LLM request failed; retrying"
            );
            tokio::time::sleep(delay).await;
            attempt += 1;
        }
    }

    /// One request and its reply.
    async fn attempt(&self, body: Vec<u8>) -> Result<Completion, AttemptError> {
        let request = self
            .post(body, "application/json")
            .timeout(self.target.timeout());
        let response = request.send().await.map_err(|e| self.classify(&e))?;
        let status = response.status().as_u16();
        let retry_after = retry_after(&response);
        let body = self.read_body(response).await?;
        if (200..300).contains(&status) {
            return self.completion(&body).map_err(AttemptError::Final);
        }
        Err(self.status_error(status, &body, retry_after))
    }

    /// A `POST` of `body` to the chat-completions URL, with the key when there is one.
    pub(super) fn post(&self, body: Vec<u8>, accept: &'static str) -> reqwest::RequestBuilder {
        let request = self
            .http
            .post(self.url.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, accept)
            .body(body);
        match &self.target.api_key {
            Some(key) => request.bearer_auth(key),
            None => request,
        }
    }

    /// A non-2xx reply as a retry cause or a final error.
    pub(super) fn status_error(
        &self,
        status: u16,
        body: &[u8],
        retry_after: Option<Duration>,
    ) -> AttemptError {
        let url = self.url.to_string();
        let snippet = snippet(body);
        match status {
            401 | 403 => AttemptError::Final(LlmError::Unauthorized {
                url,
                status,
                snippet,
            }),
            404 => AttemptError::Final(LlmError::NotFound {
                url,
                model: self.target.model.clone(),
                snippet,
            }),
            s if is_retryable_status(s) => AttemptError::Retry {
                cause: RetryCause::Status(s, snippet),
                retry_after,
            },
            _ => AttemptError::Final(LlmError::Status {
                url,
                status,
                snippet,
            }),
        }
    }

    /// The body, refused past [`MAX_REPLY_BYTES`].
    pub(super) async fn read_body(
        &self,
        mut response: reqwest::Response,
    ) -> Result<Vec<u8>, AttemptError> {
        let too_large = || {
            AttemptError::Final(LlmError::TooLarge {
                url: self.url.to_string(),
                limit: MAX_REPLY_BYTES,
            })
        };
        if response
            .content_length()
            .is_some_and(|n| n > MAX_REPLY_BYTES as u64)
        {
            return Err(too_large());
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| self.classify(&e))? {
            if body.len() + chunk.len() > MAX_REPLY_BYTES {
                return Err(too_large());
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }

    /// A 2xx body as a completion.
    pub(super) fn completion(&self, body: &[u8]) -> Result<Completion, LlmError> {
        let url = self.url.as_str();
        let raw = parse_reply(url, body)?;
        match answer(
            raw.content.as_deref(),
            raw.reasoning.as_deref(),
            raw.finish_reason.as_deref(),
        ) {
            Answer::Text { text, reasoning } => Ok(Completion {
                text,
                reasoning,
                finish_reason: raw.finish_reason,
                usage: raw.usage,
            }),
            Answer::OnlyReasoning => Err(LlmError::OnlyReasoning {
                url: url.to_owned(),
                finish_reason: raw.finish_reason,
            }),
            Answer::Nothing => Err(LlmError::MissingContent {
                url: url.to_owned(),
                finish_reason: raw.finish_reason,
            }),
        }
    }

    /// A reqwest error as a retry cause or a final error.
    pub(super) fn classify(&self, e: &reqwest::Error) -> AttemptError {
        let detail = error_chain(e);
        let retry = |cause| AttemptError::Retry {
            cause,
            retry_after: None,
        };
        if e.is_connect() {
            retry(RetryCause::Connect(detail))
        } else if e.is_timeout() {
            AttemptError::Final(LlmError::Timeout {
                url: self.url.to_string(),
                timeout: self.target.timeout(),
            })
        } else if e.is_builder() {
            AttemptError::Final(LlmError::InvalidBaseUrl {
                url: self.target.base_url.clone(),
                reason: detail,
            })
        } else {
            retry(RetryCause::Transport(detail))
        }
    }

    /// The error for a cause that persisted through every attempt.
    fn exhausted(&self, cause: RetryCause, attempts: u32) -> LlmError {
        let url = self.url.to_string();
        match cause {
            RetryCause::Connect(detail) => LlmError::Unreachable {
                url,
                detail,
                attempts,
            },
            RetryCause::Transport(detail) => LlmError::Transport {
                url,
                detail,
                attempts,
            },
            RetryCause::Status(429, snippet) => LlmError::RateLimited {
                url,
                attempts,
                snippet,
            },
            RetryCause::Status(status, snippet) => LlmError::ServerError {
                url,
                status,
                attempts,
                snippet,
            },
        }
    }
}

impl RetryCause {
    fn describe(&self) -> String {
        match self {
            RetryCause::Connect(d) => format!("connect: {d}"),
            RetryCause::Transport(d) => format!("connection: {d}"),
            RetryCause::Status(s, body) => format!("HTTP {s}: {body}"),
        }
    }
}

/// The request body as JSON.
pub(super) fn encode(request: &ChatRequest<'_>) -> Result<Vec<u8>, LlmError> {
    serde_json::to_vec(request).map_err(|e| LlmError::RequestEncoding {
        detail: e.to_string(),
    })
}

/// The `Retry-After` of a reply, in its delta-seconds form.
pub(super) fn retry_after(response: &reqwest::Response) -> Option<Duration> {
    parse_retry_after(
        response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok()),
    )
}

/// The causes under a reqwest error, innermost last (`tcp connect error: Connection
/// refused (os error 111)`); the outer "error sending request for url" line is dropped
/// because the URL is reported separately.
pub(super) fn error_chain(e: &reqwest::Error) -> String {
    let mut parts = Vec::new();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if parts.last() != Some(&text) {
            parts.push(text);
        }
        source = s.source();
    }
    if parts.is_empty() {
        e.to_string()
    } else {
        parts.join(": ")
    }
}

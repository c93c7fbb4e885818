//! The serving side of `/porfiry/offload/1`: [`OffloadServer::serve`] answers
//! one stream from one friend with this node's model.
//!
//! In order: read the request (under [`ServerLimits::request_timeout`], capped at
//! [`MAX_OFFLOAD_REQUEST_BYTES`]); ask the permissions — a refused peer gets
//! `not_permitted` and the model never sees the request; take a slot from the
//! [`Capacity`] — none free is `busy` at once, never a queue; then stream the
//! model's answer as it comes. While it streams, the peer's read half is watched:
//! its end of stream, a `cancel` frame, or anything else it sends drops the
//! upstream stream (and with it the HTTP request to the model) and frees the slot
//! in the same poll. Upstream errors go out as typed `error` frames with any URL in
//! their text replaced, so a friend never learns the upstream's address.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures::StreamExt;
use futures::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use libp2p::PeerId;
use porfiry_skills::llm::{BoxFuture, Delta, Llm, LlmError};
use tracing::debug;

use super::capacity::{Capacity, DEFAULT_GLOBAL_SLOTS, DEFAULT_PER_PEER_SLOTS, Full};
use super::wire::{
    ClientFrame, ErrorKind, MAX_OFFLOAD_FRAME_BYTES, MAX_OFFLOAD_REQUEST_BYTES, OffloadRequest,
    ServerFrame, WireError, read_frame, split_text, write_frame,
};

/// How long a peer has to send its request after opening the stream: the request
/// is written right after the open, so seconds mean a stalled peer, whose stream
/// would otherwise be held open for nothing.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// The wait a `busy` answer suggests: a local model's short answer takes seconds,
/// so trying again sooner would mostly meet the same busy slot.
pub const DEFAULT_BUSY_RETRY_AFTER: Duration = Duration::from_secs(5);

/// Who may use this node's model.
pub trait OffloadPermissions: Send + Sync {
    /// Whether `peer` may offload to this node now.
    fn allows<'a>(&'a self, peer: &'a PeerId) -> BoxFuture<'a, bool>;
}

impl<F> OffloadPermissions for F
where
    F: Fn(&PeerId) -> bool + Send + Sync,
{
    fn allows<'a>(&'a self, peer: &'a PeerId) -> BoxFuture<'a, bool> {
        let allowed = self(peer);
        Box::pin(async move { allowed })
    }
}

/// The server's limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerLimits {
    /// Requests served at once in total (the upstream's parallelism).
    pub global_slots: usize,
    /// Requests served at once for one friend.
    pub per_peer_slots: usize,
    /// How long the peer has to send its request.
    pub request_timeout: Duration,
    /// The wait a `busy` answer suggests.
    pub busy_retry_after: Duration,
}

impl Default for ServerLimits {
    fn default() -> Self {
        Self {
            global_slots: DEFAULT_GLOBAL_SLOTS,
            per_peer_slots: DEFAULT_PER_PEER_SLOTS,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            busy_retry_after: DEFAULT_BUSY_RETRY_AFTER,
        }
    }
}

/// How one stream ended, for logs and tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Served {
    /// The answer was sent to its `done`.
    Answered,
    /// The request was refused before the model saw it (not permitted, busy, too
    /// large, bad request, request deadline).
    Refused(ErrorKind),
    /// The model failed; the error was sent.
    Failed(ErrorKind),
    /// The peer hung up or cancelled; the upstream call was dropped.
    PeerLeft,
}

/// Serves this node's model to friends over offload streams. Cheap to clone; all
/// clones share one [`Capacity`].
#[derive(Clone)]
pub struct OffloadServer {
    inner: Arc<Inner>,
}

struct Inner {
    upstream: Arc<dyn Llm>,
    permissions: Arc<dyn OffloadPermissions>,
    limits: ServerLimits,
    capacity: Mutex<Capacity<PeerId>>,
}

impl OffloadServer {
    /// A server of `upstream` to the peers `permissions` allows, within `limits`.
    pub fn new(
        upstream: Arc<dyn Llm>,
        permissions: Arc<dyn OffloadPermissions>,
        limits: ServerLimits,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                upstream,
                permissions,
                capacity: Mutex::new(Capacity::new(limits.global_slots, limits.per_peer_slots)),
                limits,
            }),
        }
    }

    /// Requests being answered now.
    pub fn in_use(&self) -> usize {
        self.capacity().in_use()
    }

    /// Answers the one request on `stream`, opened by `peer`; returns when the
    /// stream is done with (the caller spawns one task per accepted stream).
    pub async fn serve<S>(&self, peer: PeerId, stream: S) -> Served
    where
        S: AsyncRead + AsyncWrite + Unpin + Send,
    {
        let (mut rd, mut wr) = stream.split();
        let read = read_frame::<_, ClientFrame>(&mut rd, MAX_OFFLOAD_REQUEST_BYTES);
        let request = match tokio::time::timeout(self.inner.limits.request_timeout, read).await {
            Err(_) => {
                let message = format!(
                    "no request arrived within {:?}",
                    self.inner.limits.request_timeout
                );
                return refuse(&mut wr, ErrorKind::Deadline, message).await;
            }
            Ok(Ok(Some(ClientFrame::Request(r)))) => r,
            Ok(Ok(Some(ClientFrame::Cancel)) | Ok(None)) => return Served::PeerLeft,
            Ok(Err(e @ WireError::TooLarge { .. })) => {
                return refuse(&mut wr, ErrorKind::TooLarge, e.to_string()).await;
            }
            Ok(Err(e @ WireError::Garbage(_))) => {
                return refuse(&mut wr, ErrorKind::BadRequest, e.to_string()).await;
            }
            Ok(Err(e)) => {
                debug!(%peer, error = %e, "offload: the request broke off");
                return Served::PeerLeft;
            }
        };
        if !self.inner.permissions.allows(&peer).await {
            debug!(%peer, "offload: not permitted");
            let message = "this node does not share its model with you".to_owned();
            return refuse(&mut wr, ErrorKind::NotPermitted, message).await;
        }
        let Some(_slot) = self.acquire(peer) else {
            let retry = self.inner.limits.busy_retry_after;
            let kind = ErrorKind::Busy {
                retry_after_ms: u64::try_from(retry.as_millis()).unwrap_or(u64::MAX),
            };
            return refuse(
                &mut wr,
                kind,
                "every slot of this node's model is taken".into(),
            )
            .await;
        };
        debug!(%peer, messages = request.messages.len(), stream = request.stream, "offload: serving");
        let hangup = watch_hangup(&mut rd);
        tokio::select! {
            served = self.answer(&request, &mut wr) => served,
            () = hangup => {
                debug!(%peer, "offload: the peer left; upstream dropped");
                Served::PeerLeft
            }
        }
    }

    async fn answer<W>(&self, request: &OffloadRequest, wr: &mut W) -> Served
    where
        W: AsyncWrite + Unpin,
    {
        let model_request = request.model_request();
        let upstream = &self.inner.upstream;
        if !request.stream {
            return match upstream.complete(&model_request).await {
                Err(e) => fail(wr, &e, self.inner.limits.busy_retry_after).await,
                Ok(c) => {
                    for piece in split_text(&c.text) {
                        if send(wr, &delta(piece)).await.is_err() {
                            return Served::PeerLeft;
                        }
                    }
                    finish(wr, c.finish_reason, c.usage).await
                }
            };
        }
        let mut deltas = match upstream.stream(&model_request).await {
            Ok(d) => d,
            Err(e) => return fail(wr, &e, self.inner.limits.busy_retry_after).await,
        };
        while let Some(item) = deltas.next().await {
            match item {
                Ok(Delta::Text(text)) => {
                    for piece in split_text(&text) {
                        if send(wr, &delta(piece)).await.is_err() {
                            return Served::PeerLeft;
                        }
                    }
                }
                Ok(Delta::Done {
                    finish_reason,
                    usage,
                    ..
                }) => return finish(wr, finish_reason, usage).await,
                Err(e) => return fail(wr, &e, self.inner.limits.busy_retry_after).await,
            }
        }
        let e = LlmError::Other("the model's stream ended without finishing".into());
        fail(wr, &e, self.inner.limits.busy_retry_after).await
    }

    fn acquire(&self, peer: PeerId) -> Option<Slot<'_>> {
        match self.capacity().try_acquire(&peer) {
            Ok(()) => Some(Slot { server: self, peer }),
            Err(Full::Global | Full::PerPeer) => None,
        }
    }

    fn capacity(&self) -> MutexGuard<'_, Capacity<PeerId>> {
        self.inner
            .capacity
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A slot held while a request is answered; dropping it gives it back.
struct Slot<'a> {
    server: &'a OffloadServer,
    peer: PeerId,
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.server.capacity().release(&self.peer);
    }
}

/// Resolves when the peer ends its side, cancels, breaks the stream or sends
/// anything else (the protocol allows nothing but `cancel` after the request).
async fn watch_hangup<R: AsyncRead + Unpin>(rd: &mut R) {
    let _ = read_frame::<_, ClientFrame>(rd, MAX_OFFLOAD_FRAME_BYTES).await;
}

fn delta(text: &str) -> ServerFrame {
    ServerFrame::Delta {
        text: text.to_owned(),
    }
}

async fn send<W: AsyncWrite + Unpin>(wr: &mut W, frame: &ServerFrame) -> Result<(), WireError> {
    write_frame(wr, frame).await
}

/// Sends the last frame and closes the write side.
async fn last<W: AsyncWrite + Unpin>(wr: &mut W, frame: &ServerFrame) -> bool {
    let sent = send(wr, frame).await.is_ok();
    let _ = wr.close().await;
    sent
}

async fn refuse<W: AsyncWrite + Unpin>(wr: &mut W, kind: ErrorKind, message: String) -> Served {
    last(wr, &ServerFrame::Error { kind, message }).await;
    Served::Refused(kind)
}

async fn finish<W: AsyncWrite + Unpin>(
    wr: &mut W,
    finish_reason: Option<String>,
    usage: Option<porfiry_skills::llm::Usage>,
) -> Served {
    let frame = ServerFrame::Done {
        finish_reason,
        usage,
    };
    if last(wr, &frame).await {
        Served::Answered
    } else {
        Served::PeerLeft
    }
}

async fn fail<W: AsyncWrite + Unpin>(wr: &mut W, error: &LlmError, busy_retry: Duration) -> Served {
    let kind = kind_of(error, busy_retry);
    let frame = ServerFrame::Error {
        kind,
        message: redact(&error.to_string()),
    };
    debug!(%error, "offload: the model failed");
    if last(wr, &frame).await {
        Served::Failed(kind)
    } else {
        Served::PeerLeft
    }
}

/// The wire kind of an upstream failure: a deadline is a deadline, a busy
/// model (the embedded engine's queue full) is busy — the friend tries again
/// after `busy_retry` or another friend — and anything else means the model
/// is not answering.
pub fn kind_of(error: &LlmError, busy_retry: Duration) -> ErrorKind {
    match error {
        LlmError::Timeout { .. } => ErrorKind::Deadline,
        LlmError::Busy { .. } => ErrorKind::Busy {
            retry_after_ms: u64::try_from(busy_retry.as_millis()).unwrap_or(u64::MAX),
        },
        _ => ErrorKind::ModelDown,
    }
}

/// `text` with every `http://…` / `https://…` word replaced by `<upstream>`: the
/// upstream's address (and any credentials in it) stays on this node.
pub fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = find_url(rest) {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| c.is_whitespace() || c == '"' || c == '\'' || c == ')' || c == ',')
            .unwrap_or(tail.len());
        out.push_str("<upstream>");
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

fn find_url(text: &str) -> Option<usize> {
    let lower = text.to_ascii_lowercase();
    match (lower.find("http://"), lower.find("https://")) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_never_leave_the_node() {
        assert_eq!(
            redact(
                "LLM endpoint http://user:pw@10.0.0.2:8080/v1/chat/completions answered HTTP 500"
            ),
            "LLM endpoint <upstream> answered HTTP 500"
        );
        assert_eq!(
            redact("a HTTPS://x/y, and \"http://z\" ok"),
            "a <upstream>, and \"<upstream>\" ok"
        );
        assert_eq!(redact("no address"), "no address");
    }

    #[test]
    fn timeouts_are_deadlines_a_busy_model_busy_and_the_rest_model_down() {
        let retry = Duration::from_millis(1_500);
        let t = LlmError::Timeout {
            url: "u".into(),
            timeout: Duration::from_secs(1),
        };
        assert_eq!(kind_of(&t, retry), ErrorKind::Deadline);
        let busy = LlmError::Busy {
            model: "m".into(),
            waiting: 4,
        };
        assert_eq!(
            kind_of(&busy, retry),
            ErrorKind::Busy {
                retry_after_ms: 1_500
            }
        );
        assert_eq!(
            kind_of(&LlmError::Other("x".into()), retry),
            ErrorKind::ModelDown
        );
    }
}

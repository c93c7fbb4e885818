//! The asking side: [`FriendLlm`] is an [`Llm`] whose answers come from a
//! friend's model over an offload stream, so chat, the API and the core use it
//! like a local model.
//!
//! **Deadlines** ([`FriendLlmConfig`]): *connect* (opening the stream and sending
//! the request), *first token*, *idle* between frames, and *total*. The first-token
//! and idle defaults are the upstream client's plus a margin, so a friend whose own
//! model deadline passes has time to say so with a typed error first.
//!
//! **Failover**: candidates are tried in order (recently busy or refusing friends
//! last, [`super::choice::Recent`]). Before the first token, a connect failure,
//! `busy`, `not_permitted`, `model_down`, a friend-side deadline or a broken stream
//! moves on to the next; a request too large or malformed does not (every friend
//! would say the same), nor does our own first-token deadline (waiting that long
//! again would double the user's wait). After the first token, any failure is the
//! stream's last item, never a silent end. Dropping the stream drops the offload
//! stream, which the friend sees as a cancel.
//!
//! **Who answered**: the final `Done` (and so the gathered [`Completion`])
//! names the friend that served it (`served_by`, its peer id), so chat can say
//! "via anna's server".

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::io::{AsyncRead, AsyncWrite};
use libp2p::PeerId;
use porfiry_skills::llm::{
    BoxFuture, Completion, Delta, DeltaStream, FriendFailure, Llm, LlmError, ModelRequest,
};
use tokio::time::{Instant, timeout_at};

use super::choice::Recent;
use super::wire::{
    ClientFrame, ErrorKind, MAX_OFFLOAD_FRAME_BYTES, OffloadRequest, ServerFrame, WireError,
    read_frame, write_frame,
};

/// Opening the stream and sending the request: a friend already connected answers
/// in milliseconds; a dial over a slow Wi-Fi or a relay can take a few seconds.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// Until the first answer frame: the upstream client's 120 s first-token limit
/// (`porfiry_agent`'s `DEFAULT_FIRST_TOKEN_TIMEOUT`) plus 10 s for the friend to
/// report its own deadline first.
pub const DEFAULT_FIRST_TOKEN_TIMEOUT: Duration = Duration::from_secs(130);

/// Between two frames once they flow: the upstream's 60 s idle limit plus 10 s.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(70);

/// The whole call: the upstream's 10 min plus a minute for failover and transport.
pub const DEFAULT_TOTAL_TIMEOUT: Duration = Duration::from_secs(660);

/// A stream to a friend's offload service.
pub trait OffloadIo: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> OffloadIo for T {}

/// A boxed stream to a friend's offload service.
pub type OffloadStream = Box<dyn OffloadIo>;

/// Opens offload streams to friends (the mesh's `StreamControl` in the node, an
/// in-memory pipe in tests).
pub trait OffloadOpener: Send + Sync {
    /// Opens a stream to `peer`'s offload service; the error says why not.
    fn open(&self, peer: PeerId) -> BoxFuture<'_, Result<OffloadStream, String>>;
}

/// The deadlines of a [`FriendLlm`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FriendLlmConfig {
    /// Opening the stream and sending the request.
    pub connect: Duration,
    /// From sending the request to the first answer frame.
    pub first_token: Duration,
    /// Between two frames.
    pub idle: Duration,
    /// The whole call, failover included.
    pub total: Duration,
}

impl Default for FriendLlmConfig {
    fn default() -> Self {
        Self {
            connect: DEFAULT_CONNECT_TIMEOUT,
            first_token: DEFAULT_FIRST_TOKEN_TIMEOUT,
            idle: DEFAULT_IDLE_TIMEOUT,
            total: DEFAULT_TOTAL_TIMEOUT,
        }
    }
}

/// A friend's model as an [`Llm`].
pub struct FriendLlm {
    opener: Arc<dyn OffloadOpener>,
    model: String,
    candidates: Vec<PeerId>,
    config: FriendLlmConfig,
    recent: Mutex<Recent>,
}

/// What one candidate's attempt gave.
enum Attempt {
    /// An answer is flowing.
    Answer(DeltaStream),
    /// Try the next candidate.
    Next(LlmError),
    /// Stop trying.
    Final(LlmError),
}

impl FriendLlm {
    /// `model` (for status output) served by `candidates`, tried in this order
    /// (rank them with [`super::choice::rank`]).
    pub fn new(
        opener: Arc<dyn OffloadOpener>,
        model: impl Into<String>,
        candidates: Vec<PeerId>,
        config: FriendLlmConfig,
    ) -> Self {
        Self {
            opener,
            model: model.into(),
            candidates,
            config,
            recent: Mutex::new(Recent::default()),
        }
    }

    /// The friends tried, in order of trying them now.
    pub fn candidates(&self) -> Vec<PeerId> {
        self.recent().order(&self.candidates, Instant::now())
    }

    fn recent(&self) -> std::sync::MutexGuard<'_, Recent> {
        self.recent
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    async fn open_stream(&self, request: &ModelRequest) -> Result<DeltaStream, LlmError> {
        let total_at = Instant::now() + self.config.total;
        let mut failures = Vec::new();
        for peer in self.candidates() {
            match self.attempt(peer, request, total_at).await {
                Attempt::Answer(stream) => {
                    self.recent().served(&peer);
                    return Ok(stream);
                }
                Attempt::Final(e) => return Err(e),
                Attempt::Next(e) => {
                    if let LlmError::Friend { failure, .. } = &e {
                        self.recent().note(peer, failure, Instant::now());
                    }
                    failures.push(e);
                }
            }
            if Instant::now() >= total_at {
                break;
            }
        }
        if failures.len() == 1 {
            Err(failures.remove(0))
        } else {
            Err(LlmError::NoFriendAnswered { failures })
        }
    }

    async fn attempt(&self, peer: PeerId, request: &ModelRequest, total_at: Instant) -> Attempt {
        let friend = |failure| LlmError::Friend {
            peer: peer.to_string(),
            failure,
        };
        let (connect_at, connect_phase) = pick(
            Instant::now() + self.config.connect,
            "connect",
            self.config.connect,
            total_at,
            self.config.total,
        );
        let frame = ClientFrame::Request(OffloadRequest::new(request, true));
        let opened = timeout_at(connect_at, async {
            let mut stream = self.opener.open(peer).await?;
            write_frame(&mut stream, &frame)
                .await
                .map_err(|e| e.to_string())?;
            Ok::<_, String>(stream)
        })
        .await;
        let mut stream = match opened {
            Err(_) => return Attempt::Next(friend(deadline(connect_phase))),
            Ok(Err(detail)) => return Attempt::Next(friend(FriendFailure::Unreachable { detail })),
            Ok(Ok(s)) => s,
        };
        let (first_at, first_phase) = pick(
            Instant::now() + self.config.first_token,
            "first token",
            self.config.first_token,
            total_at,
            self.config.total,
        );
        let first = timeout_at(
            first_at,
            read_frame::<_, ServerFrame>(&mut stream, MAX_OFFLOAD_FRAME_BYTES),
        )
        .await;
        let first = match first {
            Err(_) => return Attempt::Final(friend(deadline(first_phase))),
            Ok(Ok(None)) => {
                let detail = "the friend closed the stream without answering".to_owned();
                return Attempt::Next(friend(FriendFailure::Protocol { detail }));
            }
            Ok(Err(e)) => return Attempt::Next(friend(wire_failure(&e))),
            Ok(Ok(Some(frame))) => frame,
        };
        if let ServerFrame::Error { kind, message } = &first {
            let failure = failure_of(*kind, message);
            return match kind {
                ErrorKind::TooLarge | ErrorKind::BadRequest => Attempt::Final(friend(failure)),
                _ => Attempt::Next(friend(failure)),
            };
        }
        let state = Reading {
            stream,
            peer,
            first: Some(first),
            config: self.config,
            total_at,
            ended: false,
        };
        Attempt::Answer(Box::pin(futures::stream::unfold(
            state,
            |mut s| async move {
                let item = s.next().await?;
                Some((item, s))
            },
        )))
    }
}

/// The earlier of a phase's deadline and the total one, with the name of the one
/// that binds and its length.
fn pick(
    at: Instant,
    phase: &'static str,
    length: Duration,
    total_at: Instant,
    total: Duration,
) -> (Instant, (&'static str, Duration)) {
    if at < total_at {
        (at, (phase, length))
    } else {
        (total_at, ("total", total))
    }
}

fn deadline((phase, timeout): (&'static str, Duration)) -> FriendFailure {
    FriendFailure::Deadline {
        phase: phase.to_owned(),
        timeout,
    }
}

fn wire_failure(e: &WireError) -> FriendFailure {
    FriendFailure::Protocol {
        detail: e.to_string(),
    }
}

/// A server's typed error in the client's words.
pub fn failure_of(kind: ErrorKind, message: &str) -> FriendFailure {
    let detail = message.to_owned();
    match kind {
        ErrorKind::NotPermitted => FriendFailure::NotPermitted,
        ErrorKind::Busy { retry_after_ms } => FriendFailure::Busy {
            retry_after: Duration::from_millis(retry_after_ms),
        },
        ErrorKind::ModelDown => FriendFailure::ModelDown { detail },
        ErrorKind::TooLarge => FriendFailure::TooLarge { detail },
        ErrorKind::Deadline => FriendFailure::ModelDown {
            detail: format!("a deadline passed on the friend's node: {detail}"),
        },
        ErrorKind::BadRequest => FriendFailure::Protocol { detail },
    }
}

/// An answer being read.
struct Reading {
    stream: OffloadStream,
    peer: PeerId,
    first: Option<ServerFrame>,
    config: FriendLlmConfig,
    total_at: Instant,
    ended: bool,
}

impl Reading {
    async fn next(&mut self) -> Option<Result<Delta, LlmError>> {
        if self.ended {
            return None;
        }
        let frame = match self.first.take() {
            Some(f) => Ok(f),
            None => self.read().await,
        };
        let item = match frame {
            Ok(ServerFrame::Delta { text }) => return Some(Ok(Delta::Text(text))),
            // Only this node knows which friend answered (the friend does
            // not say who it is), so the answer is marked here.
            Ok(ServerFrame::Done {
                finish_reason,
                usage,
            }) => Ok(Delta::Done {
                finish_reason,
                usage,
                served_by: Some(self.peer.to_string()),
            }),
            Ok(ServerFrame::Error { kind, message }) => Err(failure_of(kind, &message)),
            Err(failure) => Err(failure),
        };
        self.ended = true;
        Some(item.map_err(|failure| LlmError::Friend {
            peer: self.peer.to_string(),
            failure,
        }))
    }

    async fn read(&mut self) -> Result<ServerFrame, FriendFailure> {
        let (at, phase) = pick(
            Instant::now() + self.config.idle,
            "idle",
            self.config.idle,
            self.total_at,
            self.config.total,
        );
        let read = read_frame::<_, ServerFrame>(&mut self.stream, MAX_OFFLOAD_FRAME_BYTES);
        match timeout_at(at, read).await {
            Err(_) => Err(deadline(phase)),
            Ok(Ok(Some(frame))) => Ok(frame),
            Ok(Ok(None)) => Err(FriendFailure::Protocol {
                detail: "the friend ended the stream before the answer's end".into(),
            }),
            Ok(Err(e)) => Err(wire_failure(&e)),
        }
    }
}

impl Llm for FriendLlm {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<Completion, LlmError>> {
        Box::pin(async move {
            let deltas = self.open_stream(request).await?;
            // A stream that ends without `Done` keeps what came (as before).
            let (out, _done) = porfiry_skills::llm::completion::gather(deltas).await?;
            Ok(out)
        })
    }

    fn stream<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<DeltaStream, LlmError>> {
        Box::pin(self.open_stream(request))
    }

    fn model_name(&self) -> String {
        self.model.clone()
    }
}

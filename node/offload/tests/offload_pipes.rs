//! Offload end to end on in-memory pipes: a `FriendLlm` asks `OffloadServer`s
//! whose upstream is a scripted in-process model. Every refusal, capacity at its
//! bound, cancellation reaching the upstream, failover and a failure mid-stream.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::StreamExt;
use libp2p::PeerId;
use porfiry_offload::{
    FriendLlm, FriendLlmConfig, OffloadOpener, OffloadServer, OffloadStream, ServerLimits,
};
use porfiry_skills::llm::{
    BoxFuture, ChatMessage, Completion, Delta, DeltaStream, FriendFailure, Llm, LlmError,
    ModelRequest,
};
use tokio::sync::watch;
use tokio_util::compat::TokioAsyncReadCompatExt;

/// How the scripted upstream answers.
#[derive(Clone, Copy)]
enum Mode {
    /// "Hello, friend." in three pieces, then done.
    Answer,
    /// One piece, then nothing ever again.
    Hang,
    /// One piece, then an error.
    FailMidway,
    /// An error before anything.
    Down,
}

struct Upstream {
    mode: Mode,
    calls: AtomicUsize,
    dropped: watch::Sender<usize>,
}

impl Upstream {
    fn new(mode: Mode) -> Arc<Self> {
        Arc::new(Self {
            mode,
            calls: AtomicUsize::new(0),
            dropped: watch::channel(0).0,
        })
    }

    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    async fn wait_dropped(&self, n: usize) {
        let mut rx = self.dropped.subscribe();
        tokio::time::timeout(Duration::from_secs(5), rx.wait_for(|d| *d >= n))
            .await
            .expect("the upstream stream was dropped in time")
            .unwrap();
    }
}

/// Counts the stream as dropped when it goes.
struct DropFlag(watch::Sender<usize>);
impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.send_modify(|d| *d += 1);
    }
}

impl Llm for Upstream {
    fn complete<'a>(&'a self, _: &'a ModelRequest) -> BoxFuture<'a, Result<Completion, LlmError>> {
        Box::pin(async { Err(LlmError::Other("complete is not scripted".into())) })
    }

    fn stream<'a>(&'a self, _: &'a ModelRequest) -> BoxFuture<'a, Result<DeltaStream, LlmError>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let flag = DropFlag(self.dropped.clone());
        let mode = self.mode;
        Box::pin(async move {
            let text = |t: &str| Ok(Delta::Text(t.to_owned()));
            let items: Vec<Result<Delta, LlmError>> = match mode {
                Mode::Down => {
                    return Err(LlmError::Unreachable {
                        url: "http://secret:pw@10.0.0.9/v1/chat/completions".into(),
                        detail: "connection refused".into(),
                        attempts: 1,
                    });
                }
                Mode::Answer => vec![
                    text("Hello"),
                    text(", "),
                    text("friend."),
                    Ok(Delta::Done {
                        finish_reason: Some("stop".into()),
                        usage: Some(porfiry_skills::Usage::new(5, 3)),
                        served_by: None,
                    }),
                ],
                Mode::Hang | Mode::FailMidway => vec![text("Hel")],
            };
            let tail: DeltaStream = match mode {
                Mode::Hang => Box::pin(futures::stream::pending()),
                Mode::FailMidway => Box::pin(futures::stream::iter(vec![Err(LlmError::Other(
                    "the GPU fell over".into(),
                ))])),
                _ => Box::pin(futures::stream::empty()),
            };
            let stream = futures::stream::iter(items).chain(tail).map(move |item| {
                let _keep = &flag;
                item
            });
            Ok(Box::pin(stream) as DeltaStream)
        })
    }
}

/// Opens in-memory pipes to servers by peer id; each open spawns `serve`.
struct Pipes {
    me: PeerId,
    servers: HashMap<PeerId, OffloadServer>,
}

impl OffloadOpener for Pipes {
    fn open(&self, peer: PeerId) -> BoxFuture<'_, Result<OffloadStream, String>> {
        Box::pin(async move {
            let server = self
                .servers
                .get(&peer)
                .cloned()
                .ok_or_else(|| format!("{peer} is not connected"))?;
            let (ours, theirs) = tokio::io::duplex(64 * 1024);
            let me = self.me;
            tokio::spawn(async move { server.serve(me, theirs.compat()).await });
            Ok(Box::new(ours.compat()) as OffloadStream)
        })
    }
}

fn server(
    upstream: &Arc<Upstream>,
    allowed: Option<PeerId>,
    limits: ServerLimits,
) -> OffloadServer {
    let permit = move |p: &PeerId| allowed.is_none_or(|a| a == *p);
    OffloadServer::new(upstream.clone(), Arc::new(permit), limits)
}

fn request() -> ModelRequest {
    ModelRequest {
        system: "sys".into(),
        messages: vec![ChatMessage::user("hi")],
        max_tokens: None,
        grammar: None,
        stop: Vec::new(),
    }
}

fn friend_llm(me: PeerId, servers: Vec<(PeerId, OffloadServer)>) -> FriendLlm {
    let order = servers.iter().map(|(p, _)| *p).collect();
    let opener = Pipes {
        me,
        servers: servers.into_iter().collect(),
    };
    FriendLlm::new(Arc::new(opener), "m", order, FriendLlmConfig::default())
}

fn friend_failure(e: &LlmError) -> &FriendFailure {
    match e {
        LlmError::Friend { failure, .. } => failure,
        other => panic!("not a friend error: {other}"),
    }
}

#[tokio::test]
async fn a_friend_answers_streamed_and_whole() {
    let up = Upstream::new(Mode::Answer);
    let (me, s) = (PeerId::random(), PeerId::random());
    let llm = friend_llm(
        me,
        vec![(s, server(&up, Some(me), ServerLimits::default()))],
    );
    let deltas: Vec<Delta> = llm
        .stream(&request())
        .await
        .unwrap()
        .map(Result::unwrap)
        .collect()
        .await;
    assert_eq!(deltas.len(), 4);
    assert_eq!(deltas[0], Delta::Text("Hello".into()));
    // The upstream names no one; the asking side says which friend served.
    assert!(
        matches!(&deltas[3], Delta::Done { served_by: Some(p), .. } if *p == s.to_string()),
        "{deltas:?}"
    );
    let whole = llm.complete(&request()).await.unwrap();
    assert_eq!(whole.text, "Hello, friend.");
    assert_eq!(whole.served_by, Some(s.to_string()));
    assert_eq!(whole.finish_reason.as_deref(), Some("stop"));
    assert_eq!(whole.usage, Some(porfiry_skills::Usage::new(5, 3)));
    assert_eq!(up.calls(), 2);
    assert_eq!(llm.model_name(), "m");
}

#[tokio::test]
async fn a_friend_not_permitted_is_refused_and_the_model_never_sees_it() {
    let up = Upstream::new(Mode::Answer);
    let (me, s) = (PeerId::random(), PeerId::random());
    let llm = friend_llm(
        me,
        vec![(
            s,
            server(&up, Some(PeerId::random()), ServerLimits::default()),
        )],
    );
    let e = llm.stream(&request()).await.err().unwrap();
    assert_eq!(friend_failure(&e), &FriendFailure::NotPermitted);
    assert!(e.to_string().contains(&s.to_string()), "{e}");
    assert_eq!(up.calls(), 0);
}

#[tokio::test]
async fn at_capacity_one_the_second_request_is_busy_at_once_and_a_hang_up_frees_the_slot() {
    let up = Upstream::new(Mode::Hang);
    let (me, s) = (PeerId::random(), PeerId::random());
    let srv = server(&up, None, ServerLimits::default());
    let llm = friend_llm(me, vec![(s, srv.clone())]);
    let mut first = llm.stream(&request()).await.unwrap();
    assert_eq!(
        first.next().await.unwrap().unwrap(),
        Delta::Text("Hel".into())
    );
    assert_eq!(srv.in_use(), 1);
    let other = friend_llm(PeerId::random(), vec![(s, srv.clone())]);
    let e = tokio::time::timeout(Duration::from_secs(5), other.stream(&request()))
        .await
        .expect("busy comes at once, not after a queue")
        .err()
        .unwrap();
    assert!(
        matches!(friend_failure(&e), FriendFailure::Busy { .. }),
        "{e}"
    );
    // Dropping the first stream cancels the upstream and frees the slot.
    drop(first);
    up.wait_dropped(1).await;
    tokio::time::timeout(Duration::from_secs(5), async {
        while srv.in_use() != 0 {
            tokio::task::yield_now().await;
        }
    })
    .await
    .unwrap();
    assert_eq!(up.calls(), 1, "the busy request never reached the model");
}

#[tokio::test]
async fn failover_before_the_first_token_reaches_the_next_friend() {
    let busy_up = Upstream::new(Mode::Hang);
    let down_up = Upstream::new(Mode::Down);
    let good_up = Upstream::new(Mode::Answer);
    let me = PeerId::random();
    let [busy, down, missing, good] = [(); 4].map(|()| PeerId::random());
    let busy_srv = server(&busy_up, None, ServerLimits::default());
    // Fill the busy server's only slot with another phone.
    let holder = friend_llm(PeerId::random(), vec![(busy, busy_srv.clone())]);
    let _held = holder.stream(&request()).await.unwrap();
    let mut servers = vec![
        (busy, busy_srv),
        (down, server(&down_up, None, ServerLimits::default())),
        (good, server(&good_up, None, ServerLimits::default())),
    ];
    let order = vec![busy, down, missing, good];
    let opener = Pipes {
        me,
        servers: servers.drain(..).collect(),
    };
    let llm = FriendLlm::new(Arc::new(opener), "m", order, FriendLlmConfig::default());
    let answer = llm.complete(&request()).await.unwrap();
    assert_eq!(answer.text, "Hello, friend.");
    assert_eq!(
        answer.served_by,
        Some(good.to_string()),
        "the one that answered"
    );
    // The failed friends go to the back next time, the one that answered first.
    assert_eq!(llm.candidates()[0], good);
}

#[tokio::test]
async fn when_every_friend_fails_each_reason_is_named_and_no_url_leaks() {
    let down_up = Upstream::new(Mode::Down);
    let (me, down, missing) = (PeerId::random(), PeerId::random(), PeerId::random());
    let opener = Pipes {
        me,
        servers: [(down, server(&down_up, None, ServerLimits::default()))].into(),
    };
    let llm = FriendLlm::new(
        Arc::new(opener),
        "m",
        vec![down, missing],
        FriendLlmConfig::default(),
    );
    let e = llm.stream(&request()).await.err().unwrap();
    let LlmError::NoFriendAnswered { failures } = &e else {
        panic!("{e}");
    };
    assert!(matches!(
        friend_failure(&failures[0]),
        FriendFailure::ModelDown { .. }
    ));
    assert!(matches!(
        friend_failure(&failures[1]),
        FriendFailure::Unreachable { .. }
    ));
    let text = e.to_string();
    assert!(
        !text.contains("secret") && !text.contains("10.0.0.9"),
        "{text}"
    );
    assert!(
        text.contains("<upstream>") && text.contains("connection refused"),
        "{text}"
    );
}

#[tokio::test]
async fn a_failure_after_the_first_token_ends_the_stream_with_the_error() {
    let up = Upstream::new(Mode::FailMidway);
    let (me, s) = (PeerId::random(), PeerId::random());
    let llm = friend_llm(me, vec![(s, server(&up, None, ServerLimits::default()))]);
    let items: Vec<_> = llm.stream(&request()).await.unwrap().collect().await;
    assert_eq!(items.len(), 2);
    assert_eq!(items[0], Ok(Delta::Text("Hel".into())));
    let e = items[1].clone().unwrap_err();
    assert!(e.to_string().contains("the GPU fell over"), "{e}");
}

#[tokio::test]
async fn a_silent_friend_trips_the_first_token_deadline_without_failover() {
    struct Silent;
    impl OffloadOpener for Silent {
        fn open(&self, _: PeerId) -> BoxFuture<'_, Result<OffloadStream, String>> {
            Box::pin(async {
                let (ours, theirs) = tokio::io::duplex(1024);
                // Keep the far end open and silent for the whole test.
                std::mem::forget(theirs);
                Ok(Box::new(ours.compat()) as OffloadStream)
            })
        }
    }
    let config = FriendLlmConfig {
        first_token: Duration::from_millis(200),
        ..FriendLlmConfig::default()
    };
    let llm = FriendLlm::new(
        Arc::new(Silent),
        "m",
        vec![PeerId::random(), PeerId::random()],
        config,
    );
    let e = llm.stream(&request()).await.err().unwrap();
    assert_eq!(
        friend_failure(&e),
        &FriendFailure::Deadline {
            phase: "first token".into(),
            timeout: config.first_token,
        }
    );
}

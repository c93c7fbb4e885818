//! Offload with the real HTTP client as the server's model: a `FriendLlm` talks
//! through an `OffloadServer` whose upstream is `OpenAiClient` against the
//! scripted model server, over an in-memory pipe. The scripted server sees the
//! request, streams the answer, and sees its connection close when the phone
//! hangs up mid-stream.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use libp2p::PeerId;
use porfiry_agent::llm::{ChatMessage, LlmConfig, LlmTarget, OpenAiClient};
use porfiry_offload::{
    FriendLlm, FriendLlmConfig, OffloadOpener, OffloadServer, OffloadStream, ServerLimits,
};
use porfiry_skills::{BoxFuture, Delta, Llm, ModelRequest};
use porfiry_tests::{Reply, Rule, ScriptedLlm};
use tokio_util::compat::TokioAsyncReadCompatExt;

struct Pipe {
    me: PeerId,
    server: OffloadServer,
}

impl OffloadOpener for Pipe {
    fn open(&self, _peer: PeerId) -> BoxFuture<'_, Result<OffloadStream, String>> {
        Box::pin(async move {
            let (ours, theirs) = tokio::io::duplex(64 * 1024);
            let (server, me) = (self.server.clone(), self.me);
            tokio::spawn(async move { server.serve(me, theirs.compat()).await });
            Ok(Box::new(ours.compat()) as OffloadStream)
        })
    }
}

fn friend(llm: &ScriptedLlm) -> (FriendLlm, OffloadServer) {
    let target = LlmTarget {
        config: LlmConfig {
            max_retries: Some(0),
            ..LlmConfig::default()
        },
        ..LlmTarget::new(llm.url(), "test-model")
    };
    let upstream = Arc::new(OpenAiClient::new(target).unwrap());
    let server = OffloadServer::new(
        upstream,
        Arc::new(|_: &PeerId| true),
        ServerLimits::default(),
    );
    let pipe = Pipe {
        me: PeerId::random(),
        server: server.clone(),
    };
    let llm = FriendLlm::new(
        Arc::new(pipe),
        "test-model",
        vec![PeerId::random()],
        FriendLlmConfig::default(),
    );
    (llm, server)
}

fn request() -> ModelRequest {
    ModelRequest {
        system: "SYSTEM".into(),
        messages: vec![ChatMessage::user("films?")],
        max_tokens: None,
        grammar: None,
        stop: Vec::new(),
    }
}

#[tokio::test]
async fn the_servers_model_sees_the_request_and_streams_the_answer() {
    let llm =
        ScriptedLlm::start(vec![Rule::always(Reply::streamed("Here you are, friend."))]).unwrap();
    let (friend, _) = friend(&llm);
    let answer = friend.complete(&request()).await.unwrap();
    assert_eq!(answer.text, "Here you are, friend.");
    let body = &llm.requests()[0];
    assert_eq!(body["stream"], true);
    assert_eq!(body["messages"][1]["content"], "films?");
}

#[tokio::test]
async fn a_phone_hanging_up_mid_stream_closes_the_upstream_connection() {
    let llm = ScriptedLlm::start(vec![Rule::always(
        Reply::streamed("one two three four").hang_after(1),
    )])
    .unwrap();
    let (friend, server) = friend(&llm);
    let mut deltas = friend.stream(&request()).await.unwrap();
    assert!(matches!(deltas.next().await, Some(Ok(Delta::Text(_)))));
    drop(deltas);
    let closed = tokio::time::timeout(Duration::from_secs(10), llm.wait_for_disconnects(1))
        .await
        .expect("the scripted server saw the upstream connection close");
    assert_eq!(closed, vec![1]);
    assert_eq!(server.in_use(), 0);
}

//! Offload over real mesh drivers on loopback: a phone's `FriendLlm` opens the
//! stream through its `StreamControl`, the server's `serve_incoming` answers it
//! with an in-process model; a phone hanging up drops the server's upstream.

#[path = "../../net/tests/mesh_support/mod.rs"]
mod mesh_support;

use std::sync::Arc;

use futures::StreamExt;
use mesh_support::{Node, WAIT, friends_pair};
use porfiry_mesh::net::MeshEvent;
use porfiry_mesh::net::limits::MAX_TRANSPORT_FRAME_BYTES;
use porfiry_offload::{FriendLlm, FriendLlmConfig, OffloadServer, ServerLimits, serve_incoming};
use porfiry_skills::llm::{
    BoxFuture, ChatMessage, Completion, Delta, DeltaStream, Llm, LlmError, ModelRequest,
};
use tokio::sync::watch;
use tokio::time::timeout;

fn drain(node: &mut Node) {
    let (_tx, mut placeholder) = tokio::sync::mpsc::channel::<MeshEvent>(1);
    std::mem::swap(&mut node.events, &mut placeholder);
    tokio::spawn(async move { while placeholder.recv().await.is_some() {} });
}

/// Answers "Hello" then, when `hang`, never finishes; counts dropped streams.
struct Model {
    hang: bool,
    dropped: watch::Sender<usize>,
}

struct DropFlag(watch::Sender<usize>);
impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.send_modify(|d| *d += 1);
    }
}

impl Llm for Model {
    fn complete<'a>(&'a self, _: &'a ModelRequest) -> BoxFuture<'a, Result<Completion, LlmError>> {
        Box::pin(async { Err(LlmError::Other("not scripted".into())) })
    }

    fn stream<'a>(&'a self, _: &'a ModelRequest) -> BoxFuture<'a, Result<DeltaStream, LlmError>> {
        let flag = DropFlag(self.dropped.clone());
        let hang = self.hang;
        Box::pin(async move {
            let head = futures::stream::iter(vec![Ok(Delta::Text("Hello".into()))]);
            let tail: DeltaStream = if hang {
                Box::pin(futures::stream::pending())
            } else {
                Box::pin(futures::stream::iter(vec![Ok(Delta::Done {
                    finish_reason: Some("stop".into()),
                    usage: None,
                    served_by: None,
                })]))
            };
            let s = head.chain(tail).map(move |i| {
                let _keep = &flag;
                i
            });
            Ok(Box::pin(s) as DeltaStream)
        })
    }
}

fn request() -> ModelRequest {
    ModelRequest {
        system: "s".into(),
        messages: vec![ChatMessage::user("hi")],
        max_tokens: None,
        grammar: None,
        stop: Vec::new(),
    }
}

#[tokio::test]
async fn a_phone_uses_the_servers_model_over_the_mesh_and_a_hang_up_reaches_it() {
    for hang in [false, true] {
        let (mut s, _, mut p) = friends_pair(MAX_TRANSPORT_FRAME_BYTES).await;
        drain(&mut s);
        drain(&mut p);
        let dropped = watch::channel(0).0;
        let model = Arc::new(Model {
            hang,
            dropped: dropped.clone(),
        });
        let phone = p.peer;
        let server = OffloadServer::new(
            model,
            Arc::new(move |peer: &libp2p::PeerId| *peer == phone),
            ServerLimits::default(),
        );
        let incoming = s.handle.streams().accept().unwrap();
        tokio::spawn(serve_incoming(server.clone(), incoming));
        let llm = FriendLlm::new(
            Arc::new(p.handle.streams()),
            "m",
            vec![s.peer],
            FriendLlmConfig::default(),
        );
        if !hang {
            let answer = timeout(WAIT, llm.complete(&request()))
                .await
                .unwrap()
                .unwrap();
            assert_eq!(answer.text, "Hello");
            assert_eq!(answer.finish_reason.as_deref(), Some("stop"));
            continue;
        }
        let mut deltas = timeout(WAIT, llm.stream(&request()))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            deltas.next().await.unwrap().unwrap(),
            Delta::Text("Hello".into())
        );
        assert_eq!(server.in_use(), 1);
        drop(deltas);
        let mut seen = dropped.subscribe();
        timeout(WAIT, seen.wait_for(|d| *d >= 1))
            .await
            .unwrap()
            .unwrap();
        timeout(WAIT, async {
            while server.in_use() != 0 {
                tokio::task::yield_now().await;
            }
        })
        .await
        .unwrap();
    }
}

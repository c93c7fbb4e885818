//! Raw offload streams (`/porfiry/offload/1`) between mesh drivers over real
//! TCP on loopback: a phone that never listens opens a stream over the link
//! it dialled and the server accepts it (and the other way), bytes go both
//! ways, the acceptor sees the peer id, closing one side ends the other, a
//! stranger cannot open one, a non-friend is refused without a dial, and
//! there is only one acceptor. No sleeps: waits are on events or reads,
//! with a timeout only as a safety net.

mod mesh_support;

use futures::{AsyncReadExt, AsyncWriteExt};
use mesh_support::{Node, WAIT, friends_pair, server, start};
use porfiry_net::limits::MAX_TRANSPORT_FRAME_BYTES;
use porfiry_net::{Keypair, MeshConfig, MeshError, MeshEvent};
use tokio::time::timeout;

/// Keeps a driver's event queue drained so it never blocks on it.
fn drain(node: &mut Node) {
    let (_tx, mut placeholder) = tokio::sync::mpsc::channel::<MeshEvent>(1);
    std::mem::swap(&mut node.events, &mut placeholder);
    tokio::spawn(async move { while placeholder.recv().await.is_some() {} });
}

#[tokio::test]
async fn a_phone_opens_a_stream_the_server_accepts_and_bytes_go_both_ways() {
    let (mut s, _, mut p) = friends_pair(MAX_TRANSPORT_FRAME_BYTES).await;
    drain(&mut s);
    drain(&mut p);
    let mut incoming = s.handle.streams().accept().unwrap();

    let mut opened = timeout(WAIT, p.handle.streams().open(s.peer))
        .await
        .unwrap()
        .unwrap();
    opened.write_all(b"request").await.unwrap();
    opened.flush().await.unwrap();

    let (from, mut accepted) = timeout(WAIT, incoming.next()).await.unwrap().unwrap();
    assert_eq!(from, p.peer, "the acceptor sees the phone's peer id");
    let mut buf = [0u8; 7];
    timeout(WAIT, accepted.read_exact(&mut buf))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(&buf, b"request");

    accepted.write_all(b"delta").await.unwrap();
    accepted.close().await.unwrap();
    let mut answer = Vec::new();
    timeout(WAIT, opened.read_to_end(&mut answer))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        answer, b"delta",
        "closing the server side ends the phone's read"
    );
}

#[tokio::test]
async fn the_server_opens_a_stream_to_a_phone_over_the_link_the_phone_dialled() {
    let (mut s, _, mut p) = friends_pair(MAX_TRANSPORT_FRAME_BYTES).await;
    drain(&mut s);
    drain(&mut p);
    let mut incoming = p.handle.streams().accept().unwrap();
    let mut opened = timeout(WAIT, s.handle.streams().open(p.peer))
        .await
        .unwrap()
        .unwrap();
    opened.write_all(b"hi").await.unwrap();
    opened.flush().await.unwrap();
    let (from, mut accepted) = timeout(WAIT, incoming.next()).await.unwrap().unwrap();
    assert_eq!(from, s.peer);
    let mut buf = [0u8; 2];
    timeout(WAIT, accepted.read_exact(&mut buf))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(&buf, b"hi");
}

#[tokio::test]
async fn dropping_the_opener_ends_the_acceptors_read() {
    let (mut s, _, mut p) = friends_pair(MAX_TRANSPORT_FRAME_BYTES).await;
    drain(&mut s);
    drain(&mut p);
    let mut incoming = s.handle.streams().accept().unwrap();
    let mut opened = timeout(WAIT, p.handle.streams().open(s.peer))
        .await
        .unwrap()
        .unwrap();
    opened.write_all(b"x").await.unwrap();
    opened.flush().await.unwrap();
    let (_, mut accepted) = timeout(WAIT, incoming.next()).await.unwrap().unwrap();
    drop(opened);
    let mut rest = Vec::new();
    // EOF or a reset: either way the read ends, and nothing else came.
    let result = timeout(WAIT, accepted.read_to_end(&mut rest))
        .await
        .unwrap();
    assert!(result.is_err() || rest == b"x", "{result:?} {rest:?}");
}

#[tokio::test]
async fn opening_to_a_peer_that_is_not_a_friend_is_refused_at_once() {
    let (mut s, _) = server(Keypair::generate_ed25519()).await;
    drain(&mut s);
    let stranger = Keypair::generate_ed25519().public().to_peer_id();
    let error = s.handle.streams().open(stranger).await.unwrap_err();
    assert!(
        matches!(error, MeshError::NotFriend { peer } if peer == stranger),
        "{error}"
    );
    assert!(error.to_string().contains("not a friend"));
}

#[tokio::test]
async fn a_stranger_cannot_open_a_stream() {
    let (mut s, address) = server(Keypair::generate_ed25519()).await;
    let mut incoming = s.handle.streams().accept().unwrap();
    // The stranger counts S as a friend; S does not know it.
    let mut x = start(
        Keypair::generate_ed25519(),
        MeshConfig::phone().with_friend(s.peer, vec![address]),
    );
    drain(&mut x);
    let error = timeout(WAIT, x.handle.streams().open(s.peer))
        .await
        .unwrap()
        .unwrap_err();
    assert!(matches!(error, MeshError::StreamOpen { .. }), "{error}");
    // S refused the connection and accepted nothing.
    mesh_support::wait_for(&mut s.events, |e| {
        *e == MeshEvent::PeerRefused { peer: x.peer }
    })
    .await;
    assert!(
        futures::FutureExt::now_or_never(incoming.next()).is_none(),
        "no stream from the stranger"
    );
}

#[tokio::test]
async fn there_is_only_one_acceptor() {
    let (mut s, _) = server(Keypair::generate_ed25519()).await;
    drain(&mut s);
    let first = s.handle.streams().accept().unwrap();
    assert!(matches!(
        s.handle.streams().accept(),
        Err(MeshError::AlreadyAccepting)
    ));
    drop(first);
    assert!(s.handle.streams().accept().is_ok(), "dropping frees it");
}

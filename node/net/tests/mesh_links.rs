//! Links between mesh drivers over real TCP on loopback: removing a friend
//! disconnects it and keeps it out until it is added back, a phone redials a
//! server that restarts, two servers that dial each other see one link. No
//! sleeps: every wait is on an event, with a timeout only as a safety net.

mod mesh_support;

use mesh_support::{WAIT, connected, friends_pair, phone, received, server, start, wait_for};
use porfiry_net::limits::MAX_TRANSPORT_FRAME_BYTES;
use porfiry_net::{Keypair, MeshConfig, MeshEvent, SendFailure};
use tokio::time::timeout;

#[tokio::test]
async fn removing_a_friend_disconnects_it_and_keeps_it_out_until_added_back() {
    let (mut s, _, mut p) = friends_pair(MAX_TRANSPORT_FRAME_BYTES).await;

    s.handle.remove_friend(p.peer).await.unwrap();
    wait_for(&mut s.events, |e| {
        *e == MeshEvent::PeerDisconnected { peer: p.peer }
    })
    .await;
    wait_for(&mut p.events, |e| {
        *e == MeshEvent::PeerDisconnected { peer: s.peer }
    })
    .await;

    // The phone still counts S as a friend and redials; S refuses it.
    wait_for(&mut s.events, |e| {
        *e == MeshEvent::PeerRefused { peer: p.peer }
    })
    .await;
    s.handle.send(p.peer, b"x".to_vec()).await.unwrap();
    let (event, _) = wait_for(&mut s.events, |e| matches!(e, MeshEvent::SendFailed { .. })).await;
    assert_eq!(
        event,
        MeshEvent::SendFailed {
            peer: p.peer,
            reason: SendFailure::NotFriend
        }
    );

    // Added back: the phone's next redial gets in.
    s.handle.add_friend(p.peer, Vec::new()).await.unwrap();
    connected(&mut s, p.peer).await;
    connected(&mut p, s.peer).await;
    p.handle.send(s.peer, b"back".to_vec()).await.unwrap();
    assert_eq!(received(&mut s, p.peer).await, b"back");
}

#[tokio::test]
async fn phone_redials_a_server_that_restarts_on_the_same_address() {
    let s_key = Keypair::generate_ed25519();
    let (s, address) = server(s_key.clone()).await;
    let p_key = Keypair::generate_ed25519();
    let p_peer = p_key.public().to_peer_id();
    s.handle.add_friend(p_peer, Vec::new()).await.unwrap();
    let mut p = phone(p_key, s.peer, &address, MAX_TRANSPORT_FRAME_BYTES);
    connected(&mut p, s.peer).await;

    s.handle.shutdown().await.unwrap();
    timeout(WAIT, s.task).await.expect("server stops").unwrap();
    wait_for(&mut p.events, |e| {
        *e == MeshEvent::PeerDisconnected { peer: s.peer }
    })
    .await;

    // Same key, same port: the phone's backoff finds it again.
    let config = MeshConfig::server(vec![address.clone()]).with_friend(p_peer, Vec::new());
    let mut s2 = start(s_key, config);
    assert_eq!(s2.peer, s.peer);
    connected(&mut p, s2.peer).await;
    connected(&mut s2, p_peer).await;
    p.handle
        .send(s2.peer, b"missed you".to_vec())
        .await
        .unwrap();
    assert_eq!(received(&mut s2, p_peer).await, b"missed you");
}

#[tokio::test]
async fn two_servers_that_dial_each_other_see_one_link_each() {
    let (a_key, b_key) = (Keypair::generate_ed25519(), Keypair::generate_ed25519());
    let (a_peer, b_peer) = (a_key.public().to_peer_id(), b_key.public().to_peer_id());
    let (mut a, a_address) = server(a_key).await;
    let (mut b, b_address) = server(b_key).await;
    // Both know the other's address, so both dial: up to two connections.
    a.handle.add_friend(b_peer, vec![b_address]).await.unwrap();
    b.handle.add_friend(a_peer, vec![a_address]).await.unwrap();
    connected(&mut a, b_peer).await;
    connected(&mut b, a_peer).await;
    a.handle.send(b_peer, b"one".to_vec()).await.unwrap();
    let (_, between) = wait_for(
        &mut b.events,
        |e| matches!(e, MeshEvent::FrameReceived { frame, .. } if frame == b"one"),
    )
    .await;
    assert!(
        between
            .iter()
            .all(|e| !matches!(e, MeshEvent::PeerConnected { .. })),
        "a second connection is not a second PeerConnected: {between:?}"
    );
    b.handle.send(a_peer, b"two".to_vec()).await.unwrap();
    assert_eq!(received(&mut a, b_peer).await, b"two");
}

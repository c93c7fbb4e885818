//! One server holding a hundred friends' connections at once, over real TCP
//! on loopback: frames go both ways on every link, and the connection cap
//! from the config refuses the next friend until a link frees.

mod mesh_support;

use std::collections::BTreeSet;

use mesh_support::{listening, loopback, phone, received, wait_for};
use porfiry_net::limits::MAX_TRANSPORT_FRAME_BYTES;
use porfiry_net::{Keypair, MeshConfig, MeshEvent, PeerId, ReachConfig};

const FRIENDS: usize = 100;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_holds_a_hundred_friends_and_refuses_one_past_its_cap() {
    let config = MeshConfig {
        reach: ReachConfig {
            max_connections: FRIENDS as u32,
            ..ReachConfig::default()
        },
        ..MeshConfig::server(loopback())
    };
    let (mut server, address) = listening(Keypair::generate_ed25519(), config).await;

    let keys: Vec<Keypair> = (0..=FRIENDS).map(|_| Keypair::generate_ed25519()).collect();
    for k in &keys {
        server
            .handle
            .add_friend(k.public().to_peer_id(), Vec::new())
            .await
            .unwrap();
    }
    let mut phones: Vec<_> = keys[..FRIENDS]
        .iter()
        .map(|k| phone(k.clone(), server.peer, &address, MAX_TRANSPORT_FRAME_BYTES))
        .collect();
    let mut connected = BTreeSet::new();
    while connected.len() < FRIENDS {
        let (event, _) = wait_for(&mut server.events, |e| {
            matches!(e, MeshEvent::PeerConnected { .. })
        })
        .await;
        if let MeshEvent::PeerConnected { peer } = event {
            connected.insert(peer);
        }
    }

    // A frame each way on every link.
    for p in &phones {
        p.handle.send(server.peer, p.peer.to_bytes()).await.unwrap();
    }
    let mut heard: BTreeSet<PeerId> = BTreeSet::new();
    while heard.len() < FRIENDS {
        let (event, _) = wait_for(&mut server.events, |e| {
            matches!(e, MeshEvent::FrameReceived { .. })
        })
        .await;
        if let MeshEvent::FrameReceived { peer, frame } = event {
            assert_eq!(frame, peer.to_bytes(), "a frame arrived from its sender");
            heard.insert(peer);
        }
    }
    assert_eq!(heard, connected);
    for p in &mut phones {
        server
            .handle
            .send(p.peer, b"welcome".to_vec())
            .await
            .unwrap();
        assert_eq!(received(p, server.peer).await, b"welcome");
    }

    // One friend more: refused at the cap, not as a stranger.
    let last = phone(
        keys[FRIENDS].clone(),
        server.peer,
        &address,
        MAX_TRANSPORT_FRAME_BYTES,
    );
    let (_, before) = wait_for(&mut server.events, |e| {
        matches!(e, MeshEvent::AtConnectionCap { .. })
    })
    .await;
    assert!(
        !before.iter().any(|e| matches!(
            e,
            MeshEvent::PeerConnected { .. } | MeshEvent::PeerRefused { .. }
        )),
        "{before:?}"
    );

    // A friend leaves: the one refused gets in on its next dial.
    let gone = phones.remove(0);
    gone.handle.shutdown().await.unwrap();
    let (event, _) = wait_for(&mut server.events, |e| {
        matches!(
            e,
            MeshEvent::PeerConnected { .. } | MeshEvent::PeerDisconnected { .. }
        )
    })
    .await;
    assert_eq!(event, MeshEvent::PeerDisconnected { peer: gone.peer });
    wait_for(&mut server.events, |e| {
        *e == MeshEvent::PeerConnected { peer: last.peer }
    })
    .await;
}

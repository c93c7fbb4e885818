//! The mesh driver over real TCP on loopback, with noise and yamux: friends
//! exchange frames, a stranger is refused (and logged) and its frame never
//! delivered, oversized frames are rejected with the connection kept. No
//! sleeps: every wait is on an event, with a timeout only as a safety net.

mod mesh_support;

use futures::StreamExt;
use libp2p::request_response;
use libp2p::swarm::SwarmEvent;
use mesh_support::{WAIT, capture_warnings, friends_pair, received, wait_for};
use porfiry_net::behaviour::MeshBehaviourEvent;
use porfiry_net::limits::MAX_TRANSPORT_FRAME_BYTES;
use porfiry_net::swarm::build_swarm;
use porfiry_net::{FrameError, Keypair, MeshEvent, Profile, SendFailure};
use tokio::time::timeout;

#[tokio::test]
async fn friends_connect_and_exchange_frames() {
    let (mut s, _, mut p) = friends_pair(MAX_TRANSPORT_FRAME_BYTES).await;

    p.handle
        .send(s.peer, b"hello server".to_vec())
        .await
        .unwrap();
    assert_eq!(received(&mut s, p.peer).await, b"hello server");
    s.handle
        .send(p.peer, b"hello phone".to_vec())
        .await
        .unwrap();
    assert_eq!(received(&mut p, s.peer).await, b"hello phone");

    // More frames than the in-flight window: the rest queue and all arrive.
    let sent: Vec<Vec<u8>> = (0..40u32).map(|i| i.to_be_bytes().to_vec()).collect();
    for frame in &sent {
        p.handle.send(s.peer, frame.clone()).await.unwrap();
    }
    let mut got = Vec::new();
    for _ in 0..sent.len() {
        got.push(received(&mut s, p.peer).await);
    }
    got.sort();
    assert_eq!(got, sent);

    // An empty frame and a frame exactly at the cap both travel.
    p.handle.send(s.peer, Vec::new()).await.unwrap();
    assert_eq!(received(&mut s, p.peer).await, Vec::<u8>::new());
    let full = vec![0xAB; MAX_TRANSPORT_FRAME_BYTES as usize];
    p.handle.send(s.peer, full.clone()).await.unwrap();
    assert_eq!(received(&mut s, p.peer).await, full);
}

#[tokio::test]
async fn stranger_is_refused_logged_and_its_frame_never_delivered() {
    // Current-thread runtime: the spawned driver logs on this thread, so a
    // thread-local subscriber sees its warnings.
    let (log, _guard) = capture_warnings();

    let (mut s, address, p) = friends_pair(MAX_TRANSPORT_FRAME_BYTES).await;

    // The stranger trusts S (its own gate allows S), but S does not know it.
    let x_key = Keypair::generate_ed25519();
    let x_peer = x_key.public().to_peer_id();
    let mut x = build_swarm(
        x_key,
        Profile::Phone,
        MAX_TRANSPORT_FRAME_BYTES,
        libp2p_stream::Behaviour::new(),
        porfiry_net::InviteDoor::default(),
        porfiry_net::ReachConfig::default(),
        Default::default(),
    )
    .unwrap();
    x.behaviour_mut().allow(s.peer);
    x.add_peer_address(s.peer, address);
    x.behaviour_mut().send_frame(&s.peer, b"let me in".to_vec());
    // The request dials S; it can only end in failure.
    let failure = timeout(WAIT, async {
        loop {
            if let SwarmEvent::Behaviour(MeshBehaviourEvent::Frames(
                request_response::Event::OutboundFailure { error, .. },
            )) = x.select_next_some().await
            {
                return error;
            }
        }
    })
    .await
    .expect("the stranger's request ends");
    drop(x);

    let (_, before) = wait_for(&mut s.events, |e| {
        *e == MeshEvent::PeerRefused { peer: x_peer }
    })
    .await;
    // A friend's frame after the refusal is a barrier: the stranger's frame,
    // had it been read, would have come before it.
    p.handle.send(s.peer, b"barrier".to_vec()).await.unwrap();
    let (_, after) = wait_for(
        &mut s.events,
        |e| matches!(e, MeshEvent::FrameReceived { frame, .. } if frame == b"barrier"),
    )
    .await;
    for event in before.iter().chain(&after) {
        assert!(
            !matches!(event, MeshEvent::FrameReceived { peer, .. } | MeshEvent::PeerConnected { peer } if *peer == x_peer),
            "stranger got through: {event:?} (its request failed with {failure})"
        );
    }
    let logged = log.text();
    assert!(
        logged.lines().any(|l| l.contains("WARN")
            && l.contains("not a friend")
            && l.contains(&x_peer.to_string())),
        "no warning naming {x_peer}:\n{logged}"
    );
}

#[tokio::test]
async fn oversized_frame_is_rejected_and_the_connection_kept() {
    // The phone's own cap is raised so it lets an over-cap frame out.
    let (mut s, _, mut p) = friends_pair(2 * MAX_TRANSPORT_FRAME_BYTES).await;
    let len = u64::from(MAX_TRANSPORT_FRAME_BYTES) + 1;
    p.handle.send(s.peer, vec![1; len as usize]).await.unwrap();

    let (event, before) = wait_for(&mut s.events, |e| {
        matches!(e, MeshEvent::FrameRejected { .. })
    })
    .await;
    assert_eq!(
        event,
        MeshEvent::FrameRejected {
            peer: p.peer,
            reason: FrameError::TooLarge {
                len,
                max: MAX_TRANSPORT_FRAME_BYTES
            }
        }
    );
    assert!(
        before
            .iter()
            .all(|e| !matches!(e, MeshEvent::FrameReceived { .. }))
    );

    // Same connection, next frame: delivered, and nobody disconnected. (The
    // phone's oversized stream stays stalled, out of yamux credit, until its
    // REQUEST_TIMEOUT; other streams are unaffected.)
    p.handle.send(s.peer, b"still here".to_vec()).await.unwrap();
    let (_, between) = wait_for(
        &mut s.events,
        |e| matches!(e, MeshEvent::FrameReceived { frame, .. } if frame == b"still here"),
    )
    .await;
    assert!(
        between
            .iter()
            .all(|e| !matches!(e, MeshEvent::PeerDisconnected { .. })),
        "{between:?}"
    );
    while let Ok(event) = p.events.try_recv() {
        assert!(
            !matches!(event, MeshEvent::PeerDisconnected { .. }),
            "phone lost the link: {event:?}"
        );
    }
}

#[tokio::test]
async fn frames_over_our_own_cap_are_not_sent() {
    let (mut s, _, p) = friends_pair(MAX_TRANSPORT_FRAME_BYTES).await;
    let len = u64::from(MAX_TRANSPORT_FRAME_BYTES) + 1;
    s.handle.send(p.peer, vec![0; len as usize]).await.unwrap();
    let (event, _) = wait_for(&mut s.events, |e| matches!(e, MeshEvent::SendFailed { .. })).await;
    assert_eq!(
        event,
        MeshEvent::SendFailed {
            peer: p.peer,
            reason: SendFailure::TooLarge {
                len,
                max: MAX_TRANSPORT_FRAME_BYTES
            }
        }
    );
}

//! Frames acknowledged only when taken (`MeshConfig::ack_when_taken`), over
//! real TCP on loopback: the receiver's driver hands a friend's frames out as
//! `FrameToTake` and acknowledges each only once the consumer takes it, so
//! the sender's window (`MAX_IN_FLIGHT_PER_PEER`) bounds what of it waits
//! at the receiver; taking them lets the rest through and the sender sees
//! every frame delivered. While the receiver's driver holds a frame of its
//! own (its friend's queue is full), it acknowledges on arrival instead, up
//! to `MAX_WAITING_PER_PEER` untaken frames of one friend, and refuses the
//! frame past that.

mod mesh_support;

use mesh_support::{WAIT, connected, listening, loopback, phone, start, wait_for};
use porfiry_net::limits::{
    MAX_IN_FLIGHT_PER_PEER, MAX_QUEUED_BYTES_PER_PEER, MAX_TRANSPORT_FRAME_BYTES,
    MAX_WAITING_PER_PEER,
};
use porfiry_net::{Keypair, MeshCommand, MeshConfig, MeshEvent, PeerId, SendTag};
use tokio::time::timeout;

/// The next frame to take from `from`: its first byte and its event.
async fn next_to_take(
    events: &mut tokio::sync::mpsc::Receiver<MeshEvent>,
    from: PeerId,
) -> MeshEvent {
    wait_for(
        events,
        |e| matches!(e, MeshEvent::FrameToTake { peer, .. } if *peer == from),
    )
    .await
    .0
}

#[tokio::test]
async fn a_friends_window_waits_until_the_consumer_takes_its_frames() {
    let config = MeshConfig {
        ack_when_taken: true,
        ..MeshConfig::server(loopback())
    };
    let (mut s, address) = listening(Keypair::generate_ed25519(), config).await;
    let p_key = Keypair::generate_ed25519();
    let q_key = Keypair::generate_ed25519();
    for key in [&p_key, &q_key] {
        s.handle
            .add_friend(key.public().to_peer_id(), Vec::new())
            .await
            .unwrap();
    }
    let mut p = phone(p_key, s.peer, &address, MAX_TRANSPORT_FRAME_BYTES);
    let mut q = phone(q_key, s.peer, &address, MAX_TRANSPORT_FRAME_BYTES);
    connected(&mut p, s.peer).await;
    connected(&mut q, s.peer).await;

    // P sends one frame more than its window, as one tracked group.
    let count = MAX_IN_FLIGHT_PER_PEER + 1;
    let tag = send_group(&p, s.peer, 1, count, 16).await;
    let mut ids = Vec::new();
    for _ in 0..MAX_IN_FLIGHT_PER_PEER {
        let MeshEvent::FrameToTake { id, .. } = next_to_take(&mut s.events, p.peer).await else {
            unreachable!()
        };
        ids.push(id);
    }
    // Nothing is taken yet, so P's window is full: a frame Q sends now
    // arrives with P's last frame still at P.
    q.handle.send(s.peer, b"barrier".to_vec()).await.unwrap();
    let (_, before) = wait_for(
        &mut s.events,
        |e| matches!(e, MeshEvent::FrameToTake { peer, frame, .. } if *peer == q.peer && frame == b"barrier"),
    )
    .await;
    assert!(
        !before
            .iter()
            .any(|e| matches!(e, MeshEvent::FrameToTake { peer, .. } if *peer == p.peer)),
        "a frame past P's window arrived before any was taken: {before:?}"
    );

    // Taking one lets the last one through; taking all ends P's group.
    let taker = s.handle.frame_taker();
    taker.taken(ids[0]).await.unwrap();
    let MeshEvent::FrameToTake { id, frame, .. } = next_to_take(&mut s.events, p.peer).await else {
        unreachable!()
    };
    assert_eq!(frame, vec![MAX_IN_FLIGHT_PER_PEER as u8; 16]);
    ids.push(id);
    for id in &ids[1..] {
        taker.taken(*id).await.unwrap();
    }
    let (done, _) = wait_for(&mut p.events, |e| matches!(e, MeshEvent::FrameDone { .. })).await;
    assert_eq!(
        done,
        MeshEvent::FrameDone {
            peer: s.peer,
            tag,
            delivered: true
        }
    );
    // Taking a frame twice is harmless.
    taker.taken(ids[0]).await.unwrap();
    s.handle.shutdown().await.unwrap();
    timeout(WAIT, s.task).await.unwrap().unwrap();
}

#[tokio::test]
async fn without_the_setting_frames_are_acknowledged_on_arrival() {
    let (mut s, address) =
        listening(Keypair::generate_ed25519(), MeshConfig::server(loopback())).await;
    let p_key = Keypair::generate_ed25519();
    s.handle
        .add_friend(p_key.public().to_peer_id(), Vec::new())
        .await
        .unwrap();
    let mut p = phone(p_key, s.peer, &address, MAX_TRANSPORT_FRAME_BYTES);
    connected(&mut p, s.peer).await;
    let count = 2 * MAX_IN_FLIGHT_PER_PEER;
    send_group(&p, s.peer, 2, count, 16).await;
    // Nobody takes anything, and the whole group is delivered.
    let (done, _) = wait_for(&mut p.events, |e| matches!(e, MeshEvent::FrameDone { .. })).await;
    assert!(matches!(
        done,
        MeshEvent::FrameDone {
            delivered: true,
            ..
        }
    ));
    let mut got = 0;
    while got < count {
        let (event, _) = wait_for(&mut s.events, |e| {
            matches!(
                e,
                MeshEvent::FrameReceived { .. } | MeshEvent::FrameToTake { .. }
            )
        })
        .await;
        assert!(
            matches!(event, MeshEvent::FrameReceived { .. }),
            "{event:?}"
        );
        got += 1;
    }
}

/// Sends `count` frames of `bytes` from `node` to `to` as one tracked group
/// with `session` as its tag.
async fn send_group(
    node: &mesh_support::Node,
    to: PeerId,
    session: u64,
    count: usize,
    bytes: usize,
) -> SendTag {
    let tag = SendTag {
        session,
        chunk: 0,
        items: count as u32,
    };
    let frames = (0..count).map(|i| vec![i as u8; bytes]).collect();
    node.handle
        .command(MeshCommand::SendTracked {
            peer: to,
            frames,
            tag,
        })
        .await
        .unwrap();
    tag
}

#[tokio::test]
async fn while_a_frame_is_held_frames_are_acknowledged_on_arrival_up_to_the_bound() {
    const MIB: usize = 1024 * 1024;
    let config = MeshConfig {
        ack_when_taken: true,
        ..MeshConfig::server(loopback())
    };
    let (mut s, address) = listening(Keypair::generate_ed25519(), config).await;
    let p_key = Keypair::generate_ed25519();
    s.handle
        .add_friend(p_key.public().to_peer_id(), Vec::new())
        .await
        .unwrap();
    let mut p = start(
        p_key,
        MeshConfig {
            ack_when_taken: true,
            ..MeshConfig::phone()
        }
        .with_friend(s.peer, vec![address]),
    );
    connected(&mut p, s.peer).await;
    connected(&mut s, p.peer).await;

    // S sends P more than its window and its queue hold; P takes none, so
    // S ends up holding a frame (and takes no more commands).
    let held = MAX_IN_FLIGHT_PER_PEER + MAX_QUEUED_BYTES_PER_PEER / MIB + 1;
    send_group(&s, p.peer, 1, held, MIB).await;

    // P's frames to S are acknowledged although S takes none of them, once
    // S holds: all of a group as large as the bound is delivered.
    let a = send_group(&p, s.peer, 2, MAX_WAITING_PER_PEER, 16).await;
    let (done, _) = wait_for(
        &mut p.events,
        |e| matches!(e, MeshEvent::FrameDone { tag, .. } if tag.session == 2),
    )
    .await;
    assert_eq!(
        done,
        MeshEvent::FrameDone {
            peer: s.peer,
            tag: a,
            delivered: true
        }
    );
    // One more is past the bound of untaken frames: refused.
    send_group(&p, s.peer, 3, 1, 16).await;
    let (done, _) = wait_for(
        &mut p.events,
        |e| matches!(e, MeshEvent::FrameDone { tag, .. } if tag.session == 3),
    )
    .await;
    assert!(
        matches!(
            done,
            MeshEvent::FrameDone {
                delivered: false,
                ..
            }
        ),
        "{done:?}"
    );
    // S was handed exactly the bound of P's frames.
    let mut handed = 0;
    while handed < MAX_WAITING_PER_PEER {
        next_to_take(&mut s.events, p.peer).await;
        handed += 1;
    }
}

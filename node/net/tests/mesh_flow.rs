//! The driver's flow control over real TCP on loopback: more frames than the
//! in-flight window and the per-friend queue together are held, never
//! dropped, and all arrive; a tracked group (`SendTracked`) is reported with
//! one `FrameDone` once all its frames are acknowledged, at once when it is
//! empty, and as undelivered when its friend is not connected.

mod mesh_support;

use mesh_support::{WAIT, friends_pair, wait_for};
use porfiry_net::limits::{
    MAX_IN_FLIGHT_PER_PEER, MAX_QUEUED_BYTES_PER_PEER, MAX_TRANSPORT_FRAME_BYTES,
};
use porfiry_net::{Keypair, MeshCommand, MeshEvent, SendTag};
use tokio::time::timeout;

const MIB: usize = 1024 * 1024;

#[tokio::test]
async fn more_than_the_window_and_the_queue_is_held_not_dropped() {
    let (mut s, _, mut p) = friends_pair(MAX_TRANSPORT_FRAME_BYTES).await;
    // Twice what the window and the queue hold together.
    let count = 2 * (MAX_IN_FLIGHT_PER_PEER + MAX_QUEUED_BYTES_PER_PEER / MIB);
    let sender = p.handle.clone();
    let to = s.peer;
    let sending = tokio::spawn(async move {
        for i in 0..count {
            let mut frame = vec![0u8; MIB];
            frame[..4].copy_from_slice(&(i as u32).to_be_bytes());
            sender.send(to, frame).await.unwrap();
        }
    });
    let mut got = Vec::new();
    while got.len() < count {
        let event = timeout(WAIT, s.events.recv()).await.unwrap().unwrap();
        if let MeshEvent::FrameReceived { frame, .. } = event {
            got.push(u32::from_be_bytes(frame[..4].try_into().unwrap()));
        }
    }
    sending.await.unwrap();
    got.sort_unstable();
    assert_eq!(
        got,
        (0..count as u32).collect::<Vec<_>>(),
        "every frame once"
    );
    // Nothing was refused for being queued.
    while let Ok(event) = p.events.try_recv() {
        assert!(!matches!(event, MeshEvent::SendFailed { .. }), "{event:?}");
    }
}

#[tokio::test]
async fn a_tracked_group_is_done_once_every_frame_is_acknowledged() {
    let (mut s, _, mut p) = friends_pair(MAX_TRANSPORT_FRAME_BYTES).await;
    let tag = SendTag {
        session: 7,
        chunk: 3,
        items: 12,
    };
    let frames: Vec<Vec<u8>> = (0..20u8).map(|i| vec![i; 64 * 1024]).collect();
    p.handle
        .command(MeshCommand::SendTracked {
            peer: s.peer,
            frames,
            tag,
        })
        .await
        .unwrap();
    let (done, _) = wait_for(&mut p.events, |e| matches!(e, MeshEvent::FrameDone { .. })).await;
    assert_eq!(
        done,
        MeshEvent::FrameDone {
            peer: s.peer,
            tag,
            delivered: true
        }
    );
    for _ in 0..20 {
        wait_for(&mut s.events, |e| {
            matches!(e, MeshEvent::FrameReceived { .. })
        })
        .await;
    }

    // An empty group is done at once.
    let empty = SendTag { chunk: 4, ..tag };
    p.handle
        .command(MeshCommand::SendTracked {
            peer: s.peer,
            frames: Vec::new(),
            tag: empty,
        })
        .await
        .unwrap();
    let (done, _) = wait_for(&mut p.events, |e| matches!(e, MeshEvent::FrameDone { .. })).await;
    assert_eq!(
        done,
        MeshEvent::FrameDone {
            peer: s.peer,
            tag: empty,
            delivered: true
        }
    );

    // A group for a friend that is not connected is undelivered, reported
    // once (not one `SendFailed` per frame).
    let stranger = Keypair::generate_ed25519().public().to_peer_id();
    let lost = SendTag { chunk: 5, ..tag };
    p.handle
        .command(MeshCommand::SendTracked {
            peer: stranger,
            frames: vec![vec![1], vec![2]],
            tag: lost,
        })
        .await
        .unwrap();
    let (done, before) =
        wait_for(&mut p.events, |e| matches!(e, MeshEvent::FrameDone { .. })).await;
    assert_eq!(
        done,
        MeshEvent::FrameDone {
            peer: stranger,
            tag: lost,
            delivered: false
        }
    );
    assert!(
        before
            .iter()
            .all(|e| !matches!(e, MeshEvent::SendFailed { .. })),
        "{before:?}"
    );
}

//! The mesh driver's lifecycle and refusals: bad settings are refused with
//! clear errors, sends that cannot go fail at once, and the task ends on
//! shutdown, when every handle is dropped, or when nobody reads its events.

mod mesh_support;

use mesh_support::{Node, WAIT, loopback, server, wait_for};
use porfiry_net::{
    Keypair, MeshConfig, MeshDriver, MeshError, MeshEvent, Multiaddr, PeerId, SendFailure,
};
use tokio::time::timeout;

#[tokio::test]
async fn sends_to_strangers_and_absent_friends_fail_at_once() {
    let (mut s, _) = server(Keypair::generate_ed25519()).await;
    let stranger = PeerId::random();
    s.handle.send(stranger, b"x".to_vec()).await.unwrap();
    let (event, _) = wait_for(&mut s.events, |e| matches!(e, MeshEvent::SendFailed { .. })).await;
    assert_eq!(
        event,
        MeshEvent::SendFailed {
            peer: stranger,
            reason: SendFailure::NotFriend
        }
    );

    let absent = PeerId::random();
    s.handle.add_friend(absent, Vec::new()).await.unwrap();
    s.handle.send(absent, b"x".to_vec()).await.unwrap();
    let (event, _) = wait_for(&mut s.events, |e| matches!(e, MeshEvent::SendFailed { .. })).await;
    assert_eq!(
        event,
        MeshEvent::SendFailed {
            peer: absent,
            reason: SendFailure::NotConnected
        }
    );
}

#[tokio::test]
async fn shutdown_ends_the_task_and_later_commands_fail() {
    let (s, _) = server(Keypair::generate_ed25519()).await;
    let Node {
        handle,
        mut events,
        task,
        ..
    } = s;
    handle.shutdown().await.unwrap();
    timeout(WAIT, task).await.expect("driver stops").unwrap();
    assert!(
        timeout(WAIT, events.recv()).await.unwrap().is_none(),
        "event channel closed"
    );
    assert!(matches!(
        handle.send(PeerId::random(), Vec::new()).await,
        Err(MeshError::DriverStopped)
    ));
    assert!(matches!(
        handle.add_friend(PeerId::random(), Vec::new()).await,
        Err(MeshError::DriverStopped)
    ));
}

#[tokio::test]
async fn driver_stops_when_its_events_are_no_longer_read() {
    let (s, _) = server(Keypair::generate_ed25519()).await;
    let Node {
        handle,
        events,
        task,
        ..
    } = s;
    drop(events);
    // Any event now has nowhere to go: a refused send makes one.
    handle.send(PeerId::random(), Vec::new()).await.unwrap();
    timeout(WAIT, task).await.expect("driver stops").unwrap();
}

#[tokio::test]
async fn dropping_every_handle_stops_the_driver() {
    let (s, _) = server(Keypair::generate_ed25519()).await;
    let Node {
        handle,
        events: _events,
        task,
        ..
    } = s;
    drop(handle);
    timeout(WAIT, task).await.expect("driver stops").unwrap();
}

#[tokio::test]
async fn bad_settings_are_refused_with_clear_errors() {
    let key = Keypair::generate_ed25519();
    let phone_listening = MeshConfig {
        listen: loopback(),
        ..MeshConfig::phone()
    };
    let err = MeshDriver::new(key.clone(), phone_listening)
        .err()
        .expect("refused");
    assert!(matches!(err, MeshError::PhoneListens(_)), "{err}");

    let udp: Multiaddr = "/ip4/127.0.0.1/udp/0".parse().unwrap();
    let err = MeshDriver::new(key.clone(), MeshConfig::server(vec![udp.clone()]))
        .err()
        .expect("refused");
    assert!(
        matches!(err, MeshError::Listen { ref address, .. } if *address == udp),
        "{err}"
    );
    assert!(err.to_string().contains("/udp/0"), "{err}");

    let err = MeshDriver::new(
        key,
        MeshConfig {
            max_frame_bytes: 0,
            ..MeshConfig::phone()
        },
    )
    .err()
    .expect("refused");
    assert!(matches!(err, MeshError::ZeroFrameCap), "{err}");
}

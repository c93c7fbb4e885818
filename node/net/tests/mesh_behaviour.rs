//! The composed `MeshBehaviour` on in-process `libp2p-swarm-test` swarms
//! (memory transport): the friend gate both ways, the per-peer connection
//! limit, closing on removal, and frames with their acknowledgement.

use libp2p::connection_limits::Exceeded;
use libp2p::relay;
use libp2p::request_response::{self, Message};
use libp2p::swarm::dial_opts::{DialOpts, PeerCondition};
use libp2p::swarm::{DialError, ListenError, Swarm, SwarmEvent};
use libp2p_swarm_test::SwarmExt;
use porfiry_net::behaviour::{MeshBehaviour, MeshBehaviourEvent, ReachParts};
use porfiry_net::codec::Frame;
use porfiry_net::gate::{InviteDoor, NotAFriend};
use porfiry_net::limits::{MAX_ESTABLISHED_PER_PEER, MAX_TRANSPORT_FRAME_BYTES};
use porfiry_net::{Profile, ReachConfig};

fn new_swarm() -> Swarm<MeshBehaviour> {
    new_swarm_with_door(InviteDoor::default())
}

fn new_swarm_with_door(door: InviteDoor) -> Swarm<MeshBehaviour> {
    Swarm::new_ephemeral_tokio(|key| {
        // The memory transport carries these tests; the relay client's own
        // transport half is unused but must outlive the behaviour.
        let (relay_transport, relay_client) = relay::client::new(key.public().to_peer_id());
        Box::leak(Box::new(relay_transport));
        MeshBehaviour::new(
            &key.public(),
            Profile::Server,
            MAX_TRANSPORT_FRAME_BYTES,
            libp2p_stream::Behaviour::new(),
            door,
            ReachParts {
                relay_client,
                config: ReachConfig::default(),
                friends: Default::default(),
            },
        )
    })
}

/// A listening swarm whose memory address is dialable, and a dialer.
async fn pair() -> (Swarm<MeshBehaviour>, Swarm<MeshBehaviour>) {
    let dialer = new_swarm();
    let mut listener = new_swarm();
    listener.listen().with_memory_addr_external().await;
    (dialer, listener)
}

fn dial_opts(target: &Swarm<MeshBehaviour>) -> DialOpts {
    DialOpts::peer_id(*target.local_peer_id())
        .addresses(target.external_addresses().cloned().collect())
        .condition(PeerCondition::Always)
        .build()
}

fn befriend(a: &mut Swarm<MeshBehaviour>, b: &mut Swarm<MeshBehaviour>) {
    let (pa, pb) = (*a.local_peer_id(), *b.local_peer_id());
    assert!(a.behaviour_mut().allow(pb));
    assert!(b.behaviour_mut().allow(pa));
    assert!(a.behaviour().is_allowed(&pb) && b.behaviour().is_allowed(&pa));
}

#[tokio::test]
async fn dialling_a_peer_that_is_not_a_friend_is_denied() {
    let (mut dialer, listener) = pair().await;
    let Err(DialError::Denied { cause }) = dialer.dial(dial_opts(&listener)) else {
        panic!("dial to a stranger was not denied")
    };
    assert!(cause.downcast::<NotAFriend>().is_ok());
}

#[tokio::test]
async fn a_stranger_dialling_in_is_denied_at_establishment() {
    let (mut dialer, mut listener) = pair().await;
    // The dialer trusts the listener; the listener does not know the dialer.
    dialer.behaviour_mut().allow(*listener.local_peer_id());
    dialer.dial(dial_opts(&listener)).unwrap();
    let stranger = *dialer.local_peer_id();
    tokio::spawn(dialer.loop_on_next());
    let (peer, cause) = listener
        .wait(|e| match e {
            SwarmEvent::IncomingConnectionError {
                peer_id,
                error: ListenError::Denied { cause },
                ..
            } => Some((peer_id, cause)),
            SwarmEvent::ConnectionEstablished { .. } => panic!("stranger got a connection"),
            _ => None,
        })
        .await;
    assert_eq!(peer, Some(stranger));
    assert!(cause.downcast::<NotAFriend>().is_ok());
}

#[tokio::test]
async fn an_open_invite_door_lets_a_stranger_in_as_a_guest_but_never_dials_one() {
    let door = InviteDoor::default();
    let mut dialer = new_swarm();
    let mut listener = new_swarm_with_door(door.clone());
    listener.listen().with_memory_addr_external().await;
    door.set_open(true);
    dialer.behaviour_mut().allow(*listener.local_peer_id());
    dialer.dial(dial_opts(&listener)).unwrap();
    let stranger = *dialer.local_peer_id();
    // Outbound to the stranger stays denied even with the door open.
    let Err(DialError::Denied { cause }) = listener.dial(dial_opts(&dialer)) else {
        panic!("dial to a stranger was not denied")
    };
    assert!(cause.downcast::<NotAFriend>().is_ok());
    tokio::spawn(dialer.loop_on_next());
    let peer = listener
        .wait(|e| match e {
            SwarmEvent::ConnectionEstablished { peer_id, .. } => Some(peer_id),
            SwarmEvent::IncomingConnectionError { error, .. } => {
                panic!("guest refused: {error}")
            }
            _ => None,
        })
        .await;
    assert_eq!(peer, stranger);
    assert!(!listener.behaviour().is_allowed(&stranger));
}

#[tokio::test]
async fn friends_exchange_a_frame_and_its_acknowledgement() {
    let (mut dialer, mut listener) = pair().await;
    befriend(&mut dialer, &mut listener);
    dialer.connect(&mut listener).await;
    let listener_peer = *listener.local_peer_id();
    let sent_id = dialer
        .behaviour_mut()
        .send_frame(&listener_peer, b"frame".to_vec());

    let mut received = None;
    let (request_id, response) = loop {
        tokio::select! {
            event = listener.next_swarm_event() => {
                if let SwarmEvent::Behaviour(MeshBehaviourEvent::Frames(request_response::Event::Message {
                    peer,
                    message: Message::Request { request, channel, .. },
                    ..
                })) = event
                {
                    received = Some((peer, request));
                    assert!(listener.behaviour_mut().acknowledge(channel));
                }
            }
            event = dialer.next_swarm_event() => {
                if let SwarmEvent::Behaviour(MeshBehaviourEvent::Frames(request_response::Event::Message {
                    message: Message::Response { request_id, response },
                    ..
                })) = event
                {
                    break (request_id, response);
                }
            }
        }
    };
    assert_eq!(
        received,
        Some((*dialer.local_peer_id(), Frame::Body(b"frame".to_vec())))
    );
    assert_eq!(request_id, sent_id);
    assert!(response.is_empty(), "the acknowledgement is an empty frame");
}

#[tokio::test]
async fn a_connection_over_the_per_peer_limit_is_refused() {
    assert_eq!(MAX_ESTABLISHED_PER_PEER, 3);
    let (mut dialer, mut listener) = pair().await;
    befriend(&mut dialer, &mut listener);
    for _ in 0..MAX_ESTABLISHED_PER_PEER {
        dialer.connect(&mut listener).await;
    }
    dialer.dial(dial_opts(&listener)).unwrap();
    tokio::spawn(listener.loop_on_next());
    let cause = dialer
        .wait(|e| match e {
            SwarmEvent::OutgoingConnectionError {
                error: DialError::Denied { cause },
                ..
            } => Some(cause),
            SwarmEvent::ConnectionEstablished { .. } => panic!("connection over the limit allowed"),
            _ => None,
        })
        .await;
    let exceeded = cause
        .downcast::<Exceeded>()
        .expect("denied by the connection limit");
    assert_eq!(exceeded.limit(), MAX_ESTABLISHED_PER_PEER);
}

#[tokio::test]
async fn disallowing_a_friend_closes_its_connection() {
    let (mut dialer, mut listener) = pair().await;
    befriend(&mut dialer, &mut listener);
    dialer.connect(&mut listener).await;
    let listener_peer = *listener.local_peer_id();
    assert!(dialer.behaviour_mut().disallow(listener_peer));
    assert!(
        !dialer.behaviour_mut().disallow(listener_peer),
        "already gone"
    );
    let (
        [
            SwarmEvent::ConnectionClosed {
                peer_id: closed_dialer_side,
                ..
            },
        ],
        [SwarmEvent::ConnectionClosed { .. }],
    ) = libp2p_swarm_test::drive(&mut dialer, &mut listener).await
    else {
        panic!("connection not closed")
    };
    assert_eq!(closed_dialer_side, listener_peer);
    assert!(!dialer.is_connected(&listener_peer));
}

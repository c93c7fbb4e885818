//! Reaching friends that cannot be dialled, with real drivers on loopback
//! TCP: a friends-only relay (`--relay`) grants a slot to a hidden friend and
//! carries a circuit from another friend to it; a stranger gets neither a
//! slot nor a circuit, even when the relay's invitation door lets it connect
//! as a guest; hole punching (DCUtR) replaces a relayed link by a direct one
//! and the relayed one is closed (reported as a moved link). The links
//! snapshot names a relayed link's relay, and says why a friend is
//! unreachable: no address, refused at a dead address, or no relay in
//! common.

mod mesh_support;

use futures::StreamExt;
use libp2p::core::transport::ListenerId;
use libp2p::multiaddr::Protocol;
use libp2p::swarm::SwarmEvent;
use libp2p::swarm::dial_opts::DialOpts;
use mesh_support::{
    FAST, Node, WAIT, capture_warnings, connected, listening, loopback, received, start, wait_for,
};
use porfiry_net::limits::MAX_TRANSPORT_FRAME_BYTES;
use porfiry_net::swarm::build_swarm;
use porfiry_net::{
    InviteDoor, Keypair, Link, LinkRecord, LinksFile, LinksWatch, MeshConfig, MeshEvent, Multiaddr,
    PeerId, Profile, ReachConfig, RelayLimits, StreamControl,
};
use tokio::sync::watch;
use tokio::time::timeout;

/// A relay listening on loopback, with its address.
async fn relay(key: Keypair, streams: StreamControl) -> (Node, Multiaddr) {
    relay_at(key, streams, Vec::new()).await
}

/// [`relay`], told the addresses friends reach it at from outside.
async fn relay_at(
    key: Keypair,
    streams: StreamControl,
    external_addresses: Vec<Multiaddr>,
) -> (Node, Multiaddr) {
    let config = MeshConfig {
        reach: ReachConfig {
            relay: Some(RelayLimits::default()),
            external_addresses,
            ..ReachConfig::default()
        },
        streams,
        ..MeshConfig::server(loopback())
    };
    listening(key, config).await
}

/// `relay_addr/p2p/relay/p2p-circuit/p2p/target`.
fn via(relay_addr: &Multiaddr, relay: PeerId, target: PeerId) -> Multiaddr {
    relay_addr
        .clone()
        .with(Protocol::P2p(relay))
        .with(Protocol::P2pCircuit)
        .with(Protocol::P2p(target))
}

/// Waits until `peer`'s link in `links` is `want`.
async fn link_becomes(links: &mut watch::Receiver<LinksFile>, peer: PeerId, want: Link) {
    let key = peer.to_string();
    timeout(
        WAIT,
        links.wait_for(|l| l.friends.get(&key).is_some_and(|r| r.link == want)),
    )
    .await
    .unwrap_or_else(|_| panic!("{peer} never became {want}"))
    .expect("driver alive");
}

/// Waits until `peer`'s record in `links` says `why`.
async fn why_becomes(links: &mut watch::Receiver<LinksFile>, peer: PeerId, want: &str) {
    let key = peer.to_string();
    let waited = timeout(
        WAIT,
        links.wait_for(|l| {
            l.friends
                .get(&key)
                .is_some_and(|r| r.why.as_deref() == Some(want))
        }),
    )
    .await
    .map(|seen| seen.expect("driver alive").clone());
    if waited.is_err() {
        panic!(
            "{peer} was never unreachable for {want:?}: {:?}",
            *links.borrow()
        );
    }
}

/// `peer`'s record in `links` now.
fn record_of(links: &watch::Receiver<LinksFile>, peer: PeerId) -> LinkRecord {
    links.borrow().friends[&peer.to_string()].clone()
}

/// Waits until `node` listens through a relay circuit.
async fn reserved(node: &mut Node) -> Multiaddr {
    let (event, _) = wait_for(&mut node.events, |e| {
        matches!(e, MeshEvent::Listening { address } if address.iter().any(|p| p == Protocol::P2pCircuit))
    })
    .await;
    let MeshEvent::Listening { address } = event else {
        unreachable!()
    };
    address
}

/// A relay R running, friends with H and P (whose keys are handed back).
struct Trio {
    r: Node,
    r_addr: Multiaddr,
    r_peer: PeerId,
    h_key: Keypair,
    h_peer: PeerId,
    p_key: Keypair,
    p_peer: PeerId,
}

async fn relay_of_two_friends() -> Trio {
    let (r_key, h_key, p_key) = (
        Keypair::generate_ed25519(),
        Keypair::generate_ed25519(),
        Keypair::generate_ed25519(),
    );
    let (r_peer, h_peer, p_peer) = (
        r_key.public().to_peer_id(),
        h_key.public().to_peer_id(),
        p_key.public().to_peer_id(),
    );
    let (r, r_addr) = relay(r_key, StreamControl::new()).await;
    r.handle.add_friend(h_peer, Vec::new()).await.unwrap();
    r.handle.add_friend(p_peer, Vec::new()).await.unwrap();
    Trio {
        r,
        r_addr,
        r_peer,
        h_key,
        h_peer,
        p_key,
        p_peer,
    }
}

#[tokio::test]
async fn a_relay_behind_a_port_forward_offers_its_external_address() {
    let (r_key, h_key) = (Keypair::generate_ed25519(), Keypair::generate_ed25519());
    let r_peer = r_key.public().to_peer_id();
    let outside: Multiaddr = "/dns4/relay.example/tcp/4001".parse().unwrap();
    let (r, r_addr) = relay_at(r_key, StreamControl::new(), vec![outside.clone()]).await;
    r.handle
        .add_friend(h_key.public().to_peer_id(), Vec::new())
        .await
        .unwrap();
    let h_config = MeshConfig {
        backoff: FAST,
        ..MeshConfig::phone()
    }
    .with_friend(r_peer, vec![r_addr.clone()]);
    let mut h = start(h_key, h_config);
    // The slot's address is the one the operator gave, not the loopback
    // address the relay listens on (which no one outside could dial).
    let circuit = reserved(&mut h).await;
    assert!(
        circuit
            .to_string()
            .starts_with(&format!("{outside}/p2p/{r_peer}/p2p-circuit")),
        "{circuit}"
    );
}

#[tokio::test]
async fn a_hidden_friend_is_reached_through_a_friends_relay() {
    let Trio {
        r: _relay,
        r_addr,
        r_peer,
        h_key,
        h_peer,
        p_key,
        p_peer,
    } = relay_of_two_friends().await;

    // H listens nowhere: it dials R, sees R offers the relay, reserves.
    let h_config = MeshConfig {
        backoff: FAST,
        ..MeshConfig::phone()
    }
    .with_friend(r_peer, vec![r_addr.clone()])
    .with_friend(p_peer, Vec::new());
    let mut h = start(h_key, h_config);
    let h_circuit = reserved(&mut h).await;
    assert!(
        h_circuit.to_string().contains(&r_peer.to_string()),
        "{h_circuit}"
    );

    // P knows H only by its circuit address through R.
    let p_links = LinksWatch::default();
    let mut p_view = p_links.subscribe();
    let p_config = MeshConfig {
        backoff: FAST,
        reach: ReachConfig {
            links_watch: p_links,
            ..ReachConfig::default()
        },
        ..MeshConfig::phone()
    }
    .with_friend(r_peer, vec![r_addr.clone()])
    .with_friend(h_peer, vec![via(&r_addr, r_peer, h_peer)]);
    let mut p = start(p_key, p_config);
    connected(&mut p, h_peer).await;
    connected(&mut h, p_peer).await;
    link_becomes(&mut p_view, h_peer, Link::Relayed).await;
    link_becomes(&mut p_view, r_peer, Link::Direct).await;
    let h_record = record_of(&p_view, h_peer);
    assert_eq!(h_record.via, Some(r_peer.to_string()), "{h_record:?}");
    assert_eq!(h_record.why, None, "{h_record:?}");
    assert_eq!(
        record_of(&p_view, r_peer).via,
        None,
        "a direct link has no relay"
    );

    // Frames cross the circuit both ways.
    p.handle.send(h_peer, b"through R".to_vec()).await.unwrap();
    assert_eq!(received(&mut h, p_peer).await, b"through R");
    let big = vec![7u8; 1024 * 1024];
    h.handle.send(p_peer, big.clone()).await.unwrap();
    assert_eq!(
        received(&mut p, h_peer).await,
        big,
        "a frame over the stock relay's 128 KiB limit arrives whole"
    );
}

/// A raw swarm that trusts `friends` (its own gate), for a stranger's view.
fn stranger_swarm(
    key: Keypair,
    friends: &[PeerId],
) -> libp2p::Swarm<porfiry_net::behaviour::MeshBehaviour> {
    let mut swarm = build_swarm(
        key,
        Profile::Phone,
        MAX_TRANSPORT_FRAME_BYTES,
        libp2p_stream::Behaviour::new(),
        InviteDoor::default(),
        ReachConfig::default(),
        Default::default(),
    )
    .unwrap();
    for f in friends {
        swarm.behaviour_mut().allow(*f);
    }
    swarm
}

/// Drives `swarm` until the listener `id` closes, failing if it got an address.
async fn listener_closes(
    swarm: &mut libp2p::Swarm<porfiry_net::behaviour::MeshBehaviour>,
    id: ListenerId,
) {
    timeout(WAIT, async {
        loop {
            match swarm.select_next_some().await {
                SwarmEvent::ListenerClosed { listener_id, .. } if listener_id == id => return,
                SwarmEvent::NewListenAddr { address, .. } => {
                    panic!("a stranger got a relay slot: {address}")
                }
                _ => {}
            }
        }
    })
    .await
    .expect("the stranger's reservation ended")
}

#[tokio::test]
async fn a_stranger_gets_no_relay_slot_and_no_circuit_even_as_an_invitation_guest() {
    // Current-thread runtime: the relay's driver logs on this thread, so a
    // thread-local subscriber sees its refusals.
    let (log, _guard) = capture_warnings();
    let (r_key, h_key) = (Keypair::generate_ed25519(), Keypair::generate_ed25519());
    let (r_peer, h_peer) = (r_key.public().to_peer_id(), h_key.public().to_peer_id());
    let streams = StreamControl::new();
    let door = streams.door();
    let (mut r, r_addr) = relay(r_key, streams).await;
    r.handle.add_friend(h_peer, Vec::new()).await.unwrap();
    let h_config = MeshConfig {
        backoff: FAST,
        ..MeshConfig::phone()
    }
    .with_friend(r_peer, vec![r_addr.clone()]);
    let mut h = start(h_key, h_config);
    reserved(&mut h).await;

    let x_key = Keypair::generate_ed25519();
    let x_peer = x_key.public().to_peer_id();
    let mut x = stranger_swarm(x_key, &[r_peer, h_peer]);
    let circuit_listen = r_addr
        .clone()
        .with(Protocol::P2p(r_peer))
        .with(Protocol::P2pCircuit);

    // Door shut: the relay's gate refuses the stranger's connection.
    let id = x.listen_on(circuit_listen.clone()).unwrap();
    listener_closes(&mut x, id).await;
    wait_for(&mut r.events, |e| {
        *e == MeshEvent::PeerRefused { peer: x_peer }
    })
    .await;

    // Door open (an invitation is pending): the stranger connects as a
    // guest, but the relay refuses it a slot and a circuit.
    door.set_open(true);
    let id = x.listen_on(circuit_listen).unwrap();
    listener_closes(&mut x, id).await;
    assert!(
        log.text()
            .contains("refused a relay reservation from a peer that is not a friend"),
        "{}",
        log.text()
    );
    x.dial(
        DialOpts::peer_id(h_peer)
            .addresses(vec![via(&r_addr, r_peer, h_peer)])
            .build(),
    )
    .unwrap();
    let failed = timeout(WAIT, async {
        loop {
            match x.select_next_some().await {
                SwarmEvent::OutgoingConnectionError {
                    peer_id: Some(p),
                    error,
                    ..
                } if p == h_peer => return error.to_string(),
                SwarmEvent::ConnectionEstablished { peer_id, .. } if peer_id == h_peer => {
                    panic!("a stranger reached the hidden friend through the relay")
                }
                _ => {}
            }
        }
    })
    .await
    .expect("the circuit dial ended");
    assert!(!failed.is_empty());
    assert!(
        log.text()
            .contains("refused a relay circuit from a peer that is not a friend"),
        "{}",
        log.text()
    );
    // The hidden friend never heard of the stranger.
    h.handle.shutdown().await.unwrap();
    while let Some(event) = timeout(WAIT, h.events.recv()).await.expect("driver stops") {
        assert_ne!(event, MeshEvent::PeerConnected { peer: x_peer });
        assert_ne!(event, MeshEvent::PeerRefused { peer: x_peer });
    }
}

/// H behind R, P told only H's circuit: P reaches H through R, then hole
/// punching (DCUtR) makes the link direct. (A phone's port to dial from
/// cannot be tested here: on loopback P's punch dial to H's listen address
/// succeeds whatever port it comes from; `tests/tests/mesh_nat.rs` tests
/// it behind real NATs.)
#[tokio::test]
async fn hole_punching_replaces_a_relayed_link_by_a_direct_one() {
    let Trio {
        r,
        r_addr,
        r_peer,
        h_key,
        h_peer,
        p_key,
        p_peer,
    } = relay_of_two_friends().await;
    // H listens on loopback (as a home server behind NAT listens on its
    // LAN address), yet P is told only its circuit address.
    let h_config = MeshConfig {
        backoff: FAST,
        ..MeshConfig::server(loopback())
    }
    .with_friend(r_peer, vec![r_addr.clone()])
    .with_friend(p_peer, Vec::new());
    let mut h = start(h_key, h_config);
    reserved(&mut h).await;
    let p_links = LinksWatch::default();
    let mut p_view = p_links.subscribe();
    let p_config = MeshConfig {
        backoff: FAST,
        reach: ReachConfig {
            links_watch: p_links,
            ..ReachConfig::default()
        },
        ..MeshConfig::server(loopback())
    }
    .with_friend(r_peer, vec![r_addr.clone()])
    .with_friend(h_peer, vec![via(&r_addr, r_peer, h_peer)]);
    let mut p = start(p_key, p_config);
    connected(&mut p, h_peer).await;
    // DCUtR: the direct link comes up, the relayed one is closed, and the
    // friend stays connected throughout (no PeerDisconnected). The closed
    // connection is reported as a moved link: frames in flight on it were
    // lost, so the loop restarts catch-up over the direct one.
    link_becomes(&mut p_view, h_peer, Link::Direct).await;
    let (_, before_move) = wait_for(&mut p.events, |e| {
        *e == MeshEvent::LinkMoved { peer: h_peer }
    })
    .await;
    assert!(
        !before_move.contains(&MeshEvent::PeerDisconnected { peer: h_peer }),
        "{before_move:?}"
    );
    p.handle.send(h_peer, b"direct".to_vec()).await.unwrap();
    let (_, before) = wait_for(
        &mut h.events,
        |e| matches!(e, MeshEvent::FrameReceived { peer, .. } if *peer == p_peer),
    )
    .await;
    assert!(!before.contains(&MeshEvent::PeerDisconnected { peer: p_peer }));
    drop(r);
}

#[tokio::test]
async fn an_unreachable_friend_says_why_no_address_refused_or_no_relay_in_common() {
    let Trio {
        r: _relay,
        r_addr,
        r_peer,
        p_key,
        ..
    } = relay_of_two_friends().await;
    // A loopback port nothing listens on: dialling it is refused at once.
    let dead_port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let dead: Multiaddr = format!("/ip4/127.0.0.1/tcp/{dead_port}").parse().unwrap();
    let (d_peer, z_peer) = (PeerId::random(), PeerId::random());
    let p_links = LinksWatch::default();
    let mut p_view = p_links.subscribe();
    let p_config = MeshConfig {
        backoff: FAST,
        reach: ReachConfig {
            links_watch: p_links,
            ..ReachConfig::default()
        },
        ..MeshConfig::phone()
    }
    .with_friend(d_peer, vec![dead])
    .with_friend(z_peer, Vec::new());
    let p = start(p_key, p_config);
    why_becomes(&mut p_view, d_peer, "refused").await;
    // Z has no address and no relaying friend is connected yet.
    why_becomes(&mut p_view, z_peer, "no address").await;
    // R relays, but Z holds no slot there (R does not even know it).
    p.handle.add_friend(r_peer, vec![r_addr]).await.unwrap();
    link_becomes(&mut p_view, r_peer, Link::Direct).await;
    why_becomes(&mut p_view, z_peer, "no relay in common").await;
    let z = record_of(&p_view, z_peer);
    assert_eq!(
        (z.link, z.via.as_deref()),
        (Link::NotConnected, None),
        "{z:?}"
    );
    assert_eq!(
        record_of(&p_view, r_peer).why,
        None,
        "a connected friend has no why"
    );
}

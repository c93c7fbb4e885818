//! The composed libp2p behaviour of a node: friend gate, connection limits,
//! identify, ping, the frame request-response protocol and raw offload streams.
//!
//! Field order matters: libp2p asks each part in turn whether to accept a
//! connection, so the friend gate comes first and a stranger is denied before
//! any other part sets up a handler for it. Denial happens when the connection
//! is established (after noise told us the peer id) and before any stream is
//! opened, so nothing a stranger sends is ever read.

// `#[derive(NetworkBehaviour)]` generates the public `MeshBehaviourEvent`
// enum, one variant per field, and gives us no way to document its variants.
#![allow(missing_docs)]

use libp2p::connection_limits::{self, ConnectionLimits};
use libp2p::identity::PublicKey;
use libp2p::request_response::{self, OutboundRequestId, ProtocolSupport, ResponseChannel};
use libp2p::swarm::NetworkBehaviour;
use libp2p::swarm::behaviour::toggle::Toggle;
use libp2p::{PeerId, dcutr, identify, mdns, ping, relay};

use super::codec::{Frame, FrameCodec};
use super::config::Profile;
use super::gate::{FriendGate, InviteDoor};
use super::limits::{
    FRAME_PROTOCOL, IDENTIFY_PROTOCOL_VERSION, MAX_CONCURRENT_STREAMS, MAX_ESTABLISHED_PER_PEER,
    MAX_PENDING_INCOMING, REQUEST_TIMEOUT,
};
use super::reach::ReachConfig;
use super::relay::relay_config;
use super::streams::FriendSet;

/// Every protocol a Porfiry node speaks, behind the friend gate.
#[derive(NetworkBehaviour)]
pub struct MeshBehaviour {
    /// Only friends may connect, either way; removing one closes its links.
    /// While an invitation is open a few strangers may connect inbound as
    /// guests, for the invitation protocol only (see [`super::gate`]).
    gate: FriendGate,
    /// Caps on established and half-open connections.
    limits: connection_limits::Behaviour,
    /// Tells a friend our listen addresses and protocol version.
    identify: identify::Behaviour,
    /// Liveness checks; the driver closes a link whose ping fails.
    ping: ping::Behaviour,
    /// Opaque byte frames, one per request, acknowledged by an empty response.
    frames: request_response::Behaviour<FrameCodec>,
    /// Raw offload streams (`/porfiry/offload/1`), see [`super::streams`].
    streams: libp2p_stream::Behaviour,
    /// With `--relay`: circuits for friends only (see [`super::relay`]).
    pub(crate) relay: Toggle<relay::Behaviour>,
    /// Reserving slots at relaying friends and dialling through them.
    pub(crate) relay_client: relay::client::Behaviour,
    /// Hole punching: upgrades a relayed link to a direct one.
    dcutr: dcutr::Behaviour,
    /// With `--mdns`: friends on the LAN (strangers found are ignored).
    pub(crate) mdns: Toggle<mdns::tokio::Behaviour>,
}

/// The parts of [`MeshBehaviour`] that reach friends that cannot be dialled.
pub struct ReachParts {
    /// The relay client half the swarm builder made with its transport.
    pub relay_client: relay::client::Behaviour,
    /// What to enable.
    pub config: ReachConfig,
    /// The friend set the relay checks (the driver keeps it current).
    pub friends: FriendSet,
}

impl MeshBehaviour {
    /// A behaviour with an empty friend list and a frame cap of
    /// `max_frame_bytes`, admitting guests while `door` is open, pinging and
    /// identifying on `profile`'s clock.
    pub fn new(
        local_key: &PublicKey,
        profile: Profile,
        max_frame_bytes: u32,
        streams: libp2p_stream::Behaviour,
        door: InviteDoor,
        reach: ReachParts,
    ) -> Self {
        let local = local_key.to_peer_id();
        let relay = reach.config.relay.map(|limits| {
            let mut relay = relay::Behaviour::new(local, relay_config(limits, &reach.friends));
            // Serve reservations whether or not libp2p has confirmed an
            // external address: the operator said this node is reachable.
            relay.set_status(Some(relay::Status::Enable));
            relay
        });
        let mdns = if reach.config.mdns {
            match mdns::tokio::Behaviour::new(mdns::Config::default(), local) {
                Ok(m) => Some(m),
                Err(error) => {
                    tracing::warn!(%error, "LAN discovery (mDNS) is off: cannot start it");
                    None
                }
            }
        } else {
            None
        };
        let limits = ConnectionLimits::default()
            .with_max_established_per_peer(Some(MAX_ESTABLISHED_PER_PEER))
            .with_max_established(Some(reach.config.max_connections))
            .with_max_pending_incoming(Some(MAX_PENDING_INCOMING));
        let frames_config = request_response::Config::default()
            .with_request_timeout(REQUEST_TIMEOUT)
            .with_max_concurrent_streams(MAX_CONCURRENT_STREAMS);
        Self {
            gate: FriendGate::new(door),
            limits: connection_limits::Behaviour::new(limits),
            identify: identify::Behaviour::new(
                identify::Config::new(IDENTIFY_PROTOCOL_VERSION.to_owned(), local_key.clone())
                    .with_interval(profile.identify_interval()),
            ),
            ping: ping::Behaviour::new(ping::Config::new().with_interval(profile.ping_interval())),
            frames: request_response::Behaviour::with_codec(
                FrameCodec::new(max_frame_bytes),
                [(FRAME_PROTOCOL, ProtocolSupport::Full)],
                frames_config,
            ),
            streams,
            relay: relay.into(),
            relay_client: reach.relay_client,
            dcutr: dcutr::Behaviour::new(local),
            mdns: mdns.into(),
        }
    }

    /// Lets `peer` connect and be dialled. Returns whether it was new.
    pub fn allow(&mut self, peer: PeerId) -> bool {
        self.gate.allow(peer)
    }

    /// Stops letting `peer` connect and closes its open connections.
    /// Returns whether it had been allowed.
    pub fn disallow(&mut self, peer: PeerId) -> bool {
        self.gate.disallow(peer)
    }

    /// Closes every connection of a guest whose window is over.
    pub fn close_guest(&mut self, peer: PeerId) {
        if !self.gate.is_friend(&peer) {
            self.gate.close_all(peer);
        }
    }

    /// Whether `peer` is on the friend list.
    pub fn is_allowed(&self, peer: &PeerId) -> bool {
        self.gate.is_friend(peer)
    }

    /// Starts sending one frame to a connected `peer`.
    pub fn send_frame(&mut self, peer: &PeerId, frame: Vec<u8>) -> OutboundRequestId {
        self.frames.send_request(peer, Frame::Body(frame))
    }

    /// Acknowledges a received frame (an empty response). Returns false if the
    /// stream is already gone (timed out or connection closed).
    pub fn acknowledge(&mut self, channel: ResponseChannel<Vec<u8>>) -> bool {
        self.frames.send_response(channel, Vec::new()).is_ok()
    }
}

//! How a node's mesh is set up: its profile (server or phone), where it
//! listens, its friends and their addresses.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use libp2p::{Multiaddr, PeerId};

use super::error::MeshError;
use super::limits::{
    MAX_TRANSPORT_FRAME_BYTES, PHONE_IDENTIFY_INTERVAL, PHONE_IDLE_TIMEOUT, PHONE_PING_INTERVAL,
    PING_INTERVAL, SERVER_IDENTIFY_INTERVAL, SERVER_IDLE_TIMEOUT,
};
use super::reach::ReachConfig;
use super::redial::{Backoff, REDIAL_BACKOFF};
use super::streams::StreamControl;

/// How the node takes part in the mesh (also `porfiry run --profile`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// Always on: listens on its addresses and keeps idle links for an hour.
    Server,
    /// Battery and NAT bound: never listens, dials its friends and redials
    /// them with backoff when the link drops.
    Phone,
}

impl Profile {
    /// How long this profile keeps a connection nothing uses.
    pub fn idle_timeout(self) -> Duration {
        match self {
            Profile::Server => SERVER_IDLE_TIMEOUT,
            Profile::Phone => PHONE_IDLE_TIMEOUT,
        }
    }

    /// How often this profile pings each connection (see the constants).
    pub fn ping_interval(self) -> Duration {
        match self {
            Profile::Server => PING_INTERVAL,
            Profile::Phone => PHONE_PING_INTERVAL,
        }
    }

    /// How often this profile repeats identify on a connection.
    pub fn identify_interval(self) -> Duration {
        match self {
            Profile::Server => SERVER_IDENTIFY_INTERVAL,
            Profile::Phone => PHONE_IDENTIFY_INTERVAL,
        }
    }

    /// The CLI spelling, `server` or `phone`.
    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Server => "server",
            Profile::Phone => "phone",
        }
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Profile {
    type Err = MeshError;

    fn from_str(s: &str) -> Result<Self, MeshError> {
        match s {
            "server" => Ok(Profile::Server),
            "phone" => Ok(Profile::Phone),
            other => Err(MeshError::UnknownProfile(other.to_owned())),
        }
    }
}

/// A friend: the only kind of peer that may connect. A friend with addresses
/// is dialled (and redialled); one without is a friend that dials us.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Friend {
    /// The friend's libp2p identity (its ed25519 node key).
    pub peer: PeerId,
    /// Where to dial it; empty if it dials us.
    pub addresses: Vec<Multiaddr>,
}

/// Everything the driver needs besides the node key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MeshConfig {
    /// Server or phone.
    pub profile: Profile,
    /// Addresses to listen on (server only; a phone with any is an error).
    pub listen: Vec<Multiaddr>,
    /// Friends known at start; more come and go through `MeshHandle`.
    pub friends: Vec<Friend>,
    /// Cap on frame bodies; [`MAX_TRANSPORT_FRAME_BYTES`] unless a test needs another.
    pub max_frame_bytes: u32,
    /// Redial schedule for friends with addresses.
    pub backoff: Backoff,
    /// Offload streams; the driver takes its behaviour. Pass a clone of one
    /// made earlier to hold the control before the driver runs.
    pub streams: StreamControl,
    /// Relaying for friends, LAN discovery and the links snapshot.
    pub reach: ReachConfig,
    /// Acknowledge a friend's frame only when the consumer takes it
    /// (`MeshEvent::FrameToTake`, then `FrameTaker::taken`), so the
    /// friend's send window bounds what of it waits on this node; off (each
    /// frame acknowledged on arrival, `FrameReceived`) unless the consumer
    /// takes frames that way: the replication daemon does.
    pub ack_when_taken: bool,
}

impl MeshConfig {
    /// A server listening on `listen`, with no friends yet.
    pub fn server(listen: Vec<Multiaddr>) -> Self {
        Self {
            profile: Profile::Server,
            listen,
            friends: Vec::new(),
            max_frame_bytes: MAX_TRANSPORT_FRAME_BYTES,
            backoff: REDIAL_BACKOFF,
            streams: StreamControl::new(),
            reach: ReachConfig::default(),
            ack_when_taken: false,
        }
    }

    /// A phone (no listening), with no friends yet.
    pub fn phone() -> Self {
        Self {
            profile: Profile::Phone,
            ..Self::server(Vec::new())
        }
    }

    /// Adds a friend known at start.
    pub fn with_friend(mut self, peer: PeerId, addresses: Vec<Multiaddr>) -> Self {
        self.friends.push(Friend { peer, addresses });
        self
    }

    /// Checks the settings fit together.
    pub fn validate(&self) -> Result<(), MeshError> {
        if self.profile == Profile::Phone && !self.listen.is_empty() {
            return Err(MeshError::PhoneListens(self.listen.clone()));
        }
        if self.max_frame_bytes == 0 {
            return Err(MeshError::ZeroFrameCap);
        }
        listen_transports_built(&self.listen, super::swarm::QUIC_BUILT)
    }
}

/// Refuses a QUIC address in `listen` when `quic_built` is false (a phone
/// build); kept apart from [`MeshConfig::validate`] so both builds' answers
/// are tested in the one build CI makes.
fn listen_transports_built(listen: &[Multiaddr], quic_built: bool) -> Result<(), MeshError> {
    match listen.iter().find(|a| is_quic(a)) {
        Some(quic) if !quic_built => Err(MeshError::NoQuic(quic.clone())),
        _ => Ok(()),
    }
}

/// Whether `address` is a QUIC one (`/udp/…/quic-v1`).
pub fn is_quic(address: &Multiaddr) -> bool {
    address.iter().any(|p| {
        matches!(
            p,
            libp2p::multiaddr::Protocol::QuicV1 | libp2p::multiaddr::Protocol::Quic
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_parses_its_cli_spelling_and_nothing_else() {
        assert_eq!("server".parse::<Profile>().unwrap(), Profile::Server);
        assert_eq!("phone".parse::<Profile>().unwrap(), Profile::Phone);
        for p in [Profile::Server, Profile::Phone] {
            assert_eq!(p.to_string().parse::<Profile>().unwrap(), p);
        }
        let err = "Phone".parse::<Profile>().unwrap_err();
        assert!(matches!(err, MeshError::UnknownProfile(ref s) if s == "Phone"));
        assert!(err.to_string().contains("phone|server"));
    }

    #[test]
    fn server_keeps_idle_links_longer_than_a_phone() {
        assert!(Profile::Server.idle_timeout() > Profile::Phone.idle_timeout());
    }

    #[test]
    fn a_phone_pings_and_identifies_less_often_than_a_server() {
        assert!(Profile::Phone.ping_interval() > Profile::Server.ping_interval());
        assert!(Profile::Phone.identify_interval() > Profile::Server.identify_interval());
        // The server's pings keep a phone's NAT mapping alive: they must come
        // before common gateways' ~60 s idle timeout.
        assert!(Profile::Server.ping_interval() < Duration::from_secs(60));
    }

    #[test]
    fn a_quic_listen_address_is_refused_only_where_quic_is_not_built() {
        let quic: Multiaddr = "/ip4/127.0.0.1/udp/0/quic-v1".parse().unwrap();
        assert!(is_quic(&quic));
        assert!(!is_quic(&"/ip4/127.0.0.1/tcp/0".parse().unwrap()));
        let listen = vec!["/ip4/127.0.0.1/tcp/0".parse().unwrap(), quic.clone()];
        assert!(listen_transports_built(&listen, true).is_ok());
        assert!(listen_transports_built(&listen[..1], false).is_ok());
        let err = listen_transports_built(&listen, false).unwrap_err();
        assert!(matches!(err, MeshError::NoQuic(ref a) if *a == quic));
        assert!(err.to_string().contains("TCP only"), "{err}");
    }

    #[test]
    fn phone_that_listens_is_refused() {
        let mut config = MeshConfig::phone();
        assert!(config.validate().is_ok());
        config.listen.push("/ip4/127.0.0.1/tcp/0".parse().unwrap());
        assert!(matches!(config.validate(), Err(MeshError::PhoneListens(_))));
    }

    #[test]
    fn zero_frame_cap_is_refused() {
        let config = MeshConfig {
            max_frame_bytes: 0,
            ..MeshConfig::server(Vec::new())
        };
        assert!(matches!(config.validate(), Err(MeshError::ZeroFrameCap)));
    }

    #[test]
    fn with_friend_collects_friends() {
        let peer = PeerId::random();
        let config = MeshConfig::phone().with_friend(peer, Vec::new());
        assert_eq!(
            config.friends,
            [Friend {
                peer,
                addresses: Vec::new()
            }]
        );
    }
}

//! Everything that can go wrong setting up or talking to the mesh driver.

use std::io;

use libp2p::Multiaddr;
use libp2p::core::transport::TransportError;

/// A mesh setup or driver failure, one variant per cause.
#[derive(Debug, thiserror::Error)]
pub enum MeshError {
    /// A profile name other than `server` or `phone`.
    #[error("unknown profile {0:?}: expected phone|server")]
    UnknownProfile(String),
    /// The phone profile was given addresses to listen on.
    #[error("the phone profile does not listen, but listen addresses were given: {0:?}")]
    PhoneListens(Vec<Multiaddr>),
    /// A QUIC listen address in a build without QUIC (a phone build).
    #[error("cannot listen on {0}: this build speaks TCP only (no QUIC); use a /tcp/ address")]
    NoQuic(Multiaddr),
    /// A frame cap of zero would refuse every frame.
    #[error("the frame size cap must be above zero")]
    ZeroFrameCap,
    /// The noise handshake could not be set up from the node key.
    #[error("cannot set up the noise handshake: {0}")]
    Noise(#[from] libp2p::noise::Error),
    /// A listen address was refused by the transport (bad form or in use).
    #[error("cannot listen on {address}: {source}")]
    Listen {
        /// The address refused.
        address: Multiaddr,
        /// The transport's reason.
        #[source]
        source: TransportError<io::Error>,
    },
    /// The command queue is full (only from `try_command`).
    #[error("the mesh driver's command queue is full")]
    CommandQueueFull,
    /// An offload stream was asked of a peer that is not a friend.
    #[error("cannot open an offload stream to {peer}: not a friend")]
    NotFriend {
        /// The peer asked for.
        peer: libp2p::PeerId,
    },
    /// The friend does not accept offload streams (not serving, or an old version).
    #[error("friend {peer} does not accept offload streams")]
    StreamUnsupported {
        /// The friend.
        peer: libp2p::PeerId,
    },
    /// The friend could not be reached, or the stream could not be set up.
    #[error("cannot open an offload stream to friend {peer}: {reason}")]
    StreamOpen {
        /// The friend.
        peer: libp2p::PeerId,
        /// Why (not reachable, connection reset, ...).
        reason: String,
    },
    /// Offload streams are already being accepted by another acceptor.
    #[error("offload streams are already being accepted")]
    AlreadyAccepting,
    /// The stream control given in the config was already used by a driver.
    #[error("this stream control already belongs to a running mesh driver")]
    StreamsTaken,
    /// The driver task has ended, so the command was not delivered.
    #[error("the mesh driver has stopped")]
    DriverStopped,
}

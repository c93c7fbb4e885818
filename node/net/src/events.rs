//! What goes into the driver (commands) and what comes out (events).
//!
//! Frames are opaque bytes: the caller encodes wire messages before `Send` and
//! decodes and verifies `FrameReceived` bodies itself, so the engine plugs in
//! here without the driver changing.

use libp2p::request_response::OutboundFailure;
use libp2p::{Multiaddr, PeerId};

use super::codec::FrameError;

/// An instruction to the driver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MeshCommand {
    /// Let `peer` connect; dial it at `addresses` (if any) and keep redialling.
    /// Adding a known friend replaces its addresses.
    AddFriend {
        /// The friend.
        peer: PeerId,
        /// Where to dial it; empty if it dials us.
        addresses: Vec<Multiaddr>,
    },
    /// Stop letting `peer` connect and close its connections now.
    RemoveFriend {
        /// The former friend.
        peer: PeerId,
    },
    /// Send one frame to a connected friend.
    Send {
        /// The friend.
        peer: PeerId,
        /// The frame body (one wire message).
        frame: Vec<u8>,
    },
    /// Send a group of frames to a connected friend and report, with
    /// [`MeshEvent::FrameDone`], when every one of them has been
    /// acknowledged or has failed (an empty group is reported at once).
    /// The replication daemon sends a catch-up chunk this way, so the
    /// engine hands out the next chunk only once this one has drained.
    SendTracked {
        /// The friend.
        peer: PeerId,
        /// The frame bodies (one wire message each), sent in order.
        frames: Vec<Vec<u8>>,
        /// Opaque to the driver; handed back in `FrameDone`.
        tag: SendTag,
    },
    /// Stop the driver: listeners and connections close, the task ends.
    Shutdown,
}

/// What a [`MeshCommand::SendTracked`] group stands for, handed back
/// unchanged in [`MeshEvent::FrameDone`]: a catch-up session's chunk and how
/// many envelopes it carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SendTag {
    /// The catch-up session.
    pub session: u64,
    /// The chunk's number within it.
    pub chunk: u32,
    /// Envelopes packed into the frames.
    pub items: u32,
}

/// Something that happened on the mesh.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MeshEvent {
    /// A listener is bound to `address` (server profile).
    Listening {
        /// The bound address.
        address: Multiaddr,
    },
    /// The addresses this node can be reached at changed: every listen
    /// address (relay circuits held included) and external address, each
    /// once, sorted. Friends are told them in a `reachable_at` item.
    Reachable {
        /// Where the node can be reached now.
        addresses: Vec<Multiaddr>,
    },
    /// One of several connections to a friend closed and another stays up
    /// (the relayed one closed once a direct one came up): frames in flight
    /// on it, ours and the friend's, are lost, so catch-up sessions with
    /// the friend start again over the link that stays.
    LinkMoved {
        /// The friend.
        peer: PeerId,
    },
    /// The first connection to a friend is up.
    PeerConnected {
        /// The friend.
        peer: PeerId,
    },
    /// The last connection to a friend closed.
    PeerDisconnected {
        /// The friend.
        peer: PeerId,
    },
    /// A friend sent a frame (already acknowledged to it).
    FrameReceived {
        /// The friend.
        peer: PeerId,
        /// The frame body.
        frame: Vec<u8>,
    },
    /// A friend sent a frame that waits for the consumer to take it
    /// (`MeshConfig::ack_when_taken`): the friend's send window keeps a slot
    /// for it until the consumer says it took frame `id`
    /// (`MeshHandle::frame_taker`). The
    /// consumer must take every such frame, in any order.
    FrameToTake {
        /// The friend.
        peer: PeerId,
        /// The frame body.
        frame: Vec<u8>,
        /// What to hand back once the frame is taken.
        id: FrameId,
    },
    /// A friend's frame broke the framing (over the cap, or cut short); the
    /// rest of it was not read, its stream was dropped unanswered, the
    /// connection kept.
    FrameRejected {
        /// The friend.
        peer: PeerId,
        /// What was wrong with the framing.
        reason: FrameError,
    },
    /// A frame we were asked to send was not acknowledged.
    SendFailed {
        /// The friend it was for.
        peer: PeerId,
        /// Why it was not acknowledged.
        reason: SendFailure,
    },
    /// A peer that is not a friend tried to connect and was refused.
    PeerRefused {
        /// The peer refused.
        peer: PeerId,
    },
    /// An incoming connection was refused because the node already holds
    /// its most connections (`ReachConfig::max_connections`).
    AtConnectionCap {
        /// The peer, if it was known by then.
        peer: Option<PeerId>,
    },
    /// Every frame of a [`MeshCommand::SendTracked`] group has left the
    /// driver: acknowledged by the friend (`delivered`), or at least one
    /// failed (link closed, refused, not connected).
    FrameDone {
        /// The friend.
        peer: PeerId,
        /// The group's tag.
        tag: SendTag,
        /// True if every frame was acknowledged.
        delivered: bool,
    },
}

/// A received frame waiting to be taken ([`MeshEvent::FrameToTake`]).
///
/// The number is the driver's count of frames handed out. Only the driver
/// makes real ones; the field is public so the consumer's tests (in
/// `porfiry-mesh`) can make their own, and an id the driver never handed
/// out is ignored when taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FrameId(pub u64);

/// Why a frame we sent was not acknowledged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SendFailure {
    /// The frame is over the cap; nothing was sent.
    TooLarge {
        /// The frame's length in bytes.
        len: u64,
        /// The cap it is over.
        max: u32,
    },
    /// The peer is not a friend; nothing was sent.
    NotFriend,
    /// The friend is not connected; nothing was sent (catch-up covers it later).
    NotConnected,
    /// The friend's queue is full; nothing was sent.
    QueueFull,
    /// The link closed before the frame was acknowledged; it may or may not
    /// have arrived.
    ConnectionClosed,
    /// No acknowledgement within the request timeout; it may have arrived.
    Timeout,
    /// The friend does not speak our frame protocol.
    Unsupported,
    /// The stream failed (for example, the friend refused the frame).
    Io(String),
}

impl From<&OutboundFailure> for SendFailure {
    fn from(failure: &OutboundFailure) -> Self {
        match failure {
            OutboundFailure::DialFailure | OutboundFailure::ConnectionClosed => {
                Self::ConnectionClosed
            }
            OutboundFailure::Timeout => Self::Timeout,
            OutboundFailure::UnsupportedProtocols => Self::Unsupported,
            OutboundFailure::Io(error) => match FrameError::from_io(error) {
                Some(FrameError::TooLarge { len, max }) => Self::TooLarge {
                    len: *len,
                    max: *max,
                },
                _ => Self::Io(error.to_string()),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io;

    use super::*;

    fn frame_io(e: FrameError) -> io::Error {
        io::Error::new(io::ErrorKind::InvalidData, e)
    }

    #[test]
    fn outbound_failures_map_to_send_failures() {
        assert_eq!(
            SendFailure::from(&OutboundFailure::Timeout),
            SendFailure::Timeout
        );
        assert_eq!(
            SendFailure::from(&OutboundFailure::ConnectionClosed),
            SendFailure::ConnectionClosed
        );
        assert_eq!(
            SendFailure::from(&OutboundFailure::DialFailure),
            SendFailure::ConnectionClosed
        );
        assert_eq!(
            SendFailure::from(&OutboundFailure::UnsupportedProtocols),
            SendFailure::Unsupported
        );
        let big = OutboundFailure::Io(frame_io(FrameError::TooLarge { len: 9, max: 4 }));
        assert_eq!(
            SendFailure::from(&big),
            SendFailure::TooLarge { len: 9, max: 4 }
        );
        let other = OutboundFailure::Io(io::Error::other("reset"));
        assert_eq!(SendFailure::from(&other), SendFailure::Io("reset".into()));
    }
}

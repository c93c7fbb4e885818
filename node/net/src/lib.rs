//! The libp2p mesh driver: the only place in the workspace that knows libp2p.
//! `porfiry-mesh` re-exports it as `porfiry_mesh::net` (and [`backoff`] as
//! `porfiry_mesh::backoff`); it depends on no other workspace crate.
//!
//! A node runs one [`MeshDriver`] task. The rest of the node talks to it
//! through a [`MeshHandle`] (commands: add/remove friend, send a frame,
//! shutdown) and reads [`MeshEvent`]s (listening, peer connected/disconnected,
//! frame received/rejected, send failed, stranger refused). Frames are opaque
//! bytes; the replication engine's wire messages are encoded and verified by
//! whoever sits between the engine and this driver.
//!
//! Files: [`limits`] (every number, with its reason), [`config`] (profiles,
//! friends), [`codec`] (length-prefixed frames with a size cap checked before
//! the body is read), [`behaviour`] (friend gate, connection limits, identify,
//! ping, frames), [`swarm`] (TCP + noise + yamux), [`redial`] (pure backoff
//! schedule), [`outbox`] (pure per-peer send window), [`events`] (commands and
//! events), [`streams`] (raw offload streams), [`gate`] (friends only, and invitation guests),
//! [`invite_streams`] (`/porfiry/invite/1` streams), [`model_streams`] (`/porfiry/model/1` streams), [`handle`] (the command handle), [`driver`] (the task), [`error`],
//! [`relay`] (`--relay`: circuits for friends only), [`reach`] (relay
//! reservations, circuit addresses, LAN discovery settings), [`links`]
//! (direct / relayed / not connected per friend, `links.json`), [`backoff`]
//! (the one jittered exponential backoff, for redials here and model retries
//! in the agent).

pub mod backoff;
pub mod behaviour;
pub mod codec;
pub(crate) mod config;
pub(crate) mod driver;
pub(crate) mod error;
pub(crate) mod events;
pub mod gate;
pub(crate) mod handle;
pub(crate) mod invite_streams;
pub mod limits;
pub(crate) mod links;
pub(crate) mod model_streams;
pub(crate) mod outbox;
pub(crate) mod reach;
pub(crate) mod redial;
pub mod relay;
pub(crate) mod streams;
pub mod swarm;
pub(crate) mod unreachable;

pub use codec::FrameError;
pub use config::{Friend, MeshConfig, Profile};
pub use driver::MeshDriver;
pub use error::MeshError;
pub use events::{FrameId, MeshCommand, MeshEvent, SendFailure, SendTag};
pub use gate::{GUEST_WINDOW, InviteDoor, MAX_GUESTS};
pub use handle::{FrameTaker, MeshHandle};
pub use invite_streams::{INVITE_PROTOCOL, IncomingInvites};
pub use links::{LINKS_FILE_NAME, Link, LinkRecord, LinksFile};
pub use model_streams::{IncomingModelStreams, MODEL_PROTOCOL};
pub use reach::{LinksWatch, ReachConfig, check_friend_address, without_peer_suffix};
pub use redial::Backoff;
pub use relay::RelayLimits;
pub use streams::{IncomingOffload, OFFLOAD_PROTOCOL, StreamControl};

/// The libp2p types the rest of the node needs, so it never imports libp2p.
pub use libp2p::identity::Keypair;
pub use libp2p::multiaddr::Protocol;
pub use libp2p::{Multiaddr, PeerId, Stream};

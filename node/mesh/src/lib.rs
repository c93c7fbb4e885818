//! The Porfiry node's network and the node data it carries: the replication
//! loop around the sans-IO engine, sharing (local rows ↔ signed items),
//! invitations, and the node itself as a library, over `porfiry-net`'s
//! libp2p driver (re-exported as [`net`], with the raw streams offload and
//! model sharing ride on; their logic is `porfiry-offload`'s and
//! `porfiry-model-share`'s).
//!
//! **What it offers.** [`Node::spawn`] opens (or creates) a data dir and runs
//! the replication loop, the mesh driver and the database actor on a thread
//! of their own; the [`NodeHandle`] it returns posts notes, changes friends,
//! answers status and redeems invitations. Below it, by module:
//! - [`net`] — `porfiry-net` re-exported: the libp2p driver (the only code
//!   that knows libp2p), its handle, events, limits, profiles and reach
//!   (relay, hole punching, LAN);
//! - [`replication`] — the running loop: engine inputs and outputs, frames
//!   verified on their own thread, catch-up chunks, other processes' writes;
//! - [`sharing`] — rows becoming signed items and friends' items becoming
//!   rows, clubs, note text;
//! - [`invite`] — one-line invitation codes and their redemption;
//! - [`friends`], [`notes`] — the checks and writes the CLI and the handle
//!   share, so both refuse the same input the same way;
//! - [`init`], [`seed`], [`lock`], [`data_dir`] — a data dir: its files,
//!   creating and seeding it, the one-daemon lock;
//! - [`events`] — what wakes the cognitive core (a note arrived, a process
//!   ended), sent from here and from the agent's tools;
//! - [`backoff`] (`porfiry-net`'s, re-exported), [`clock`] — retry
//!   schedules and the one wall-clock read.
//!
//! **What it must not do**: know the LLM's wire format, the chat loop, the
//! cognitive core's logic or HTTP; hold replication rules that mesh-sim
//! would need (those live in `porfiry-protocol`'s engine).

pub mod clock;
pub mod data_dir;
pub mod devices;
pub mod events;
mod friend_ids;
mod friend_names;
pub mod friends;
pub mod init;
pub mod invite;
pub mod language;
pub mod lock;
pub mod node;
pub mod notes;
pub mod replication;
pub mod seed;
pub mod sharing;

/// The libp2p driver, its own crate; `porfiry_mesh::net::…` paths stay.
pub use porfiry_net as net;
/// The one jittered exponential backoff (mesh redials, model retries).
pub use porfiry_net::backoff;

pub use data_dir::DataDir;
pub use events::{CoreEvent, CoreEvents};
pub use node::{
    FriendCatchup, FriendView, Node, NodeConfig, NodeError, NodeHandle, NodeJoin, NodeStatus,
    NotePost, NoteView, NotesQuery, Origin, Posted, Stopped,
};
pub use porfiry_net::{Multiaddr, PeerId, Profile};

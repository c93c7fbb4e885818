//! The Porfiry node's network and the node data it carries: the libp2p
//! driver, the replication loop around the sans-IO engine, sharing (local
//! rows ↔ signed items), the raw streams offload and model sharing ride on
//! (their logic is `porfiry-offload`'s and `porfiry-model-share`'s),
//! invitations, and the node itself as a library.
//!
//! **What it offers.** [`Node::spawn`] opens (or creates) a data dir and runs
//! the replication loop, the mesh driver and the database actor on a thread
//! of their own; the [`NodeHandle`] it returns posts notes, changes friends,
//! answers status and redeems invitations. Below it, by module:
//! - [`net`] — the libp2p driver (the only code that knows libp2p): its
//!   handle, events, limits, profiles and reach (relay, hole punching, LAN);
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
//! - [`backoff`], [`clock`] — retry schedules and the one wall-clock read.
//!
//! **What it must not do**: know the LLM's wire format, the chat loop, the
//! cognitive core's logic or HTTP; hold replication rules that mesh-sim
//! would need (those live in `porfiry-protocol`'s engine).

pub mod backoff;
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
pub mod net;
pub mod node;
pub mod notes;
pub mod replication;
pub mod seed;
pub mod sharing;

pub use data_dir::DataDir;
pub use events::{CoreEvent, CoreEvents};
pub use net::{Multiaddr, PeerId, Profile};
pub use node::{
    FriendCatchup, FriendView, Node, NodeConfig, NodeError, NodeHandle, NodeJoin, NodeStatus,
    NotePost, NoteView, NotesQuery, Origin, Posted, Stopped,
};

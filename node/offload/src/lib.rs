//! Offload: a friend uses this node's model, or this node a friend's, over the
//! mesh protocol `/porfiry/offload/1` — one stream per request, the answer
//! streamed back, bounded and cancellable.
//!
//! Files: [`wire`] (frames and their caps), [`capacity`] (global and per-friend
//! slots), [`server`] ([`OffloadServer`]: permission, capacity, cancellation),
//! [`client`] ([`FriendLlm`]: the `Llm` over a friend's model, deadlines and
//! failover), [`choice`] (which friend to ask), [`mesh`] (the mesh's
//! `StreamControl` as the opener, the accept loop). Everything works on any
//! `futures::io` stream, so tests run on in-memory pipes; the node plugs in the
//! mesh's streams through [`OffloadOpener`].
//!
//! Its own crate, on top of `porfiry-mesh`: the mesh opens and accepts the raw
//! `/porfiry/offload/1` streams (`porfiry_mesh::net::StreamControl`,
//! `porfiry_mesh::net::IncomingOffload`) and knows nothing of what they carry;
//! this crate is what they carry.

pub(crate) mod capacity;
pub(crate) mod choice;
pub(crate) mod client;
pub(crate) mod mesh;
pub(crate) mod server;
pub(crate) mod wire;

pub use capacity::{Capacity, DEFAULT_GLOBAL_SLOTS, DEFAULT_PER_PEER_SLOTS};
pub use choice::{Offer, Recent, rank};
pub use client::{FriendLlm, FriendLlmConfig, OffloadIo, OffloadOpener, OffloadStream};
pub use mesh::serve_incoming;
pub use server::{OffloadPermissions, OffloadServer, Served, ServerLimits};
pub use wire::{
    ClientFrame, ErrorKind, MAX_OFFLOAD_FRAME_BYTES, MAX_OFFLOAD_REQUEST_BYTES, OffloadRequest,
    ServerFrame,
};

//! Model sharing: a node run with `--share-models` serves its registered
//! model files to friends allowed to pull them, over `/porfiry/model/1`,
//! and a node (a phone, `porfiry model pull NAME --from FRIEND`) fetches
//! one — the friend's signed list names each file's size and SHA-256; the
//! transfer is chunked, resumed after a cut, verified before it is kept,
//! refused before it starts when the disk lacks room, and held while the
//! phone's connection is metered.
//!
//! Files: [`wire`] (frames), [`list`] (the signed list), [`transfer`] (the
//! pure decisions: plan, byte count, verdict), [`permission`] (who may
//! pull), [`catalog`] (what is shared, hashed), [`server`]
//! ([`ModelServer`]), [`client`] ([`pull_from_friend`]), [`register`] (the
//! pulled file in the registry), [`mesh`] (the node's accept loop),
//! [`dial`] (a pull from a process that runs no node).

pub mod catalog;
pub mod client;
pub mod dial;
pub mod list;
pub mod mesh;
pub mod permission;
pub mod register;
pub mod server;
pub mod transfer;
pub mod wire;

pub use client::{
    ModelOpener, ModelPullError, PullConditions, PullEvent, PullTarget, PulledModel, Unmetered,
    friend_list, pull_from_friend,
};
pub use dial::pull_over_own_link;
pub use list::{ListedModel, ModelList, SignedList};
pub use mesh::{serve_models, start_model_sharing};
pub use permission::{DbPermissions, ModelPermissions, may_pull_models, set_share_models};
pub use register::{Registered, register_pulled};
pub use server::{ModelServer, RegistryModels, Served, SharedModels};

/// The size of each read and write on both sides: large enough that the
/// per-chunk costs (a syscall, a hash update, a progress callback) are
/// noise beside the bytes at hundreds of MB/s over loopback, small enough
/// that a phone's listener hears of progress every 256 KiB (several times
/// a second on slow Wi-Fi) and a buffer per transfer stays small.
pub const CHUNK_BYTES: usize = 256 * 1024;

/// The most entries a list holds: a family server registers a handful of
/// models; this keeps the signed list far below the frame cap.
pub const MAX_LISTED_MODELS: usize = 64;

/// Transfers a server runs at once: a home server's disk and uplink are
/// shared, four phones already fill a home uplink, and more would only
/// split it; one more is refused as busy at once, not queued.
pub const MAX_CONCURRENT_TRANSFERS: usize = 4;

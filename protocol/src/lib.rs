//! Porfiry's wire-level vocabulary, with no IO: node identity, the signed item
//! envelope, the audience rules and (later) the sans-IO replication engine.
//!
//! Nothing here touches sockets, tokio, SQLite, the wall clock or an ambient
//! RNG: callers pass time and randomness in. (The one exception is the key
//! file: `NodeKey::save`/`load` read and write the path they are given.)
//! The engine's share of that promise is checked by clippy: the clock, file,
//! RNG and random-hasher paths listed in `protocol/clippy.toml` are allowed
//! here for the crate (for `identity.rs`) and denied in `engine/`.
//!
//! Layout: `item/` is everything about one item (id, kind, audience, body,
//! payload, envelope, checks, verification, the routing record); `wire/` the
//! messages friends exchange; `engine/` the sans-IO replication engine;
//! `club/` clubs and their member book; `devices/` a person's devices
//! (link statements and the device book); `mind/` a person's long-term memory
//! as its devices replicate it (record body, version vector, merge rule);
//! `range_sync/` the set reconciliation
//! of catch-up sessions; `identity.rs` node keys; `policy.rs` who may receive what; `limits.rs`
//! and `error.rs` the item limits and errors all of them share.

#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

pub mod club;
pub mod devices;
pub mod engine;
pub mod error;
mod fixed_bytes;
pub mod identity;
pub mod item;
pub mod limits;
pub mod mind;
pub mod policy;
pub mod range_sync;
mod text_form;
pub mod wire;

pub use club::{ClubAction, ClubBook, ClubChange, ClubRef};
pub use error::ItemError;
pub use identity::{AuthorKey, IdentityError, NodeKey};
pub use item::audience::Audience;
pub use item::batch::verify_batch;
pub use item::body::{
    Body, LlmAddress, LlmLimits, Note, Rating, ReachableAt, Retraction, StagnationStrategy,
    ThinkingMethod,
};
pub use item::id::ItemId;
pub use item::kinds::ItemKind;
pub use item::payload::{Payload, PayloadDraft};
pub use item::record::ItemRecord;
pub use item::verified::{VerifiedItem, sign};
pub use policy::{FriendView, ItemRoute, may_send};

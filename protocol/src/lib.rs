//! Porfiry's wire-level vocabulary, with no IO: node identity, the signed item
//! envelope, the audience rules and (later) the sans-IO replication engine.
//!
//! Nothing here touches sockets, tokio, SQLite, the wall clock or an ambient
//! RNG: callers pass time and randomness in. (The one exception is the key
//! file: `NodeKey::save`/`load` read and write the path they are given.)

pub mod audience;
pub mod batch;
pub mod body;
mod body_checks;
mod cbor;
pub mod engine;
pub mod envelope;
pub mod error;
mod fixed_bytes;
pub mod identity;
pub mod item;
pub mod item_id;
pub mod kinds;
pub mod limits;
pub mod policy;
pub mod verified;
pub mod wire;

pub use audience::Audience;
pub use batch::verify_batch;
pub use body::{
    Body, LlmAddress, LlmLimits, Note, Rating, Retraction, StagnationStrategy, ThinkingMethod,
};
pub use error::ItemError;
pub use identity::{AuthorKey, IdentityError, NodeKey};
pub use item::{Payload, PayloadDraft};
pub use item_id::ItemId;
pub use kinds::ItemKind;
pub use policy::{FriendView, ItemRoute, may_send};
pub use verified::{VerifiedItem, sign};

//! Everything about one item: its id, kind, audience and body, the signed
//! payload and the envelope around it, the checks a decoded item passes
//! (alone or in a batch), and the routing record the other crates keep.
//!
//! `cbor` (the byte-level helpers of the envelope and payload codecs) lives
//! here because only item encoding uses it; the wire messages have their
//! own CBOR form in `wire`.

pub mod audience;
pub mod batch;
pub(crate) mod batch_equation;
pub mod body;
mod cbor;
mod checks;
pub mod envelope;
pub mod id;
pub mod kinds;
pub mod payload;
pub mod record;
pub mod unreadable;
pub mod verified;

pub use audience::Audience;
pub use batch::verify_batch;
pub use id::ItemId;
pub use kinds::ItemKind;
pub use payload::{Payload, PayloadDraft};
pub use record::{ItemRecord, retraction_target};
pub use verified::{VerifiedItem, sign};

//! Everything about one item: its id, kind, audience and body, the signed
//! payload and the envelope around it, and the checks a decoded item passes
//! (alone or in a batch).
//!
//! `cbor` (the byte-level helpers of the envelope and payload codecs) lives
//! here because only item encoding uses it; the wire messages have their
//! own CBOR form in `wire`.

pub mod audience;
pub mod batch;
pub mod body;
mod cbor;
mod checks;
pub mod envelope;
pub mod id;
pub mod kinds;
pub mod payload;
pub mod verified;

pub use audience::Audience;
pub use batch::verify_batch;
pub use id::ItemId;
pub use kinds::ItemKind;
pub use payload::{Payload, PayloadDraft};
pub use verified::{VerifiedItem, sign};

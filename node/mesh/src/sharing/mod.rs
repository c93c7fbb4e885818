//! What the running node and the CLI commands share about items: local rows
//! becoming signed items ([`publish`]), friends' items becoming local rows
//! ([`merge`]), mentions and hashtags parsed from a note's text
//! ([`note_text`]), an item's `items` row ([`item_rows`]), clubs
//! ([`clubs`]), where we and our friends can be reached ([`reach`]), and their
//! [`limits`] and [`error`].

pub mod clubs;
pub(crate) mod error;
pub mod item_rows;
pub(crate) mod limits;
pub mod merge;
pub mod note_text;
pub mod offload;
pub mod publish;
pub mod reach;

pub use error::SharingError;
pub use publish::{Posted, post_note, retract_item};

//! The running node (`porfiry run`): the sans-IO replication engine, the
//! libp2p driver and the SQLite file glued together, plus the pieces the
//! `notes` and `friends` commands share with it.
//!
//! Files by job: [`service`] (the loop), [`engine_io`] (carrying out engine
//! outputs), [`outgoing`] (the task feeding the driver), [`watch`] (noticing
//! other processes' writes), [`friend_set`] (friends and their changes),
//! [`publish`] (local rows → signed items), [`merge`] (friends' items →
//! local rows), [`item_rows`] (item ↔ `items` row), [`note_text`]
//! (mentions and hashtags), [`clock`], [`limits`], [`error`].

pub mod clock;
pub mod engine_io;
pub mod error;
pub mod friend_set;
pub mod item_rows;
pub mod limits;
pub mod merge;
pub mod note_text;
pub mod outgoing;
pub mod publish;
pub mod service;
pub mod watch;

pub use error::DaemonError;
pub use publish::{Posted, post_note, retract_item};
pub use service::{DaemonOptions, Stopped, run_node};

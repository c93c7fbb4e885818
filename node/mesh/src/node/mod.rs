//! The node as a library: [`Node::spawn`] opens (or creates) a data dir and
//! runs the replication engine, the mesh driver and the database actor on a
//! thread of their own; the [`NodeHandle`] it returns (cheap to clone)
//! posts notes, changes friends and answers status queries, and
//! [`NodeJoin`] resolves when the node has stopped with everything it
//! accepted committed. `porfiry run`, the API and an embedding app all use
//! it.
//!
//! Files by job: [`config`] (what to run), [`spawn`] (the thread and its
//! runtime), [`handle`] (the calls), [`views`] (what the calls take and
//! return, serialisable as is), [`limits`], [`error`].

pub(crate) mod config;
pub(crate) mod error;
pub(crate) mod handle;
pub(crate) mod limits;
pub(crate) mod spawn;
pub(crate) mod views;

pub use crate::friends::FriendView;
pub use config::NodeConfig;
pub use error::NodeError;
pub use handle::{InvitationError, NodeHandle};
pub use spawn::{Node, NodeJoin, Stopped};
pub use views::{FriendCatchup, NodeStatus, NotePost, NoteView, NotesQuery, Origin, Posted};

//! The Porfiry node: one process that runs the agent (`porfiry-agent`: the
//! tool loop, the HMP cognitive core and its toolsets), the mesh
//! (`porfiry-mesh`: friend-to-friend replication over libp2p, offload,
//! invitations) and the HTTP API (`porfiry-api`: the agent as an
//! OpenAI-compatible model, the node's notes, friends and status). The
//! `porfiry` binary is its command line; the command line itself is not
//! part of this library, so an app can embed the node without it.
//!
//! **Embedding** (a phone app, another Rust program) uses the facade here:
//! [`ChatEngine`] makes [`ChatSession`]s from a [`ChatConfig`], which names
//! the model as an [`LlmTarget`] with its [`LlmConfig`]. [`Node::spawn`]
//! runs a node (mesh, replication, database) on its own thread from a
//! [`NodeConfig`] and returns a [`NodeHandle`] to post notes, change friends
//! and ask its [`NodeStatus`], and a [`NodeJoin`] that resolves when it has
//! stopped. The crates behind it are re-exported whole for what the facade
//! does not name.

pub use porfiry_agent::{self as agent, ChatConfig, ChatEngine, ChatError, ChatSession, SendError};
pub use porfiry_agent::{LlmConfig, LlmTarget};
pub use porfiry_api as api;
pub use porfiry_mesh::{
    self as mesh, FriendCatchup, FriendView, Node, NodeConfig, NodeError, NodeHandle, NodeJoin,
    NodeStatus, NotePost, NoteView, NotesQuery, Origin, Posted, Stopped,
};

//! The Porfiry node: wiring of the protocol, storage and tool-loop crates
//! into one process — CLI commands, the LLM client, chat sessions, the
//! libp2p mesh driver with its replication loop and the HTTP API that serves
//! the agent as an OpenAI-compatible model (the HMP cognitive core is
//! planned).
//!
//! **Embedding** (a phone app, another Rust program) uses the facade at the
//! crate root: [`ChatEngine`] makes [`ChatSession`]s from a [`ChatConfig`],
//! which names the model as an [`LlmTarget`] with its [`LlmConfig`].
//! [`Node::spawn`] runs a node (mesh, replication, database) on its own
//! thread from a [`NodeConfig`] and returns a [`NodeHandle`] to post notes,
//! change friends and ask its [`NodeStatus`], and a [`NodeJoin`] that
//! resolves when it has stopped. The modules below are public for the
//! `porfiry` binary, the benches and the workspace's end-to-end tests; they
//! are hidden from the docs and are not an embedding API.

pub use chat::{ChatConfig, ChatEngine, ChatError, ChatSession, SendError};
pub use llm::{LlmConfig, LlmTarget};
pub use node::{
    FriendCatchup, FriendView, Node, NodeConfig, NodeError, NodeHandle, NodeJoin, NodeStatus,
    NotePost, NoteView, NotesQuery, Origin, Posted, Stopped,
};

#[doc(hidden)]
pub mod api;
#[doc(hidden)]
pub mod backoff;
#[doc(hidden)]
pub mod chat;
#[doc(hidden)]
pub mod cli;
#[doc(hidden)]
pub mod clock;
#[doc(hidden)]
pub mod cognition;
#[doc(hidden)]
pub mod commands;
#[doc(hidden)]
pub mod data_dir;
#[doc(hidden)]
pub mod db;
pub mod invite;
#[doc(hidden)]
pub mod llm;
#[doc(hidden)]
pub mod mesh;
pub mod node;
#[doc(hidden)]
pub mod offload;
#[doc(hidden)]
pub mod replication;
#[doc(hidden)]
pub mod sharing;
#[doc(hidden)]
pub mod toolsets;

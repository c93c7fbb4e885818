//! The real backends: [`ChatAgent`] adapts the node's `ChatEngine` to the
//! API's `Agent` (`chat.rs`), [`NodeAdapter`] the `NodeHandle` to its
//! `NodeApi` (`node.rs`).

mod chat;
mod node;

pub use chat::ChatAgent;
pub(crate) use node::node_error;
pub use node::{NodeAdapter, PAGE_SESSIONS_KEY, parse_origin};

//! The node's HTTP API (axum): the agent as an OpenAI-compatible model
//! (`/v1/models`, `/v1/chat/completions`, streaming or not) and the node's
//! notes, friends and status (`/api/…`), all behind a bearer token. The
//! wire format, the session rule and the errors are in `docs/api.md`.
//!
//! Pure parts — token checks, error objects, wire types, SSE framing, the
//! session store and history sync — are tested byte for byte; the routes
//! are tested through the router against in-process fakes of the two
//! backends ([`backend::Agent`], [`backend::NodeApi`]).

pub mod adapters;
pub mod auth;
pub mod backend;
pub mod body;
pub mod errors;
pub mod history;
pub mod limits;
pub mod prepared;
pub mod routes;
pub mod server;
pub mod sessions;
pub mod sse;
pub mod state;
pub mod stream;
pub mod token;
pub mod turn;
pub mod wire;

#[cfg(test)]
mod tests;

pub use backend::{Agent, AgentSession, NodeApi};
pub use errors::ApiError;
pub use server::{router, serve};
pub use state::ApiState;
pub use token::ApiToken;

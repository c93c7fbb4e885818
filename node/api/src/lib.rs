//! The node's HTTP API (axum): the agent as an OpenAI-compatible model
//! (`/v1/models`, `/v1/chat/completions`, streaming or not) and the node's
//! notes, friends and status (`/api/…`), all behind a bearer token. The
//! wire format, the session rule and the errors are in `docs/api.md`.
//!
//! Pure parts — token checks, error objects, wire types, SSE framing, the
//! session store and history sync — are tested byte for byte; the routes
//! are tested through the router against in-process fakes of the two
//! backends ([`backend::Agent`], [`backend::NodeApi`]).
//!
//! **What it offers**: [`serve`] / [`router`] over an [`ApiState`] (the
//! token, an [`Agent`] and a [`NodeApi`]); the adapters that make those two
//! from a `porfiry_agent::ChatEngine` and a `porfiry_mesh::NodeHandle`
//! ([`adapters`]); the token file ([`token`]) and the limits ([`limits`]);
//! the node's encrypted backup as a download (`POST /api/backup`, made by
//! the `porfiry_backup` crate as `porfiry backup` makes it).
//! **What it must not do**: parse command-line flags or start the node
//! (`porfiry run` does both and hands the API what it serves).

pub mod adapters;
pub(crate) mod auth;
pub mod backend;
pub(crate) mod backup;
pub(crate) mod body;
pub(crate) mod client_text;
pub(crate) mod conversations;
pub(crate) mod errors;
pub(crate) mod feed;
pub(crate) mod history;
pub mod limits;
pub(crate) mod mind_view;
pub(crate) mod prepared;
pub(crate) mod routes;
pub(crate) mod server;
pub(crate) mod sessions;
pub(crate) mod sse;
pub mod state;
pub(crate) mod stream;
pub mod token;
pub(crate) mod turn;
pub(crate) mod turn_records;
pub mod web;
pub mod wire;

#[cfg(test)]
mod tests;

pub use backend::{Agent, AgentSession, NodeApi};
pub use errors::ApiError;
pub use server::{router, serve};
pub use state::ApiState;
pub use token::ApiToken;

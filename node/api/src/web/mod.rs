//! The family page `porfiry run` serves at `/` on its API address: its
//! assets (compiled into the binary: no build step, no network), sign-in by
//! one-time link and session cookie, the Host/Origin checks, the change
//! stream that updates it without a reload, and the few endpoints only the
//! page needs (invitations, joining, changing a friend). Everything else it
//! shows comes from the API's own `/api/*` and `/v1/chat/completions`.

pub(crate) mod assets;
pub(crate) mod events;
pub(crate) mod guard;
pub(crate) mod routes;
pub mod signin;
pub mod texts;

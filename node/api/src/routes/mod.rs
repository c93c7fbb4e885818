//! The API's handlers, one file per area.

pub mod chat;
pub mod fallback;
pub mod models;
pub mod node;

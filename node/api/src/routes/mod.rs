//! The API's handlers, one file per area.

pub(crate) mod backup;
pub(crate) mod chat;
pub(crate) mod devices;
pub(crate) mod fallback;
pub(crate) mod models;
pub(crate) mod node;

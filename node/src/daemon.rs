//! The old home of the running node's pieces, now in `crate::replication`,
//! `crate::sharing` and `crate::clock`. Only the clock's old path is kept,
//! because `main.rs` still calls `daemon::clock::now_ms` (switch it to
//! `crate::clock` and delete this file).

pub use crate::clock;

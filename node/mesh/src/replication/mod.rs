//! The running node (`porfiry run`): the sans-IO replication engine, the
//! libp2p driver and the SQLite file glued together in one loop.
//!
//! Files by job: [`service`] (the loop), [`engine_io`] (carrying out engine
//! outputs), [`chunks`] (one catch-up chunk: a page read, packed, tracked),
//! [`frame_sink`] (where frames go, and the counts),
//! [`engine_clock`] (engine time: wall clock, never back), [`verify_stage`] (decoding and verifying frames on their own thread, friends served in turn: [`receive_order`], [`fair_queue`]), [`parallel_verify`] (one batch over several cores), [`outgoing`] (the task feeding the driver), [`watch`] (noticing
//! other processes' writes; `watch_events` drives it by file events on Linux and Android), [`friend_set`] (friends and their changes), [`refused_file`] (who the quotas refused, for `porfiry status`),
//! [`limits`], [`error`]. Turning rows into items and items into rows is
//! `crate::sharing`'s job, shared with the CLI.

pub(crate) mod chunks;
pub(crate) mod engine_clock;
pub(crate) mod engine_io;
pub(crate) mod error;
pub(crate) mod fair_queue;
pub(crate) mod frame_sink;
pub(crate) mod friend_set;
pub mod limits;
pub(crate) mod outgoing;
pub(crate) mod parallel_verify;
pub(crate) mod receive_order;
pub mod refused_file;
pub(crate) mod service;
pub(crate) mod verify_stage;
pub(crate) mod watch;
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(crate) mod watch_events;

pub use error::ReplicationError;
pub use service::{DaemonOptions, LoopCommand, LoopIo, LoopStatus, Stopped, run_node};

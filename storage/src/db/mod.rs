//! The node's one database actor: a writer thread that owns the only write
//! connection and runs write closures one after another, in the order they
//! were asked for, plus a small fixed pool of read connections (WAL lets
//! them read while the writer writes). Async callers get their answer
//! through a oneshot reply:
//!
//! ```text
//! db.write(|store| …).await ──► bounded queue ──► writer thread (one Store)
//! db.read(|store| …).await  ──► bounded queue ──► READ_CONNECTIONS threads
//! ```
//!
//! Threads, not `spawn_blocking`: a SQLite connection is not `Sync`, and a
//! thread that owns its connection and blocks on its queue costs no
//! wake-ups while idle. Files: [`actor`] (the `Db` handle and its threads),
//! [`limits`], [`error`].

pub mod actor;
pub mod error;
pub mod limits;

pub use actor::{Answer, Db};
pub use error::DbError;

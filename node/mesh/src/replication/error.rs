//! Why the running node could not go on: one variant per cause.

use porfiry_storage::StorageError;

use crate::net::MeshError;
use crate::sharing::SharingError;

/// A failure of the running node.
#[derive(Debug, thiserror::Error)]
pub enum ReplicationError {
    /// The database refused a read or write.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// The publishing pass could not sign or store an item.
    #[error(transparent)]
    Sharing(#[from] SharingError),
    /// The database actor is closed or could not start.
    #[error(transparent)]
    Db(#[from] porfiry_storage::db::DbError),
    /// The mesh driver could not start.
    #[error(transparent)]
    Mesh(#[from] MeshError),
    /// The change watcher's thread ended unasked.
    #[error("the database change watcher stopped")]
    WatchStopped,
    /// A thread of the node could not be started.
    #[error("cannot start a thread: {0}")]
    Thread(std::io::Error),
    /// A `--listen` address is not a multiaddr.
    #[error("bad listen address {address:?}: {reason}")]
    BadListenAddress {
        /// What was given.
        address: String,
        /// Why it does not parse.
        reason: String,
    },
    /// Standard output could not be written (the peer id and addresses are
    /// printed there for whoever started us).
    #[error("cannot write to stdout: {0}")]
    Stdout(#[from] std::io::Error),
}

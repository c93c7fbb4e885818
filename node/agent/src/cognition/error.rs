//! Why the cognitive core stopped: only the database can stop it. A model
//! that fails, a tool that fails or garbage in a reply is recorded in the
//! tick and the cycle goes on.

use porfiry_storage::StorageError;

use porfiry_storage::db::DbError;

/// A failure the core cannot record and go on from.
#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    /// The database actor is gone (the node is stopping) or failed to start.
    #[error("cognitive core: {0}")]
    Db(#[from] DbError),
    /// A read or write of the tick failed.
    #[error("cognitive core: {0}")]
    Storage(#[from] StorageError),
}

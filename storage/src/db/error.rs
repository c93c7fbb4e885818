//! What can go wrong talking to the database actor.

/// Why a database call got no answer.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// Opening a connection failed.
    #[error(transparent)]
    Open(#[from] crate::StorageError),
    /// The actor was closed (the node is stopping): the call was not run.
    #[error("the database is closed: the node is stopping")]
    Closed,
    /// A database thread could not be started.
    #[error("cannot start a database thread: {0}")]
    Thread(std::io::Error),
}

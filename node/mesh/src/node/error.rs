//! [`NodeError`]: why a node did not start or a handle call failed; bad
//! input (→ HTTP 400), not found (→ 404) and internal failures (→ 500) are
//! told apart by [`NodeError::is_bad_input`] and [`NodeError::is_not_found`].

use porfiry_storage::StorageError;

use crate::friends::FriendsError;
use crate::init::InitError;
use crate::lock::LockError;
use crate::notes::NotesError;
use crate::replication::ReplicationError;
use crate::sharing::SharingError;
use porfiry_storage::db::DbError;

/// A failure of the node or of one call on its handle.
#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    /// A note was refused (empty text, bad audience) or could not be stored.
    #[error(transparent)]
    Notes(#[from] NotesError),
    /// A friend was refused (bad peer id or address, own id, unknown
    /// friend) or could not be stored.
    #[error(transparent)]
    Friends(#[from] FriendsError),
    /// The data dir could not be opened or initialised.
    #[error(transparent)]
    Init(#[from] InitError),
    /// The data dir's daemon lock is held by another node, or failed.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// The database actor is closed or could not start.
    #[error(transparent)]
    Db(#[from] DbError),
    /// The running node failed.
    #[error(transparent)]
    Replication(#[from] ReplicationError),
    /// The database refused a read.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// A club change was refused (no such club, not a member, no right).
    #[error(transparent)]
    Clubs(#[from] crate::sharing::clubs::ClubsError),
    /// An advertisement could not be signed or stored.
    #[error(transparent)]
    Sharing(#[from] SharingError),
    /// A device command was refused (not a device, a bad statement).
    #[error(transparent)]
    Devices(#[from] crate::devices::DevicesError),
    /// The node has stopped; the call was not carried out.
    #[error("the node has stopped")]
    Stopped,
    /// The node's thread or runtime could not be started.
    #[error("cannot start the node: {0}")]
    Start(std::io::Error),
}

impl NodeError {
    /// Whether the caller's input was wrong (nothing was stored).
    pub fn is_bad_input(&self) -> bool {
        match self {
            NodeError::Notes(e) => match e {
                NotesError::BadAudience { .. }
                | NotesError::EmptyText
                | NotesError::BadItemId { .. }
                | NotesError::NotYours(_) => true,
                NotesError::Post(SharingError::Item(_) | SharingError::NotAFriend(_)) => true,
                // An unknown or ambiguous club, or one we are not in.
                NotesError::Post(SharingError::Club(c)) => {
                    !matches!(c, crate::sharing::clubs::ClubsError::Storage(_))
                }
                // `peer:NAME` naming no friend, or a hand-edited repeat.
                NotesError::Open(
                    FriendsError::NoFriendNamed(_)
                    | FriendsError::Ambiguous { .. }
                    | FriendsError::BadPeerId { .. },
                ) => true,
                NotesError::Post(SharingError::Storage(s)) | NotesError::Storage(s) => {
                    refused_row(s)
                }
                _ => false,
            },
            // Not a member, no right, a bad name; not a failing database.
            NodeError::Clubs(c) => !matches!(
                c,
                crate::sharing::clubs::ClubsError::Storage(_)
                    | crate::sharing::clubs::ClubsError::Item(_)
            ),
            NodeError::Friends(e) => match e {
                FriendsError::BadPeerId { .. }
                | FriendsError::BadAddress { .. }
                | FriendsError::OwnId(_)
                | FriendsError::Ambiguous { .. } => true,
                FriendsError::Storage(s) => refused_row(s),
                _ => false,
            },
            _ => false,
        }
    }

    /// Whether the thing asked about does not exist (an unknown friend).
    pub fn is_not_found(&self) -> bool {
        matches!(
            self,
            NodeError::Friends(FriendsError::NotAFriend(_) | FriendsError::NoFriendNamed(_))
                | NodeError::Notes(NotesError::NoSuchItem(_))
                | NodeError::Clubs(crate::sharing::clubs::ClubsError::NoSuchClub(_))
                | NodeError::Devices(crate::devices::DevicesError::NotADevice(_))
        )
    }
}

/// A value the database refuses (a bad group name, a too-long text), as
/// opposed to a failing database.
fn refused_row(e: &StorageError) -> bool {
    e.is_row_refusal() && !matches!(e, StorageError::NotFound { .. })
}

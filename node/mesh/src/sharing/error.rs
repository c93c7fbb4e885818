//! Why a local row could not become an item, or an item a row: one variant
//! per cause.

use porfiry_protocol::ItemError;
use porfiry_storage::StorageError;

/// A failure to publish, retract or merge an item.
#[derive(Debug, thiserror::Error)]
pub enum SharingError {
    /// The database refused a read or write.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// An item could not be signed (a limit of the item format).
    #[error("cannot publish: {0}")]
    Item(#[from] ItemError),
    /// A row could not become an item's draft.
    #[error("cannot publish: {0}")]
    Draft(String),
    /// A direct message (`peer:ID`) to a node that is not a friend: it
    /// could never be delivered, so nothing is written.
    #[error("cannot send to {0}: not a friend (add it with `porfiry friends add` first)")]
    NotAFriend(String),
    /// A club item or change this node may not make.
    #[error(transparent)]
    Club(#[from] super::clubs::ClubsError),
}

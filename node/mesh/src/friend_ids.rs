//! What a friend is called in errors and how a peer id is checked: shared
//! by [`crate::friends`] and the name lookup beside it.

use porfiry_protocol::AuthorKey;
use porfiry_storage::StorageError;

use crate::net::PeerId;

/// Why a `friends` command failed.
#[derive(Debug, thiserror::Error)]
pub enum FriendsError {
    /// Not a libp2p peer id.
    #[error("bad peer id {id:?}: {reason}")]
    BadPeerId {
        /// What was given.
        id: String,
        /// Why.
        reason: String,
    },
    /// Not a multiaddr, or one naming another peer.
    #[error("bad address {address:?}: {reason}")]
    BadAddress {
        /// What was given.
        address: String,
        /// Why.
        reason: String,
    },
    /// A node cannot befriend itself.
    #[error("{0} is this node's own peer id")]
    OwnId(String),
    /// No node in the data dir.
    #[error("no node in {0}: run `porfiry init` (or `porfiry run`) first")]
    NoNode(String),
    /// The friend to remove is not a friend.
    #[error("{0} is not a friend")]
    NotAFriend(String),
    /// Neither a peer id nor the name of a friend.
    #[error("no friend named {0:?} (and it is not a peer id)")]
    NoFriendNamed(String),
    /// Several friends answer to the name (only a hand-edited database
    /// can hold repeats).
    #[error("the name {name:?} is ambiguous: friends {} all have it; give a peer id", peers.join(", "))]
    Ambiguous {
        /// The name given.
        name: String,
        /// The friends that have it.
        peers: Vec<String>,
    },
    /// The key file could not be read.
    #[error(transparent)]
    Identity(#[from] porfiry_protocol::IdentityError),
    /// The database refused.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// JSON output failed.
    #[error("cannot print JSON: {0}")]
    Json(#[from] serde_json::Error),
}

/// Checks a peer id: a libp2p id of an ed25519 key, as every Porfiry node has.
pub fn parse_peer_id(id: &str) -> Result<PeerId, FriendsError> {
    let bad = |reason: String| FriendsError::BadPeerId {
        id: id.to_owned(),
        reason,
    };
    let peer: PeerId = id.parse().map_err(|e| bad(format!("{e}")))?;
    if AuthorKey::from_peer_id(&peer).is_none() {
        return Err(bad("not an ed25519 node id (12D3KooW…)".into()));
    }
    Ok(peer)
}

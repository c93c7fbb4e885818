//! The friends of a node: the peers it connects to and replicates with,
//! and the local names the user calls them by (every call that takes a
//! friend takes its name too, through [`resolve_friend`]).
//!
//! Every argument is checked before the database is opened, so a bad peer
//! id, address or group name changes nothing. The checks and writes
//! ([`check_friend`], [`save_friend`], [`delete_friend`], [`friend_views`])
//! are shared by `porfiry friends` and `NodeHandle`, so the CLI and an
//! embedding app refuse the same input the same way.

use porfiry_protocol::NodeKey;
use porfiry_storage::{
    Friend, PeerPermissions, StorageError, Store, check_friend_name, check_groups,
};
use serde::Serialize;

use crate::data_dir::DataDir;
use crate::net::{Multiaddr, PeerId};

pub use crate::friend_ids::{FriendsError, parse_peer_id};
pub use crate::friend_names::{friend_names, resolve_friend};

/// One friend as `friends list --json` prints it (and the API returns it).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct FriendView {
    /// Peer id.
    pub peer_id: String,
    /// What this node calls it, if anything (local, never sent).
    pub name: Option<String>,
    /// Addresses we dial it at.
    pub addresses: Vec<String>,
    /// Its groups.
    pub groups: Vec<String>,
    /// `unknown`, `online`, `offline`, …
    pub status: String,
    /// Last time it was connected (Unix ms).
    pub last_seen_ms: Option<u64>,
    /// May it offload requests onto this node's model.
    pub allow_offload: bool,
    /// May it pull this node's model files (`friends models PEER on`).
    pub allow_models: bool,
}

/// Checks an address; a trailing `/p2p/<id>` must be `peer`'s.
pub fn parse_address(address: &str, peer: &PeerId) -> Result<Multiaddr, FriendsError> {
    let bad = |reason: String| FriendsError::BadAddress {
        address: address.to_owned(),
        reason,
    };
    let m: Multiaddr = address.parse().map_err(|e| bad(format!("{e}")))?;
    if m.is_empty() {
        return Err(bad("empty".into()));
    }
    // A relay circuit (`<relay addr>/p2p/<relay>/p2p-circuit[/p2p/<peer>]`)
    // names its relay before `/p2p-circuit`; only `peer` may be named after.
    crate::net::check_friend_address(&m, peer).map_err(bad)?;
    Ok(m)
}

/// A friend whose peer id, addresses and groups passed every check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedFriend {
    /// Its peer id.
    pub peer: PeerId,
    /// Its addresses, in their canonical text form.
    pub addresses: Vec<String>,
    /// Its groups.
    pub groups: Vec<String>,
    /// Its name (checked with [`check_name`]); `None` keeps an existing
    /// friend's (a new one starts without).
    pub name: Option<String>,
    /// Offload permission to set; `None` keeps an existing friend's (a new
    /// one starts without).
    pub allow_offload: Option<bool>,
}

/// Checks a friend to add without touching any database.
pub fn check_friend(
    peer_id: &str,
    addresses: &[String],
    groups: &[String],
) -> Result<CheckedFriend, FriendsError> {
    let peer = parse_peer_id(peer_id)?;
    let addresses: Vec<String> = addresses
        .iter()
        .map(|a| parse_address(a, &peer).map(|m| m.to_string()))
        .collect::<Result<_, _>>()?;
    check_groups(groups)?;
    Ok(CheckedFriend {
        peer,
        addresses,
        groups: groups.to_vec(),
        name: None,
        allow_offload: None,
    })
}

/// Checks a friend name (1 to 32 characters, no '@', no spaces at the ends,
/// not a peer id) without touching any database.
pub fn check_name(name: &str) -> Result<(), FriendsError> {
    Ok(check_friend_name(name)?)
}

/// Adds `friend`, or replaces the addresses and groups (and the name, when
/// given) of an existing one, in one transaction; a name another friend has
/// is refused ([`StorageError::NameTaken`]); refuses this node's own id (`own`). Returns whether
/// it was there already.
pub fn save_friend(
    store: &Store,
    own: &PeerId,
    friend: &CheckedFriend,
    now_ms: u64,
) -> Result<bool, FriendsError> {
    let id = friend.peer.to_string();
    if *own == friend.peer {
        return Err(FriendsError::OwnId(id));
    }
    Ok(store.transaction(|s| match s.find_friend(&id)? {
        Some(_) => {
            s.set_friend_addresses(&id, &friend.addresses, now_ms)?;
            s.set_friend_groups(&id, &friend.groups, now_ms)?;
            if let Some(name) = &friend.name {
                s.set_friend_name(&id, name, now_ms)?;
            }
            if let Some(on) = friend.allow_offload {
                let mut p = s.friend(&id)?.row.permissions;
                p.offload = on;
                s.set_friend_permissions(&id, &p, now_ms)?;
            }
            Ok(true)
        }
        None => {
            s.add_friend(
                &Friend {
                    peer_id: id.clone(),
                    name: friend.name.clone().unwrap_or_default(),
                    addresses: friend.addresses.clone(),
                    groups: friend.groups.clone(),
                    permissions: PeerPermissions {
                        offload: friend.allow_offload.unwrap_or(false),
                        ..Default::default()
                    },
                    ..Default::default()
                },
                now_ms,
            )?;
            Ok(false)
        }
    })?)
}

/// Allows or refuses a friend's offload requests; one that is not a friend
/// is [`FriendsError::NotAFriend`]. Other permissions are kept.
pub fn set_offload(
    store: &Store,
    peer: &PeerId,
    on: bool,
    now_ms: u64,
) -> Result<(), FriendsError> {
    update_permissions(store, peer, now_ms, |p| p.offload = on)
}

/// The key in a friend's `PeerPermissions.other` that lets it pull this
/// node's model files (`porfiry friends models PEER on|off`).
pub const MODELS_PERMISSION: &str = "models";

/// Whether `permissions` let a friend pull this node's models.
pub fn allows_models(permissions: &PeerPermissions) -> bool {
    permissions.other.get(MODELS_PERMISSION) == Some(&serde_json::Value::Bool(true))
}

/// Changes a friend's permissions with `change`, keeping the others; one
/// that is not a friend is [`FriendsError::NotAFriend`].
pub fn update_permissions(
    store: &Store,
    peer: &PeerId,
    now_ms: u64,
    change: impl FnOnce(&mut PeerPermissions),
) -> Result<(), FriendsError> {
    let id = peer.to_string();
    let Some(f) = store.find_friend(&id)? else {
        return Err(FriendsError::NotAFriend(id));
    };
    let mut p = f.row.permissions;
    change(&mut p);
    store.set_friend_permissions(&id, &p, now_ms)?;
    Ok(())
}

/// Whether `peer` is a friend allowed to offload (the offload server's
/// permission check).
pub fn may_offload(store: &Store, peer: &PeerId) -> Result<bool, FriendsError> {
    Ok(store
        .find_friend(&peer.to_string())?
        .is_some_and(|f| f.row.permissions.offload))
}

/// Names a friend (the name checked and free); one that is not a friend is
/// [`FriendsError::NotAFriend`].
pub fn rename_friend(
    store: &Store,
    peer: &PeerId,
    name: &str,
    now_ms: u64,
) -> Result<(), FriendsError> {
    check_name(name)?;
    match store.set_friend_name(&peer.to_string(), name, now_ms) {
        Ok(()) => Ok(()),
        Err(StorageError::NotFound { .. }) => Err(FriendsError::NotAFriend(peer.to_string())),
        Err(e) => Err(e.into()),
    }
}

/// Removes a friend; one that is not a friend is [`FriendsError::NotAFriend`].
pub fn delete_friend(store: &Store, peer: &PeerId) -> Result<(), FriendsError> {
    match store.remove_friend(&peer.to_string()) {
        Ok(()) => Ok(()),
        Err(StorageError::NotFound { .. }) => Err(FriendsError::NotAFriend(peer.to_string())),
        Err(e) => Err(e.into()),
    }
}

/// Every friend, as listed.
pub fn friend_views(store: &Store) -> Result<Vec<FriendView>, FriendsError> {
    Ok(store.friends()?.into_iter().map(friend_view).collect())
}

/// One stored friend as listed.
pub fn friend_view(f: porfiry_storage::Stored<Friend>) -> FriendView {
    FriendView {
        name: Some(f.row.name).filter(|n| !n.is_empty()),
        peer_id: f.row.peer_id,
        addresses: f.row.addresses,
        groups: f.row.groups,
        status: f.row.status.to_string(),
        last_seen_ms: f.row.last_seen,
        allow_offload: f.row.permissions.offload,
        allow_models: allows_models(&f.row.permissions),
    }
}

/// The node's key and database; neither is created.
pub fn open(dir: &DataDir) -> Result<(NodeKey, Store), FriendsError> {
    if !dir.identity_path().exists() {
        return Err(FriendsError::NoNode(dir.root().display().to_string()));
    }
    let key = NodeKey::load(&dir.identity_path())?;
    let store = Store::open(dir.db_path())?;
    Ok((key, store))
}

#[cfg(test)]
mod address_tests {
    use super::*;

    #[test]
    fn a_friend_address_may_go_through_a_relay_naming_the_friend_last() {
        let friend = crate::net::Keypair::generate_ed25519()
            .public()
            .to_peer_id();
        let relay = crate::net::Keypair::generate_ed25519()
            .public()
            .to_peer_id();
        let circuit = format!("/ip4/192.0.2.1/tcp/4001/p2p/{relay}/p2p-circuit/p2p/{friend}");
        assert!(parse_address(&circuit, &friend).is_ok());
        let quic = format!("/ip4/192.0.2.1/udp/4001/quic-v1/p2p/{friend}");
        assert!(parse_address(&quic, &friend).is_ok());
        let wrong = format!("/ip4/192.0.2.1/tcp/4001/p2p/{relay}");
        let err = parse_address(&wrong, &friend).unwrap_err().to_string();
        assert!(err.contains(&relay.to_string()), "{err}");
    }
}

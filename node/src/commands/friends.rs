//! `porfiry friends add|list|offload|remove|rename`: the peers this node
//! connects to and replicates with, and the local names the user calls them
//! by (every command that takes a friend takes its name too, through
//! [`resolve_friend`]). Works whether or not the node is running: a running
//! daemon in another process notices the change within its change poll
//! interval (`CHANGE_POLL_INTERVAL`, `PHONE_CHANGE_POLL_INTERVAL`); a
//! `NodeHandle` tells its loop at once.
//!
//! Every argument is checked before the database is opened, so a bad peer
//! id, address or group name changes nothing. The checks and writes
//! ([`check_friend`], [`save_friend`], [`delete_friend`], [`friend_views`])
//! are shared with `NodeHandle`, so the CLI and an embedding app refuse
//! the same input the same way.

use clap::{Args, Subcommand};
use porfiry_protocol::{AuthorKey, NodeKey};
use porfiry_storage::{
    Friend, PeerPermissions, StorageError, Store, check_friend_name, check_groups,
};
use serde::Serialize;

use crate::data_dir::DataDir;
use crate::mesh::{Multiaddr, PeerId};

pub use super::friend_names::{friend_names, resolve_friend};

/// `porfiry friends …`
#[derive(Debug, Subcommand)]
pub enum FriendsCommand {
    /// Add a friend (or replace its address and groups, and its name when
    /// --name is given). Without an address it is a friend that dials us.
    Add(AddArgs),
    /// List friends.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Allow (`on`) or refuse (`off`) an existing friend's offload
    /// requests: `porfiry friends offload PEER on|off`.
    Offload {
        /// The friend's peer id or name.
        #[arg(value_name = "PEER")]
        peer_id: String,
        /// `on` or `off`.
        #[arg(value_name = "on|off")]
        state: OnOff,
    },
    /// Remove a friend; its connections close.
    Remove {
        /// The friend's peer id or name.
        #[arg(value_name = "PEER")]
        peer_id: String,
    },
    /// Give a friend a new name (local to this node, never sent; unique
    /// ignoring case): `porfiry friends rename PEER NAME`.
    Rename {
        /// The friend's peer id or current name.
        #[arg(value_name = "PEER")]
        peer_id: String,
        /// Its new name: 1 to 32 characters, no '@', no spaces at the ends.
        #[arg(value_name = "NAME")]
        name: String,
    },
}

/// Arguments of `friends add`.
#[derive(Debug, Args)]
pub struct AddArgs {
    /// The friend's peer id (`12D3KooW…`).
    #[arg(value_name = "PEER_ID")]
    pub peer_id: String,
    /// Where to dial it, e.g. /ip4/192.0.2.7/tcp/4001 (a trailing
    /// /p2p/<peer-id> must name the same peer).
    #[arg(value_name = "MULTIADDR")]
    pub address: Option<String>,
    /// What to call it here (`anna`): shown instead of its peer id, taken
    /// wherever a peer id is (`@anna` in notes, `peer:anna`). Local, never
    /// sent; unique ignoring case; 1 to 32 characters, no '@'.
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// A group to tag it with (repeatable); group notes go to these.
    #[arg(long = "group", value_name = "NAME")]
    pub groups: Vec<String>,
    /// Allow it to use this node's model (offload). Without the flag an
    /// existing friend keeps what it had; a new one is not allowed.
    #[arg(long)]
    pub allow_offload: bool,
}

/// `on` or `off`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OnOff {
    /// Allowed.
    On,
    /// Refused.
    Off,
}

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
    crate::mesh::check_friend_address(&m, peer).map_err(bad)?;
    Ok(m)
}

/// Runs one `friends` command; returns what to print.
pub fn friends(
    dir: &DataDir,
    command: &FriendsCommand,
    now_ms: u64,
) -> Result<String, FriendsError> {
    match command {
        FriendsCommand::Add(args) => add(dir, args, now_ms),
        FriendsCommand::List { json } => list(dir, *json),
        FriendsCommand::Offload { peer_id, state } => {
            let (_, store) = open(dir)?;
            let peer = resolve_friend(&store, peer_id)?;
            let on = *state == OnOff::On;
            set_offload(&store, &peer, on, now_ms)?;
            let how = if on { "may" } else { "may not" };
            Ok(format!(
                "friend {peer} {how} use this node's model (offload)"
            ))
        }
        FriendsCommand::Remove { peer_id } => {
            let (_, store) = open(dir)?;
            let peer = resolve_friend(&store, peer_id)?;
            delete_friend(&store, &peer)?;
            Ok(format!("removed friend {peer}"))
        }
        FriendsCommand::Rename { peer_id, name } => {
            check_name(name)?;
            let (_, store) = open(dir)?;
            let peer = resolve_friend(&store, peer_id)?;
            rename_friend(&store, &peer, name, now_ms)?;
            Ok(format!("friend {peer} is now called {name}"))
        }
    }
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
    let id = peer.to_string();
    let Some(f) = store.find_friend(&id)? else {
        return Err(FriendsError::NotAFriend(id));
    };
    let mut p = f.row.permissions;
    p.offload = on;
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
    }
}

fn add(dir: &DataDir, args: &AddArgs, now_ms: u64) -> Result<String, FriendsError> {
    let given: Vec<String> = args.address.iter().cloned().collect();
    let mut friend = check_friend(&args.peer_id, &given, &args.groups)?;
    if let Some(name) = &args.name {
        check_name(name)?;
        friend.name = Some(name.clone());
    }
    if args.allow_offload {
        friend.allow_offload = Some(true);
    }
    let (key, store) = open(dir)?;
    let updated = save_friend(&store, &key.peer_id(), &friend, now_ms)?;
    let how = if friend.addresses.is_empty() {
        "it dials us".to_owned()
    } else {
        format!("dialled at {}", friend.addresses.join(", "))
    };
    let verb = if updated { "updated" } else { "added" };
    let called = friend
        .name
        .as_ref()
        .map(|n| format!(" as {n}"))
        .unwrap_or_default();
    Ok(format!("{verb} friend {}{called} ({how})", friend.peer))
}

fn list(dir: &DataDir, json: bool) -> Result<String, FriendsError> {
    let (_, store) = open(dir)?;
    let views = friend_views(&store)?;
    if json {
        return Ok(serde_json::to_string_pretty(&views)?);
    }
    if views.is_empty() {
        return Ok("no friends yet".into());
    }
    let lines: Vec<String> = views
        .iter()
        .map(|v| {
            let groups = if v.groups.is_empty() {
                "-".into()
            } else {
                v.groups.join(",")
            };
            let addrs = if v.addresses.is_empty() {
                "(dials us)".into()
            } else {
                v.addresses.join(" ")
            };
            let offload = if v.allow_offload { "on" } else { "off" };
            let name = v
                .name
                .as_ref()
                .map(|n| format!("{n}  "))
                .unwrap_or_default();
            format!(
                "{name}{}  {}  groups: {groups}  offload: {offload}  {addrs}",
                v.peer_id, v.status
            )
        })
        .collect();
    Ok(lines.join("\n"))
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
        let friend = crate::mesh::Keypair::generate_ed25519()
            .public()
            .to_peer_id();
        let relay = crate::mesh::Keypair::generate_ed25519()
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

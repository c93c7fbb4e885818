//! The friends the daemon lets in, read from `agent_peers`, and what changed
//! between two readings: who to allow (and dial), who to drop, and whose
//! groups moved (the engine must hear `PeerConnected` again for those).
//! A friend's addresses are those it told us (`reachable_at`) first, then
//! those the user gave ([`with_told`]).
//!
//! A blacklisted row is not a friend. A row whose peer id or address does
//! not parse (written by something other than `porfiry friends add`) is
//! logged and left out rather than stopping the node.

use std::collections::BTreeMap;

use porfiry_storage::{PeerStatus, StorageError, Store};

use crate::net::{Multiaddr, PeerId};
use crate::sharing::reach::Announced;

/// One friend as the daemon uses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FriendEntry {
    /// Its libp2p identity.
    pub peer: PeerId,
    /// Where to dial it; empty when it dials us.
    pub addresses: Vec<Multiaddr>,
    /// The groups this node tagged it with.
    pub groups: Vec<String>,
}

/// Friends by peer id string.
pub type FriendSet = BTreeMap<String, FriendEntry>;

/// Reads the friends from the database.
pub fn load(store: &Store) -> Result<FriendSet, StorageError> {
    let mut set = FriendSet::new();
    for f in store.friends()? {
        let f = f.row;
        if f.status == PeerStatus::Blacklisted {
            continue;
        }
        let peer: PeerId = match f.peer_id.parse() {
            Ok(p) => p,
            Err(e) => {
                tracing::warn!(peer = %f.peer_id, error = %e, "friend row with a bad peer id left out");
                continue;
            }
        };
        let mut addresses = Vec::new();
        for a in &f.addresses {
            match a.parse::<Multiaddr>() {
                Ok(m) => addresses.push(m),
                Err(e) => {
                    tracing::warn!(%peer, address = %a, error = %e, "friend address left out")
                }
            }
        }
        set.insert(
            f.peer_id,
            FriendEntry {
                peer,
                addresses,
                groups: f.groups,
            },
        );
    }
    Ok(set)
}

/// `set` with each friend's told addresses (its newest `reachable_at`)
/// put before the ones the user gave, so the driver dials it where it
/// said it is and the diff sees a friend that moved.
pub fn with_told(mut set: FriendSet, told: &Announced) -> FriendSet {
    for f in set.values_mut() {
        f.addresses = told.dial_list(&f.peer, &f.addresses);
    }
    set
}

/// What changed from one reading to the next.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FriendChanges {
    /// New friends, and friends whose addresses changed: allow and dial.
    pub allow: Vec<FriendEntry>,
    /// Friends no longer there: disallow and disconnect.
    pub drop: Vec<PeerId>,
    /// Friends whose groups changed: (peer id string, new groups).
    pub regroup: Vec<(String, Vec<String>)>,
}

impl FriendChanges {
    /// True when nothing changed.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.drop.is_empty() && self.regroup.is_empty()
    }
}

/// The changes that turn `old` into `new`.
pub fn diff(old: &FriendSet, new: &FriendSet) -> FriendChanges {
    let mut c = FriendChanges::default();
    for (id, f) in new {
        match old.get(id) {
            None => c.allow.push(f.clone()),
            Some(o) => {
                if o.addresses != f.addresses {
                    c.allow.push(f.clone());
                }
                if o.groups != f.groups {
                    c.regroup.push((id.clone(), f.groups.clone()));
                }
            }
        }
    }
    for (id, f) in old {
        if !new.contains_key(id) {
            c.drop.push(f.peer);
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use porfiry_protocol::NodeKey;
    use porfiry_storage::{DB_FILE_NAME, Friend};

    use super::*;

    fn peer(n: u8) -> PeerId {
        NodeKey::from_seed([n; 32]).peer_id()
    }

    fn entry(n: u8, addr: Option<&str>, groups: &[&str]) -> (String, FriendEntry) {
        let p = peer(n);
        (
            p.to_string(),
            FriendEntry {
                peer: p,
                addresses: addr.into_iter().map(|a| a.parse().unwrap()).collect(),
                groups: groups.iter().map(|g| g.to_string()).collect(),
            },
        )
    }

    #[test]
    fn diff_names_new_changed_regrouped_and_gone_friends() {
        let old: FriendSet = [
            entry(1, None, &[]),
            entry(2, Some("/ip4/127.0.0.1/tcp/1"), &["family"]),
            entry(3, None, &[]),
        ]
        .into();
        let new: FriendSet = [
            entry(1, None, &[]),
            entry(2, Some("/ip4/127.0.0.1/tcp/2"), &["club"]),
            entry(4, None, &["x"]),
        ]
        .into();
        let c = diff(&old, &new);
        let allowed: Vec<PeerId> = c.allow.iter().map(|f| f.peer).collect();
        assert_eq!(allowed.len(), 2);
        assert!(allowed.contains(&peer(2)) && allowed.contains(&peer(4)));
        assert_eq!(c.drop, [peer(3)]);
        assert_eq!(c.regroup, [(peer(2).to_string(), vec!["club".to_string()])]);
        assert!(diff(&new, &new).is_empty());
    }

    #[test]
    fn load_skips_blacklisted_and_unparseable_rows() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::create(dir.path().join(DB_FILE_NAME)).unwrap();
        let add = |id: String, addresses: Vec<String>, status| {
            store
                .add_friend(
                    &Friend {
                        peer_id: id,
                        addresses,
                        groups: vec!["family".into()],
                        status,
                        ..Default::default()
                    },
                    1,
                )
                .unwrap();
        };
        add(
            peer(1).to_string(),
            vec!["/ip4/127.0.0.1/tcp/9".into(), "garbage".into()],
            PeerStatus::Unknown,
        );
        add(peer(2).to_string(), vec![], PeerStatus::Blacklisted);
        add("not-a-peer-id".into(), vec![], PeerStatus::Unknown);
        let set = load(&store).unwrap();
        assert_eq!(set.len(), 1);
        let f = &set[&peer(1).to_string()];
        assert_eq!(
            f.addresses,
            ["/ip4/127.0.0.1/tcp/9".parse::<Multiaddr>().unwrap()]
        );
        assert_eq!(f.groups, ["family"]);
    }
}

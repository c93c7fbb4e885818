//! The inviter's side of redeeming: in ONE database transaction, find the
//! invitation for a presented secret, judge it ([`super::secret::judge`]),
//! mark it used and add the joiner as a friend with the invitation's name
//! and groups. A refused secret writes nothing.

use porfiry_storage::{Friend, InvitationKind, StorageError, Store};

use super::code::Secret;
use super::secret::{Refusal, hash_secret, judge};
use crate::friends::{FriendsError, check_friend, save_friend};
use crate::net::PeerId;

/// What a redeemed invitation made of the joiner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redeemed {
    /// Its local name here (may be empty).
    pub name: String,
    /// Its groups.
    pub groups: Vec<String>,
}

/// Redeems `secret` presented by `peer` at `now_ms` on the node `own`:
/// `Ok(Err(refusal))` when the secret does not admit it (nothing written),
/// `Err` when the database failed.
pub fn redeem(
    store: &Store,
    own: &PeerId,
    peer: &PeerId,
    secret: &Secret,
    now_ms: u64,
) -> Result<Result<Redeemed, Refusal>, FriendsError> {
    let hash = hash_secret(secret);
    let outcome = store.transaction(|s| {
        let found = s.invitation_by_hash(&hash)?;
        let id = match judge(found.as_ref(), &hash, InvitationKind::Friend, now_ms) {
            Ok(id) => id,
            Err(refusal) => return Ok(Err(refusal)),
        };
        let Some(inv) = found else {
            return Ok(Err(Refusal::Unknown));
        };
        if !s.redeem_invitation(id, &peer.to_string(), now_ms)? {
            return Ok(Err(Refusal::Used));
        }
        // A friend already: keep its addresses and groups, add the invite's.
        let (addresses, mut groups) = s
            .find_friend(&peer.to_string())?
            .map(|f| (f.row.addresses, f.row.groups))
            .unwrap_or_default();
        for g in &inv.groups {
            if !groups.contains(g) {
                groups.push(g.clone());
            }
        }
        let friend = check_friend(&peer.to_string(), &addresses, &groups).map_err(storage_error)?;
        save_friend(s, own, &friend, now_ms).map_err(storage_error)?;
        if !inv.name.is_empty() {
            let mut row = s.friend(&peer.to_string())?;
            row.row.name.clone_from(&inv.name);
            s.update::<Friend>(row.id, &row.row, now_ms)?;
        }
        Ok(Ok(Redeemed {
            name: inv.name,
            groups: inv.groups,
        }))
    })?;
    Ok(outcome)
}

/// A friend check failing inside the transaction (the inviter's own id,
/// a group name stored by an older build) rolls it back like a database error.
fn storage_error(e: FriendsError) -> StorageError {
    match e {
        FriendsError::Storage(e) => e,
        other => StorageError::Invalid {
            what: "joiner".into(),
            reason: other.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use porfiry_protocol::NodeKey;
    use porfiry_storage::{DB_FILE_NAME, NewInvitation};

    fn peer(n: u8) -> PeerId {
        NodeKey::from_seed([n; 32]).peer_id()
    }

    fn store_with_invitation(secret: &Secret) -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::create(dir.path().join(DB_FILE_NAME)).unwrap();
        store
            .add_invitation(
                &NewInvitation {
                    secret_hash: hash_secret(secret),
                    name: "anna".into(),
                    groups: vec!["family".into()],
                    expires_ms: 1_000,
                    kind: InvitationKind::Friend,
                },
                0,
            )
            .unwrap();
        (dir, store)
    }

    #[test]
    fn a_good_secret_makes_a_named_friend_in_the_groups_once() {
        let secret = [3; 16];
        let (_d, store) = store_with_invitation(&secret);
        let got = redeem(&store, &peer(1), &peer(2), &secret, 10)
            .unwrap()
            .unwrap();
        assert_eq!(got.name, "anna");
        let f = store.friend(&peer(2).to_string()).unwrap().row;
        assert_eq!(f.name, "anna");
        assert_eq!(f.groups, vec!["family".to_owned()]);
        assert!(!f.permissions.offload);
        // Single use: the same secret from another peer stores nothing.
        assert_eq!(
            redeem(&store, &peer(1), &peer(3), &secret, 11).unwrap(),
            Err(Refusal::Used)
        );
        assert!(store.find_friend(&peer(3).to_string()).unwrap().is_none());
    }

    #[test]
    fn wrong_and_expired_secrets_store_nothing() {
        let secret = [3; 16];
        let (_d, store) = store_with_invitation(&secret);
        assert_eq!(
            redeem(&store, &peer(1), &peer(2), &[4; 16], 10).unwrap(),
            Err(Refusal::Unknown)
        );
        assert_eq!(
            redeem(&store, &peer(1), &peer(2), &secret, 1_000).unwrap(),
            Err(Refusal::Expired)
        );
        assert!(store.friends().unwrap().is_empty());
        assert!(
            store.has_open_invitations(999).unwrap(),
            "still open after refusals"
        );
    }

    #[test]
    fn the_inviter_cannot_redeem_its_own_invitation() {
        let secret = [3; 16];
        let (_d, store) = store_with_invitation(&secret);
        assert!(redeem(&store, &peer(1), &peer(1), &secret, 10).is_err());
        // Rolled back: still open, nobody added.
        assert!(store.has_open_invitations(10).unwrap());
        assert!(store.friends().unwrap().is_empty());
    }
}

//! Who may pull this node's models: a per-friend permission kept beside
//! offload's in the friend's row (`agent_peers.permissions`, as the key
//! [`MODELS_PERMISSION`]), off for every friend until granted with
//! `porfiry friends models PEER on`. Read on every request, so revoking it
//! counts at once.

use porfiry_skills::llm::BoxFuture;
use porfiry_storage::Store;
use porfiry_storage::db::Db;

use porfiry_mesh::friends::FriendsError;
pub use porfiry_mesh::friends::{MODELS_PERMISSION, allows_models};
use porfiry_mesh::net::PeerId;

/// Allows or refuses a friend's model pulls; one that is not a friend is
/// [`FriendsError::NotAFriend`]. Other permissions are kept.
pub fn set_share_models(
    store: &Store,
    peer: &PeerId,
    on: bool,
    now_ms: u64,
) -> Result<(), FriendsError> {
    porfiry_mesh::friends::update_permissions(store, peer, now_ms, |p| {
        p.other
            .insert(MODELS_PERMISSION.to_owned(), serde_json::Value::Bool(on));
    })
}

/// Whether `peer` is a friend allowed to pull this node's models.
pub fn may_pull_models(store: &Store, peer: &PeerId) -> Result<bool, FriendsError> {
    Ok(store
        .find_friend(&peer.to_string())?
        .is_some_and(|f| allows_models(&f.row.permissions)))
}

/// Decides whether a friend may pull (the server asks on every request).
pub trait ModelPermissions: Send + Sync {
    /// Whether `peer` may list and fetch this node's models.
    fn allows<'a>(&'a self, peer: &'a PeerId) -> BoxFuture<'a, bool>;
}

impl<F> ModelPermissions for F
where
    F: Fn(&PeerId) -> bool + Send + Sync,
{
    fn allows<'a>(&'a self, peer: &'a PeerId) -> BoxFuture<'a, bool> {
        let allowed = self(peer);
        Box::pin(async move { allowed })
    }
}

/// The permission as the node's database holds it now.
pub struct DbPermissions(pub Db);

impl ModelPermissions for DbPermissions {
    fn allows<'a>(&'a self, peer: &'a PeerId) -> BoxFuture<'a, bool> {
        let peer = *peer;
        Box::pin(async move {
            match self.0.read(move |s| may_pull_models(s, &peer)).await {
                Ok(Ok(allowed)) => allowed,
                Ok(Err(e)) => {
                    tracing::warn!(%peer, error = %e, "cannot read the models permission; refused");
                    false
                }
                Err(e) => {
                    tracing::warn!(%peer, error = %e, "cannot read the models permission; refused");
                    false
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use porfiry_storage::Friend;

    #[test]
    fn the_permission_is_off_until_granted_and_keeps_offload() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::create(tmp.path().join("n.db")).unwrap();
        let peer = libp2p::identity::Keypair::generate_ed25519()
            .public()
            .to_peer_id();
        assert!(matches!(
            set_share_models(&store, &peer, true, 1),
            Err(FriendsError::NotAFriend(_))
        ));
        let mut friend = Friend {
            peer_id: peer.to_string(),
            ..Default::default()
        };
        friend.permissions.offload = true;
        store.add_friend(&friend, 1).unwrap();
        assert!(!may_pull_models(&store, &peer).unwrap());
        set_share_models(&store, &peer, true, 2).unwrap();
        assert!(may_pull_models(&store, &peer).unwrap());
        assert!(porfiry_mesh::friends::may_offload(&store, &peer).unwrap());
        set_share_models(&store, &peer, false, 3).unwrap();
        assert!(!may_pull_models(&store, &peer).unwrap());
        assert!(porfiry_mesh::friends::may_offload(&store, &peer).unwrap());
    }
}

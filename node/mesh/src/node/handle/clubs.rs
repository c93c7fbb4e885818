//! Clubs through a running node, for the bindings: list the clubs known
//! here, found one, add, remove or make admin a friend, leave. Each change
//! is signed and stored as `porfiry club` stores it and handed to the loop
//! at once, so members get it without waiting for the change watch.

use porfiry_protocol::club::ClubAction;

use super::{NodeHandle, db_err};
use crate::friend_names::resolve_friend;
use crate::node::NodeError;
use crate::replication::LoopCommand;
use crate::sharing::clubs::{self, ClubListing};

impl NodeHandle {
    /// Every club this node knows, with its role in each.
    pub async fn clubs(&self) -> Result<Vec<ClubListing>, NodeError> {
        let me = self.inner.peer_id.clone();
        Ok(self
            .inner
            .db
            .read(move |s| clubs::list(s, &me))
            .await
            .map_err(db_err)??)
    }

    /// Founds the club `name` with this node as founder; returns its
    /// `NAME@FOUNDER`, the audience that posts to it.
    pub async fn create_club(&self, name: &str) -> Result<String, NodeError> {
        let key = self.inner.key.clone();
        let (name, now) = (name.to_owned(), self.now());
        let club = self
            .inner
            .db
            .write(move |s| clubs::create_club(s, &key, &name, now))
            .await
            .map_err(db_err)??;
        Ok(club.to_string())
    }

    /// Adds (`Add`, `AddAdmin`) or removes (`Remove`) the friend `peer`
    /// (a peer id or a friend's name) in `club` (a short name or
    /// `NAME@FOUNDER`); `Leave` takes this node out and ignores `peer`.
    /// Returns the signed change's item id.
    pub async fn change_club(
        &self,
        club: &str,
        action: ClubAction,
        peer: &str,
    ) -> Result<String, NodeError> {
        let key = self.inner.key.clone();
        let me = self.inner.peer_id.clone();
        let (club, peer, now) = (club.to_owned(), peer.to_owned(), self.now());
        let item = self
            .inner
            .db
            .write(move |s| {
                let club = clubs::resolve_club(s, &club)?;
                let target = if action == ClubAction::Leave {
                    me
                } else {
                    resolve_friend(s, &peer)?.to_string()
                };
                Ok::<_, NodeError>(clubs::change_club(s, &key, &club, action, &target, now)?)
            })
            .await
            .map_err(db_err)??;
        let id = item.id().to_string();
        self.tell(LoopCommand::Publish(item)).await;
        Ok(id)
    }
}

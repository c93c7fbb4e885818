//! [`NodeHandle`]: the calls an app (the API, `porfiry run`, an embedding
//! program) makes on a running node. Input is checked by the same functions
//! the CLI uses before anything is written; writes go through the database
//! actor and then tell the replication loop directly, so a posted note is
//! sent at once rather than at the next `data_version` poll.

use std::collections::BTreeMap;
use std::sync::Arc;

use porfiry_protocol::NodeKey;
use porfiry_skills::Clock;
use porfiry_storage::{NoteSource, Sharing};
use tokio::sync::{mpsc, oneshot, watch};

use super::error::NodeError;
use super::views::{
    FriendCatchup, NodeStatus, NotePost, NoteView, NotesQuery, Posted, profile_name,
};
use crate::events::CoreEvents;
use crate::friends::{
    FriendView, FriendsError, check_friend, check_name, delete_friend, friend_names, friend_view,
    friend_views, may_offload, rename_friend, resolve_friend, save_friend, set_offload,
};
use crate::net::{PeerId, Profile, StreamControl};
use crate::notes::{NotesError, check_text, query_notes, resolve_audience};
use crate::replication::{LoopCommand, LoopStatus};
use crate::sharing::offload::{Candidate, OfferedModel, advertise_offload, offload_candidates};
use crate::sharing::publish::post_reply;
use porfiry_storage::db::{Db, DbError};

/// A running node, cheap to clone; every clone talks to the same node.
/// The node stops after [`NodeHandle::shutdown`] or when the last clone is
/// dropped.
#[derive(Clone)]
pub struct NodeHandle {
    inner: Arc<Inner>,
}

struct Inner {
    peer_id: String,
    peer: PeerId,
    key: NodeKey,
    profile: Profile,
    db: Db,
    commands: mpsc::Sender<LoopCommand>,
    stop: watch::Sender<bool>,
    listening: watch::Receiver<Vec<String>>,
    clock: Arc<dyn Clock>,
    streams: StreamControl,
    events: CoreEvents,
    /// Counts the replication loop's "the database changed" signals.
    db_changes: watch::Sender<u64>,
    /// The data dir, when the handle runs over one (a full disk is
    /// reported with its free space).
    data_dir: Option<std::path::PathBuf>,
}

impl std::fmt::Debug for NodeHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NodeHandle")
            .field("peer_id", &self.inner.peer_id)
            .finish_non_exhaustive()
    }
}

impl NodeHandle {
    /// A handle over parts its caller runs: [`super::Node::spawn`] hands it
    /// the node thread's, and a test of a crate above (the agent's toolsets)
    /// reads the [`LoopCommand`]s itself where a loop would.
    // One argument per part the node thread shares with its handles.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        key: &NodeKey,
        profile: Profile,
        db: Db,
        commands: mpsc::Sender<LoopCommand>,
        stop: watch::Sender<bool>,
        listening: watch::Receiver<Vec<String>>,
        clock: Arc<dyn Clock>,
        streams: StreamControl,
        events: CoreEvents,
    ) -> NodeHandle {
        NodeHandle {
            inner: Arc::new(Inner {
                peer_id: key.peer_id().to_string(),
                peer: key.peer_id(),
                key: key.clone(),
                profile,
                db,
                commands,
                stop,
                listening,
                clock,
                streams,
                events,
                db_changes: watch::Sender::new(0),
                data_dir: None,
            }),
        }
    }

    /// The handle of a node over `dir` (set right after [`NodeHandle::new`],
    /// before the handle is cloned).
    pub fn with_data_dir(mut self, dir: std::path::PathBuf) -> NodeHandle {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.data_dir = Some(dir);
        }
        self
    }

    /// The node's key (model sharing signs its list with it).
    pub fn node_key(&self) -> &NodeKey {
        &self.inner.key
    }

    /// The data dir, if the handle runs over one.
    pub fn data_dir(&self) -> Option<&std::path::Path> {
        self.inner.data_dir.as_deref()
    }

    /// Moves each time the replication loop sees the database change —
    /// another process committed (a `porfiry invite` in a terminal), or
    /// this one did — at the loop's `data_version` poll. What depends on
    /// rows other processes write waits on this instead of polling.
    pub fn db_changes(&self) -> watch::Receiver<u64> {
        self.inner.db_changes.subscribe()
    }

    /// The sender of [`NodeHandle::db_changes`], for the loop.
    pub(crate) fn db_changes_sender(&self) -> watch::Sender<u64> {
        self.inner.db_changes.clone()
    }

    /// The cognitive core's wake-up events: notes posted through this
    /// handle and notes merged from friends are announced here.
    pub fn events(&self) -> CoreEvents {
        self.inner.events.clone()
    }

    /// Opens offload streams to friends and accepts theirs (one acceptor).
    pub fn streams(&self) -> StreamControl {
        self.inner.streams.clone()
    }

    /// This node's peer id (`12D3KooW…`).
    pub fn peer_id(&self) -> &str {
        &self.inner.peer_id
    }

    /// The database actor, for reads the handle has no call for.
    pub fn db(&self) -> &Db {
        &self.inner.db
    }

    /// The node's clock now (Unix ms), for writes made through
    /// [`NodeHandle::db`] that the handle has no call for (the API sets a
    /// friend's models permission with `porfiry_model_share`'s setter).
    pub fn now_ms(&self) -> u64 {
        self.now()
    }

    /// The addresses the node listens on (`<addr>/p2p/<id>`), growing as
    /// the transport reports them; `changed()` wakes on each.
    pub fn listening(&self) -> watch::Receiver<Vec<String>> {
        self.inner.listening.clone()
    }

    fn now(&self) -> u64 {
        self.inner.clock.now().unix_ms()
    }

    /// Hands the loop a command, waiting while its queue is full. A loop
    /// that has stopped is not an error for a write already committed: the
    /// next start picks the change up from the file.
    async fn tell(&self, command: LoopCommand) {
        if self.inner.commands.send(command).await.is_err() {
            tracing::debug!(
                "the replication loop has stopped; the change waits for the next start"
            );
        }
    }

    /// Writes a note (checked first, as `notes post` does; a reply signed
    /// with its `reply_to`) and, unless it is private, has the loop send it
    /// to its audience now.
    pub async fn post_note(&self, post: NotePost) -> Result<Posted, NodeError> {
        self.post_note_from(post, NoteSource::User).await
    }

    /// [`NodeHandle::post_note`] naming who wrote it: the cognitive core's
    /// notes and messages are `llm` (they do not wake it), the user's
    /// `user`. A direct message (`peer:ID`) to someone who is not a friend
    /// is refused.
    pub async fn post_note_from(
        &self,
        post: NotePost,
        source: NoteSource,
    ) -> Result<Posted, NodeError> {
        check_text(&post.text)?;
        let key = self.inner.key.clone();
        let now = self.now();
        let NotePost {
            text,
            audience,
            reply_to,
        } = post;
        let shown = audience.to_string();
        let posted = self
            .inner
            .db
            .write(move |s| post_reply(s, &key, &text, audience, source, reply_to, now))
            .await
            .map_err(db_err)?
            .map_err(NotesError::from)?;
        let item_id = posted.item.as_ref().map(|i| i.id().to_string());
        if let Some(item) = posted.item {
            self.tell(LoopCommand::Publish(item)).await;
        }
        if source != NoteSource::Llm {
            self.inner
                .events
                .send(crate::events::CoreEvent::NoteArrived { id: posted.id });
        }
        Ok(Posted {
            id: posted.id,
            audience: shown,
            item_id,
        })
    }

    /// Notes, oldest first, as `notes list` reads them.
    pub async fn notes(&self, query: NotesQuery) -> Result<Vec<NoteView>, NodeError> {
        let origin = query.origin.unwrap_or_default();
        let (notes, names) = self
            .inner
            .db
            .read(move |s| -> Result<_, NodeError> {
                Ok((
                    query_notes(s, origin, query.limit, query.newest)?,
                    friend_names(s)?,
                ))
            })
            .await
            .map_err(db_err)??;
        Ok(notes
            .into_iter()
            .map(|n| {
                let mut view = NoteView::from(n);
                view.author_name = view.author.as_ref().and_then(|a| names.get(a)).cloned();
                view
            })
            .collect())
    }

    /// Adds a friend (or replaces its addresses and groups), checked as
    /// `friends add` does; the node allows and dials it at once.
    pub async fn add_friend(
        &self,
        peer: &str,
        addresses: Vec<String>,
        groups: Vec<String>,
    ) -> Result<FriendView, NodeError> {
        self.add_friend_with_offload(peer, addresses, groups, None)
            .await
    }

    /// [`NodeHandle::add_friend`] that also sets the friend's offload
    /// permission (`None` keeps an existing friend's; a new one starts
    /// without), as `friends add --allow-offload` does.
    pub async fn add_friend_with_offload(
        &self,
        peer: &str,
        addresses: Vec<String>,
        groups: Vec<String>,
        allow_offload: Option<bool>,
    ) -> Result<FriendView, NodeError> {
        self.add_named_friend(peer, addresses, groups, None, allow_offload)
            .await
    }

    /// [`NodeHandle::add_friend_with_offload`] that also names the friend
    /// (`None` keeps an existing friend's name; a new one starts without),
    /// as `friends add --name` does: a name another friend has is refused
    /// and nothing is written.
    pub async fn add_named_friend(
        &self,
        peer: &str,
        addresses: Vec<String>,
        groups: Vec<String>,
        name: Option<String>,
        allow_offload: Option<bool>,
    ) -> Result<FriendView, NodeError> {
        let mut friend = check_friend(peer, &addresses, &groups)?;
        if let Some(name) = &name {
            check_name(name)?;
        }
        friend.name = name;
        friend.allow_offload = allow_offload;
        let own = self.inner.peer;
        let now = self.now();
        let view = self
            .inner
            .db
            .write(move |s| -> Result<FriendView, FriendsError> {
                save_friend(s, &own, &friend, now)?;
                Ok(friend_view(s.friend(&friend.peer.to_string())?))
            })
            .await
            .map_err(db_err)??;
        self.tell(LoopCommand::FriendsChanged).await;
        Ok(view)
    }

    /// Redeems an invitation secret presented by `peer` (see
    /// [`crate::invite`]): on success `peer` is a friend with the
    /// invitation's name and groups and the mesh is told at once; a refused
    /// secret changes nothing.
    pub async fn redeem_invitation(
        &self,
        peer: PeerId,
        secret: crate::invite::Secret,
    ) -> Result<Result<crate::invite::Redeemed, crate::invite::Refusal>, NodeError> {
        let own = self.inner.peer;
        let now = self.now();
        let outcome = self
            .inner
            .db
            .write(move |s| crate::invite::redeem(s, &own, &peer, &secret, now))
            .await
            .map_err(db_err)??;
        if outcome.is_ok() {
            self.tell(LoopCommand::FriendsChanged).await;
        }
        Ok(outcome)
    }

    /// Removes a friend (by peer id or name); its connections close. An
    /// unknown friend is an error for which [`NodeError::is_not_found`] holds.
    pub async fn remove_friend(&self, peer: &str) -> Result<(), NodeError> {
        let given = peer.to_owned();
        self.inner
            .db
            .write(move |s| delete_friend(s, &resolve_friend(s, &given)?))
            .await
            .map_err(db_err)??;
        self.tell(LoopCommand::FriendsChanged).await;
        Ok(())
    }

    /// Allows or refuses a friend's offload requests (`friends offload
    /// PEER on|off`, by peer id or name); an unknown friend is an error for
    /// which [`NodeError::is_not_found`] holds.
    pub async fn set_friend_offload(&self, peer: &str, on: bool) -> Result<(), NodeError> {
        let given = peer.to_owned();
        let now = self.now();
        self.inner
            .db
            .write(move |s| set_offload(s, &resolve_friend(s, &given)?, on, now))
            .await
            .map_err(db_err)??;
        Ok(())
    }

    /// Gives a friend (by peer id or current name) a new local name, as
    /// `friends rename` does; returns the friend as listed. A name another
    /// friend has is refused, naming that friend.
    pub async fn rename_friend(&self, peer: &str, name: &str) -> Result<FriendView, NodeError> {
        check_name(name)?;
        let (given, name) = (peer.to_owned(), name.to_owned());
        let now = self.now();
        Ok(self
            .inner
            .db
            .write(move |s| -> Result<FriendView, FriendsError> {
                let peer = resolve_friend(s, &given)?;
                rename_friend(s, &peer, &name, now)?;
                Ok(friend_view(s.friend(&peer.to_string())?))
            })
            .await
            .map_err(db_err)??)
    }

    /// Parses an audience as `notes post --audience` does, `peer:` taking a
    /// friend's name as well as a peer id.
    pub async fn resolve_audience(&self, given: &str) -> Result<Sharing, NodeError> {
        let given = given.to_owned();
        Ok(self
            .inner
            .db
            .read(move |s| resolve_audience(s, &given))
            .await
            .map_err(db_err)??)
    }

    /// Whether `peer` is a friend allowed to offload onto this node's model
    /// (read from the database on each call, so a `friends offload` in
    /// another process counts at once).
    pub async fn may_offload(&self, peer: PeerId) -> Result<bool, NodeError> {
        Ok(self
            .inner
            .db
            .read(move |s| may_offload(s, &peer))
            .await
            .map_err(db_err)??)
    }

    /// Makes the node's `LlmAddress` advertisement match `offer` (publish,
    /// replace, or with `None` retract) and sends what changed to friends
    /// now. Returns how many items were sent.
    pub async fn advertise_offload(&self, offer: Option<OfferedModel>) -> Result<usize, NodeError> {
        let key = self.inner.key.clone();
        let now = self.now();
        let items = self
            .inner
            .db
            .write(move |s| advertise_offload(s, &key, offer.as_ref(), now))
            .await
            .map_err(db_err)??;
        let n = items.len();
        for item in items {
            self.tell(LoopCommand::Publish(item)).await;
        }
        Ok(n)
    }

    /// Friends' models this node may offload to, from their advertisements.
    pub async fn offload_candidates(&self) -> Result<Vec<Candidate>, NodeError> {
        Ok(self
            .inner
            .db
            .read(offload_candidates)
            .await
            .map_err(db_err)??)
    }

    /// Every friend.
    pub async fn friends(&self) -> Result<Vec<FriendView>, NodeError> {
        Ok(self.inner.db.read(friend_views).await.map_err(db_err)??)
    }

    /// Peer id, profile, friends (connected or not, with the time of the
    /// last catch-up with each), items per kind.
    pub async fn status(&self) -> Result<NodeStatus, NodeError> {
        let (tx, rx) = oneshot::channel();
        self.inner
            .commands
            .send(LoopCommand::Status(tx))
            .await
            .map_err(|_| NodeError::Stopped)?;
        let live: LoopStatus = rx.await.map_err(|_| NodeError::Stopped)?;
        let (friends, kinds, database_bytes) = self
            .inner
            .db
            .read(|s| -> Result<_, NodeError> {
                Ok((
                    friend_views(s)?,
                    s.item_counts_by_kind()?,
                    s.database_bytes()?,
                ))
            })
            .await
            .map_err(db_err)??;
        let friends: Vec<FriendCatchup> = friends
            .into_iter()
            .map(|f| FriendCatchup {
                name: f.name,
                connected: live.connected.contains(&f.peer_id),
                last_catchup_ms: live.last_catchup_ms.get(&f.peer_id).copied(),
                peer_id: f.peer_id,
            })
            .collect();
        Ok(NodeStatus {
            peer_id: self.inner.peer_id.clone(),
            profile: profile_name(self.inner.profile).to_owned(),
            friends_connected: friends.iter().filter(|f| f.connected).count(),
            friends,
            items_per_kind: kinds.into_iter().collect::<BTreeMap<_, _>>(),
            items_held: live.items_held,
            database_bytes,
            refused: live.refused,
        })
    }

    /// Asks the node to stop; its [`super::NodeJoin`] resolves once all it
    /// accepted is committed and the database is closed.
    pub fn shutdown(&self) {
        self.inner.stop.send_replace(true);
    }
}

/// A closed database actor means the node has stopped.
fn db_err(e: DbError) -> NodeError {
    match e {
        DbError::Closed => NodeError::Stopped,
        other => NodeError::Db(other),
    }
}

mod clubs;
mod devices;
mod invitations;
#[cfg(test)]
mod tests;

pub use invitations::InvitationError;

//! [`NodeAdapter`]: the running node's `NodeHandle` as the API's
//! [`NodeApi`] — notes, friends, invitations, clubs, the mind, devices,
//! the page's sessions and turn records, and the backup download.

use porfiry_storage::{KeptTurnRecord, Sharing};

use crate::backend::{
    BackupDownload, BoxFuture, FriendSettings, NodeApi, NodeApiError, NodeResult, NoteRequest,
    NotesRequest,
};
use crate::feed;
use crate::limits::{MAX_TURN_RECORD_BYTES, MAX_TURN_RECORDS};
use crate::turn_records::{KeptRecord, RecordChange};
use crate::web::signin::KeptSession;
use porfiry_skills::cognition::THINKING_PAUSED_KEY;

use porfiry_mesh::friends::resolve_friend;
use porfiry_mesh::node::{NodeError, NodeHandle, NotePost, Origin};
use porfiry_model_share::set_share_models;

/// The running node as the API's [`NodeApi`].
pub struct NodeAdapter {
    node: NodeHandle,
    links_file: Option<std::path::PathBuf>,
    /// The settings file a backup takes along (`run`'s `--config`).
    settings_file: Option<std::path::PathBuf>,
    /// What a backup's manifest says made it.
    made_by: String,
}

impl NodeAdapter {
    /// The adapter over `node`.
    pub fn new(node: NodeHandle) -> Self {
        Self {
            node,
            links_file: None,
            settings_file: None,
            made_by: crate::backup::DEFAULT_MADE_BY.to_owned(),
        }
    }

    /// The adapter over `node`, whose friends carry their link (`"link"`:
    /// direct, relayed or not connected, and since when) as the daemon last
    /// wrote it to `links_file` (`links.json` in the data dir).
    pub fn with_links_file(node: NodeHandle, links_file: std::path::PathBuf) -> Self {
        Self {
            links_file: Some(links_file),
            ..Self::new(node)
        }
    }

    /// This adapter, whose backups (`POST /api/backup`) take along
    /// `settings_file` (the settings file the node runs with, if any) and
    /// say they were made by `made_by` (`porfiry --version`).
    pub fn with_backup_settings(
        mut self,
        settings_file: Option<std::path::PathBuf>,
        made_by: impl Into<String>,
    ) -> Self {
        self.settings_file = settings_file;
        self.made_by = made_by.into();
        self
    }

    /// `friends` with each one's link record merged in as `"link"`.
    fn with_links(&self, mut friends: serde_json::Value) -> serde_json::Value {
        let Some(path) = &self.links_file else {
            return friends;
        };
        let links = porfiry_mesh::net::LinksFile::read(path);
        if let Some(list) = friends.as_array_mut() {
            for friend in list {
                let record = friend
                    .get("peer_id")
                    .and_then(|p| p.as_str())
                    .and_then(|p| links.as_ref()?.friends.get(p))
                    .and_then(|r| serde_json::to_value(r).ok())
                    .unwrap_or_else(|| serde_json::json!({"link": "not connected"}));
                if let Some(object) = friend.as_object_mut() {
                    object.insert("link".to_owned(), record);
                }
            }
        }
        friends
    }
}

fn invitation_error(error: porfiry_mesh::node::InvitationError) -> NodeApiError {
    use porfiry_mesh::node::InvitationError as E;
    match error {
        E::Node(e) => node_error(e),
        E::Code(_) | E::Make(_) | E::Present(_) => NodeApiError::BadInput(error.to_string()),
    }
}

impl NodeAdapter {
    /// Allows or refuses a friend's (by peer id or name) pulls of this
    /// node's model files, with the setter `friends models PEER on|off`
    /// uses; an unknown friend is 404.
    async fn set_friend_models(&self, peer: String, on: bool) -> NodeResult<()> {
        let now = self.node.now_ms();
        self.node
            .db()
            .write(move |s| set_share_models(s, &resolve_friend(s, &peer)?, on, now))
            .await
            .map_err(|e| self.node_error(e.into()))?
            .map_err(|e| self.node_error(e.into()))
    }

    /// [`node_error`], a full disk named with the data dir and its free
    /// space (`porfiry_storage::disk::full_message`).
    fn node_error(&self, error: NodeError) -> NodeApiError {
        match self.node.data_dir() {
            Some(dir) if porfiry_storage::disk::is_disk_full(&error) => {
                NodeApiError::DiskFull(porfiry_storage::disk::full_message(dir))
            }
            _ => node_error(error),
        }
    }
}

/// A node's refusal as the API says it: bad input → 400, unknown → 404, a
/// full disk → 507, else 500.
pub(crate) fn node_error(error: NodeError) -> NodeApiError {
    if error.is_not_found() {
        NodeApiError::NotFound(error.to_string())
    } else if error.is_bad_input() {
        NodeApiError::BadInput(error.to_string())
    } else if porfiry_storage::disk::is_disk_full(&error) {
        NodeApiError::DiskFull(error.to_string())
    } else {
        NodeApiError::Internal(error.to_string())
    }
}

/// A failure of the node itself (database, serialisation) → 500.
fn internal(error: impl std::fmt::Display) -> NodeApiError {
    NodeApiError::Internal(error.to_string())
}

fn json<T: serde::Serialize>(value: &T) -> NodeResult {
    serde_json::to_value(value).map_err(internal)
}

/// The config key under which the family page's browser sessions (hashed
/// ids and expiries) outlive a restart.
pub const PAGE_SESSIONS_KEY: &str = "family_page_sessions";

/// Parses `?origin=`.
pub fn parse_origin(origin: &str) -> Result<Origin, NodeApiError> {
    match origin {
        "own" => Ok(Origin::Own),
        "friends" => Ok(Origin::Friends),
        "all" => Ok(Origin::All),
        other => Err(NodeApiError::BadInput(format!(
            "bad origin {other:?}: expected own, friends or all"
        ))),
    }
}

impl NodeApi for NodeAdapter {
    fn notes(&self, query: NotesRequest) -> BoxFuture<'_, NodeResult> {
        Box::pin(async move {
            let origin = query
                .origin
                .as_deref()
                .map(parse_origin)
                .transpose()?
                .unwrap_or_default();
            let limit = u32::try_from(query.limit).map_err(|_| {
                NodeApiError::BadInput(format!("limit {} is too large", query.limit))
            })?;
            let audience = query.audience;
            self.node
                .db()
                .read(move |s| feed::list(s, origin, audience.as_deref(), limit, query.newest))
                .await
                .map_err(internal)?
        })
    }

    fn post_note(&self, note: NoteRequest) -> BoxFuture<'_, NodeResult> {
        Box::pin(async move {
            let NoteRequest {
                text,
                audience,
                reply_to,
            } = note;
            if let Some(answered) = reply_to {
                self.node
                    .db()
                    .read(move |s| feed::check_reply_target(s, answered))
                    .await
                    .map_err(internal)??;
            }
            // `peer:` takes a friend's name too, resolved here.
            let sharing: Sharing = self
                .node
                .resolve_audience(&audience)
                .await
                .map_err(|e| self.node_error(e))?;
            let post = NotePost {
                text,
                audience: sharing,
                reply_to,
            };
            let mut posted = json(
                &self
                    .node
                    .post_note(post)
                    .await
                    .map_err(|e| self.node_error(e))?,
            )?;
            if let (Some(answered), Some(object)) = (reply_to, posted.as_object_mut()) {
                object.insert("reply_to".to_owned(), answered.to_string().into());
            }
            Ok(posted)
        })
    }

    fn page_sessions(&self) -> BoxFuture<'_, NodeResult<Vec<KeptSession>>> {
        Box::pin(async move {
            let kept: Option<Vec<KeptSession>> = self
                .node
                .db()
                .read(|s| s.config_get(PAGE_SESSIONS_KEY))
                .await
                .map_err(internal)?
                .map_err(internal)?;
            Ok(kept.unwrap_or_default())
        })
    }

    fn save_page_sessions(
        &self,
        sessions: Vec<KeptSession>,
        now_ms: u64,
    ) -> BoxFuture<'_, NodeResult<()>> {
        Box::pin(async move {
            self.node
                .db()
                .write(move |s| s.config_set(PAGE_SESSIONS_KEY, &sessions, now_ms))
                .await
                .map_err(internal)?
                .map_err(internal)
        })
    }

    fn turn_records(&self) -> BoxFuture<'_, NodeResult<Vec<KeptRecord>>> {
        Box::pin(async move {
            let kept = self
                .node
                .db()
                .read(|s| s.turn_records())
                .await
                .map_err(internal)?
                .map_err(internal)?;
            let mut records = Vec::with_capacity(kept.len());
            for record in kept {
                // A record that no longer reads is skipped, not fatal: it
                // only costs that turn's tool results.
                match serde_json::from_str(&record.turns) {
                    Ok(turns) => records.push((record.key, turns)),
                    Err(e) => {
                        tracing::warn!(error = %e, "a kept turn record does not read; skipped")
                    }
                }
            }
            Ok(records)
        })
    }

    fn keep_turn_record(&self, change: RecordChange) -> BoxFuture<'_, NodeResult<()>> {
        Box::pin(async move {
            let written = match change {
                RecordChange::Kept { key, turns, bytes } => {
                    let record = KeptTurnRecord {
                        key,
                        turns: serde_json::to_string(&turns).map_err(internal)?,
                        bytes: bytes as u64,
                    };
                    let budget = MAX_TURN_RECORD_BYTES as u64;
                    self.node
                        .db()
                        .write(move |s| s.put_turn_record(&record, MAX_TURN_RECORDS, budget))
                        .await
                }
                RecordChange::Dropped { key } => {
                    self.node
                        .db()
                        .write(move |s| s.delete_turn_record(&key))
                        .await
                }
            };
            written.map_err(internal)?.map_err(internal)
        })
    }

    fn friends(&self) -> BoxFuture<'_, NodeResult> {
        Box::pin(async move {
            let friends = json(&self.node.friends().await.map_err(|e| self.node_error(e))?)?;
            Ok(self.with_links(friends))
        })
    }

    fn add_friend(
        &self,
        peer: String,
        addresses: Vec<String>,
        groups: Vec<String>,
        settings: FriendSettings,
    ) -> BoxFuture<'_, NodeResult> {
        Box::pin(async move {
            let FriendSettings {
                name,
                allow_offload,
                allow_models,
            } = settings;
            let mut view = self
                .node
                .add_named_friend(&peer, addresses, groups, name, allow_offload)
                .await
                .map_err(|e| self.node_error(e))?;
            if let Some(on) = allow_models {
                self.set_friend_models(view.peer_id.clone(), on).await?;
                view.allow_models = on;
            }
            json(&view)
        })
    }

    fn remove_friend(&self, peer: String) -> BoxFuture<'_, NodeResult<()>> {
        Box::pin(async move {
            self.node
                .remove_friend(&peer)
                .await
                .map_err(|e| self.node_error(e))
        })
    }

    fn status(&self) -> BoxFuture<'_, NodeResult> {
        Box::pin(async move { json(&self.node.status().await.map_err(|e| self.node_error(e))?) })
    }

    fn changes(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        Some(self.node.db_changes())
    }

    fn update_friend(&self, peer: String, settings: FriendSettings) -> BoxFuture<'_, NodeResult> {
        Box::pin(async move {
            let FriendSettings {
                name,
                allow_offload,
                allow_models,
            } = settings;
            let mut peer = peer;
            if let Some(name) = name {
                let view = self
                    .node
                    .rename_friend(&peer, &name)
                    .await
                    .map_err(|e| self.node_error(e))?;
                peer = view.peer_id;
            }
            if let Some(on) = allow_offload {
                self.node
                    .set_friend_offload(&peer, on)
                    .await
                    .map_err(|e| self.node_error(e))?;
            }
            if let Some(on) = allow_models {
                self.set_friend_models(peer.clone(), on).await?;
            }
            let friends = self.node.friends().await.map_err(|e| self.node_error(e))?;
            let view = friends
                .into_iter()
                .find(|f| f.peer_id == peer || f.name.as_deref() == Some(peer.as_str()))
                .ok_or_else(|| NodeApiError::NotFound(format!("{peer} is not a friend")))?;
            json(&view)
        })
    }

    fn invite(
        &self,
        name: String,
        groups: Vec<String>,
        valid_for: std::time::Duration,
    ) -> BoxFuture<'_, NodeResult<String>> {
        Box::pin(async move {
            let request = porfiry_mesh::invite::InvitationRequest {
                name,
                groups,
                valid_for,
                addresses: Vec::new(),
                kind: porfiry_storage::InvitationKind::Friend,
            };
            self.node.invite(request).await.map_err(invitation_error)
        })
    }

    fn clubs(&self) -> BoxFuture<'_, NodeResult> {
        Box::pin(async move { json(&self.node.clubs().await.map_err(|e| self.node_error(e))?) })
    }

    fn mind(&self) -> BoxFuture<'_, NodeResult> {
        let me = self.node.peer_id().to_owned();
        Box::pin(async move {
            self.node
                .db()
                .read(move |s| crate::mind_view::mind_view(s, &me))
                .await
                .map_err(internal)?
                .map_err(internal)
        })
    }

    fn set_thinking_paused(&self, paused: bool, now_ms: u64) -> BoxFuture<'_, NodeResult<()>> {
        Box::pin(async move {
            self.node
                .db()
                .write(move |s| s.config_set(THINKING_PAUSED_KEY, &paused, now_ms))
                .await
                .map_err(internal)?
                .map_err(internal)?;
            // Wakes a paused core to look again (it never polls).
            self.node
                .events()
                .send(porfiry_mesh::events::CoreEvent::ThinkingSwitched);
            tracing::info!(paused, "thinking switched from the API");
            Ok(())
        })
    }

    fn join(&self, code: String, name: Option<String>) -> BoxFuture<'_, NodeResult> {
        Box::pin(async move {
            let view = self
                .node
                .join(code.trim(), name)
                .await
                .map_err(invitation_error)?;
            json(&view)
        })
    }

    fn devices(&self) -> BoxFuture<'_, NodeResult> {
        Box::pin(async move { json(&self.node.devices().await.map_err(|e| self.node_error(e))?) })
    }

    fn link_device(&self, valid_for: std::time::Duration) -> BoxFuture<'_, NodeResult<String>> {
        Box::pin(async move {
            self.node
                .link_device(valid_for)
                .await
                .map_err(invitation_error)
        })
    }

    fn join_device(&self, code: String) -> BoxFuture<'_, NodeResult> {
        Box::pin(async move {
            json(
                &self
                    .node
                    .join_device(code.trim())
                    .await
                    .map_err(invitation_error)?,
            )
        })
    }

    fn unlink_device(&self, peer: String) -> BoxFuture<'_, NodeResult<()>> {
        Box::pin(async move {
            self.node
                .unlink_device(&peer)
                .await
                .map_err(|e| self.node_error(e))
        })
    }

    fn backup(&self, passphrase: String) -> BoxFuture<'_, NodeResult<BackupDownload>> {
        Box::pin(async move {
            let Some(dir) = self.node.data_dir() else {
                return Err(NodeApiError::BadInput(
                    "backups are not supported by this node: it keeps no data dir".to_owned(),
                ));
            };
            let settings = self.settings_file.clone();
            crate::backup::make(
                dir.to_path_buf(),
                settings,
                self.made_by.clone(),
                passphrase,
            )
            .await
        })
    }
}

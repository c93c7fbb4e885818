//! Posting the mesh-request mechanism's note ("tell me something new") to
//! friends: through the running node when there is one (so it is sent at
//! once), else signed with the node's key into the database, for the
//! daemon to send at its next start or poll.

use porfiry_protocol::{Audience, NodeKey};
use porfiry_skills::BoxFuture;
use porfiry_storage::{NoteSource, Sharing};

use porfiry_mesh::node::{NodeHandle, NotePost};
use porfiry_mesh::sharing::post_note;
use porfiry_storage::db::Db;

/// Who posts the "ask friends" note for the mesh-request mechanism.
pub trait FriendsAsker: Send + Sync {
    /// Posts `text` to friends; the note's row id.
    fn ask<'a>(&'a self, text: String) -> porfiry_skills::BoxFuture<'a, Result<i64, String>>;
}

/// Asks through the running node.
pub struct NodeAsker(pub NodeHandle);

impl FriendsAsker for NodeAsker {
    fn ask<'a>(&'a self, text: String) -> BoxFuture<'a, Result<i64, String>> {
        Box::pin(async move {
            self.0
                .post_note_from(
                    NotePost {
                        text,
                        audience: Sharing::Shared(Audience::Friends),
                        reply_to: None,
                    },
                    NoteSource::Llm,
                )
                .await
                .map(|posted| posted.id)
                .map_err(|e| e.to_string())
        })
    }
}

/// Asks by signing the note into the database (no node in this process).
pub struct KeyAsker {
    db: Db,
    key: std::sync::Arc<NodeKey>,
}

impl KeyAsker {
    /// An asker signing with `key`.
    pub fn new(db: Db, key: NodeKey) -> Self {
        Self {
            db,
            key: std::sync::Arc::new(key),
        }
    }
}

impl FriendsAsker for KeyAsker {
    fn ask<'a>(&'a self, text: String) -> BoxFuture<'a, Result<i64, String>> {
        Box::pin(async move {
            let key = self.key.clone();
            let now = porfiry_mesh::clock::now_ms();
            self.db
                .write(move |s| {
                    post_note(
                        s,
                        &key,
                        &text,
                        Sharing::Shared(Audience::Friends),
                        NoteSource::Llm,
                        now,
                    )
                })
                .await
                .map_err(|e| e.to_string())?
                .map(|posted| posted.id)
                .map_err(|e| e.to_string())
        })
    }
}

//! The "ask friends" mechanism of a simulated mind ([`SimAsker`]): the
//! node's own `post_note`, signed at virtual time, the item kept in the
//! mind's outbox and handed to the engine after the tick.

use std::sync::{Arc, Mutex, PoisonError};

use porfiry_agent::cognition::FriendsAsker;
use porfiry_mesh::sharing::post_note;
use porfiry_protocol::{Audience, NodeKey, VerifiedItem};
use porfiry_skills::{BoxFuture, Clock, ManualClock};
use porfiry_storage::db::Db;
use porfiry_storage::{NoteSource, Sharing};

/// The poster of one mind.
pub(crate) struct SimAsker {
    pub(crate) db: Db,
    pub(crate) key: Arc<NodeKey>,
    pub(crate) clock: ManualClock,
    pub(crate) outbox: Arc<Mutex<Vec<VerifiedItem>>>,
}

impl FriendsAsker for SimAsker {
    fn ask<'a>(&'a self, text: String) -> BoxFuture<'a, Result<i64, String>> {
        Box::pin(async move {
            let key = self.key.clone();
            let now = self.clock.now().unix_ms();
            let posted = self
                .db
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
                .map_err(|e| e.to_string())?;
            if let Some(item) = posted.item {
                self.outbox
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(item);
            }
            Ok(posted.id)
        })
    }
}

//! What [`super::NodeHandle`]'s calls take and return. Every returned type
//! derives `Serialize`: the API sends them as JSON as they are.

use std::collections::BTreeMap;

use porfiry_protocol::ItemId;
use porfiry_storage::{Note, Sharing, Stored};
use serde::{Deserialize, Serialize};

use crate::net::Profile;
pub use crate::notes::Origin;

/// A note to post.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotePost {
    /// The text (mentions and hashtags are parsed from it).
    pub text: String,
    /// Who receives it: `public`, `friends`, `group:NAME`, `peer:PEER_ID` or `private`.
    pub audience: Sharing,
    /// The item id of the note it answers, if it is a reply (signed into
    /// the item, so a friend's node shows what it answers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_to: Option<ItemId>,
}

/// A posted note.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Posted {
    /// The note's row id.
    pub id: i64,
    /// Its audience.
    pub audience: String,
    /// The signed item's id (hex), unless the note is private.
    pub item_id: Option<String>,
}

/// Which notes to list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct NotesQuery {
    /// Whose notes (own, friends', all when unset).
    #[serde(default)]
    pub origin: Option<Origin>,
    /// At most this many (all when unset): the oldest ones, or the newest
    /// with `newest`; listed oldest first either way.
    #[serde(default)]
    pub limit: Option<usize>,
    /// Take the newest `limit` notes rather than the oldest (a feed's view).
    #[serde(default)]
    pub newest: bool,
}

/// One note as listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NoteView {
    /// Row id.
    pub id: i64,
    /// The text.
    pub text: String,
    /// Its audience (`private`, `friends`, …).
    pub audience: String,
    /// The author's peer id for notes merged from friends; `None` for own.
    pub author: Option<String>,
    /// What this node calls the author, if it named that friend.
    pub author_name: Option<String>,
    /// The item it is or came from (hex), if any.
    pub item_id: Option<String>,
    /// When it was written (Unix ms; the author's time for merged notes).
    pub created_ms: u64,
    /// Hashtags parsed from the text.
    pub hashtags: Vec<String>,
    /// Mentions parsed from the text.
    pub mentions: Vec<String>,
}

impl From<Stored<Note>> for NoteView {
    fn from(n: Stored<Note>) -> NoteView {
        let item = n.row.origin_item_id.or(n.row.item_id);
        NoteView {
            id: n.id,
            text: n.row.text,
            audience: n.row.audience.to_string(),
            author: n.row.origin_author,
            author_name: None,
            item_id: item.map(|i| i.to_string()),
            created_ms: n.created_ms,
            hashtags: n.row.hashtags,
            mentions: n.row.mentions,
        }
    }
}

/// One friend's replication state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FriendCatchup {
    /// The friend's peer id.
    pub peer_id: String,
    /// What this node calls it, if anything.
    pub name: Option<String>,
    /// Connected now.
    pub connected: bool,
    /// When a catch-up session with it last ended (Unix ms), if one did
    /// since the node started.
    pub last_catchup_ms: Option<u64>,
}

/// What `NodeHandle::status` reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeStatus {
    /// This node's peer id.
    pub peer_id: String,
    /// `server` or `phone`.
    pub profile: String,
    /// Friends connected now.
    pub friends_connected: usize,
    /// Every friend with its replication state.
    pub friends: Vec<FriendCatchup>,
    /// Stored items per kind (`note`, `retraction`, …).
    pub items_per_kind: BTreeMap<String, u64>,
    /// Items the engine holds.
    pub items_held: usize,
    /// The size of the node's database in bytes.
    pub database_bytes: u64,
    /// Authors the quotas refused since the node started, most items first.
    pub refused: Vec<crate::replication::refused_file::RefusedAuthor>,
}

/// `server` or `phone`.
pub(crate) fn profile_name(profile: Profile) -> &'static str {
    match profile {
        Profile::Server => "server",
        Profile::Phone => "phone",
    }
}

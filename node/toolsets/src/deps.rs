//! What the toolsets that act on the node's storage share: the database
//! actor, the language of their texts, the core's wake-up events and — when
//! the mesh runs in this process — the node handle, so that friends added
//! and notes published by a command reach the replication loop at once.

use porfiry_skills::Language;

use porfiry_mesh::events::CoreEvents;
use porfiry_mesh::node::NodeHandle;
use porfiry_storage::db::Db;

/// Shared by every storage toolset; cheap to clone.
#[derive(Clone)]
pub struct StoreTools {
    /// The node's database actor.
    pub db: Db,
    /// The language of descriptions and replies.
    pub language: Language,
    /// Where finished processes and new notes are announced.
    pub events: CoreEvents,
    /// The running node, when there is one (`porfiry run`); `None` under
    /// `porfiry think` without a mesh.
    pub node: Option<NodeHandle>,
}

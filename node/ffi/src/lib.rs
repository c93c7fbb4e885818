//! `porfiry-ffi`: the node as a phone app's engine. One object,
//! [`PorfiryNode`], that an app written in Kotlin, Swift or Python holds
//! through bindings UniFFI generates from this library: start it on a data
//! dir, post and read notes, manage friends and invitations, chat with the
//! agent (streamed to a listener, cancellable), hear new notes and link
//! changes, and follow the lifecycle the OS imposes — [`PorfiryNode::pause`]
//! when the app goes to the background, [`PorfiryNode::resume`], and
//! [`PorfiryNode::sync_now`] for a push notification's short wake.
//!
//! Files by job: [`settings`] (what `start` takes, checked), [`error`] (the
//! one error enum), [`views`] (the records returned), [`listeners`] (the
//! traits the app implements), [`app_tools`] (the app's own toolsets),
//! [`chat`] (turns and their handles),
//! [`chat_store`] (chat histories kept in the database), [`clubs`],
//! [`devices`] (the person's other nodes), [`model_pull`] (a model from a friend's node),
//! `running` (the started parts), [`node`] (the object and its lifecycle),
//! `sync` (one bounded catch-up), [`think_policy`] and `thinking` (the
//! cognitive core under a phone's rules), [`logging`] (`PORFIRY_LOG`).

uniffi::setup_scaffolding!();

pub mod app_tools;
pub mod chat;
pub mod chat_store;
pub mod clubs;
pub mod devices;
pub mod error;
pub mod listeners;
pub mod logging;
pub mod model_pull;
pub mod node;
mod running;
pub mod settings;
mod sync;
pub mod think_policy;
mod thinking;
pub mod views;

pub use app_tools::{ArgKind, ArgSpec, ToolError, ToolSpec, ToolsetHandler, ToolsetSpec};
pub use chat::TaskHandle;
pub use error::PorfiryError;
pub use listeners::{ChatListener, NodeListener};
pub use model_pull::{ModelPullListener, PulledModel};
pub use node::PorfiryNode;
pub use settings::{ModelSource, NodeProfile, NodeSettings};
pub use views::{
    ChatAnswer, ChatEntry, ChatSessionInfo, Club, Device, Friend, FriendLink, Note, Status,
    SyncReport, ThinkingStatus, TickView,
};

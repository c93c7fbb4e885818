//! The traits an app implements in its own language: [`NodeListener`]
//! hears what happens on the node (a note arrived, a friend's link
//! changed, the core thought) so it can show a notification without
//! polling, and
//! [`ChatListener`] hears one chat turn as it streams.

use crate::error::PorfiryError;
use crate::views::{ChatAnswer, FriendLink, Note, TickView};

/// What happens on a running node. Called from the node's thread: return
/// quickly (hand work to the app's own queue).
#[uniffi::export(with_foreign)]
pub trait NodeListener: Send + Sync {
    /// A note was stored: a friend's that arrived, or one posted here.
    fn on_note(&self, note: Note);
    /// A friend connected or its link ended.
    fn on_link(&self, link: FriendLink);
    /// The phone's cognitive core finished a tick.
    fn on_tick(&self, tick: TickView);
}

/// One chat turn as it happens.
#[uniffi::export(with_foreign)]
pub trait ChatListener: Send + Sync {
    /// More answer text (never a tool call line).
    fn on_text(&self, text: String);
    /// A tool's event for the app (`show_text`, a media action), as JSON.
    fn on_tool_event(&self, event_json: String);
    /// The turn ended with this answer.
    fn on_done(&self, answer: ChatAnswer);
    /// The turn failed (or was cancelled: [`PorfiryError::Model`] saying so).
    fn on_error(&self, error: PorfiryError);
}

//! The records the bindings return: notes, friends, devices, the node's
//! status, a sync's report and a chat's answer, each a plain copy of the node's own
//! view (`porfiry_mesh::node::views`) in types every binding language has.

use porfiry_mesh::FriendView;
use porfiry_mesh::devices::DeviceListing;
use porfiry_mesh::node::{FriendCatchup, NodeStatus, NoteView};
use porfiry_mesh::sharing::clubs::ClubListing;

/// A club this node knows.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct Club {
    /// `NAME@FOUNDER`: the audience `club:…` takes it.
    pub club: String,
    /// The short name.
    pub name: String,
    /// The founder's peer id.
    pub founder: String,
    /// This node's role: `founder`, `admin`, `member` or `outside`.
    pub role: String,
    /// Members now.
    pub members: u32,
}

impl From<ClubListing> for Club {
    fn from(c: ClubListing) -> Self {
        Club {
            club: c.club,
            name: c.name,
            founder: c.founder,
            role: c.role.to_owned(),
            members: u32::try_from(c.members).unwrap_or(u32::MAX),
        }
    }
}

/// One note.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct Note {
    /// Row id on this node.
    pub id: i64,
    /// The text.
    pub text: String,
    /// `private`, `friends`, `public`, `group:NAME`, `peer:ID`, `club:ID`.
    pub audience: String,
    /// The author's peer id; `None` for this node's own notes.
    pub author: Option<String>,
    /// What this node calls the author.
    pub author_name: Option<String>,
    /// When it was written (Unix ms).
    pub created_ms: u64,
    /// Hashtags in the text.
    pub hashtags: Vec<String>,
}

impl From<NoteView> for Note {
    fn from(n: NoteView) -> Self {
        Note {
            id: n.id,
            text: n.text,
            audience: n.audience,
            author: n.author,
            author_name: n.author_name,
            created_ms: n.created_ms,
            hashtags: n.hashtags,
        }
    }
}

/// One friend.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct Friend {
    /// Its peer id.
    pub peer_id: String,
    /// What this node calls it.
    pub name: Option<String>,
    /// Where it is dialled.
    pub addresses: Vec<String>,
    /// Groups it is in.
    pub groups: Vec<String>,
    /// May it use this node's model.
    pub allow_offload: bool,
}

impl From<FriendView> for Friend {
    fn from(f: FriendView) -> Self {
        Friend {
            peer_id: f.peer_id,
            name: f.name,
            addresses: f.addresses,
            groups: f.groups,
            allow_offload: f.allow_offload,
        }
    }
}

/// Another node of the same person (a device): the two share the
/// long-term memory, and nobody else gets it.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct Device {
    /// Its peer id.
    pub peer_id: String,
    /// What this node calls it (its friend name), if anything.
    pub name: Option<String>,
    /// When the link that makes it a device was signed (Unix ms).
    pub linked_since_ms: u64,
    /// When this node last saw it connected (Unix ms); `None` if never.
    pub last_sync_ms: Option<u64>,
    /// How far it is behind: memory versions written here since it was
    /// last seen (all of them if never).
    pub behind: u64,
}

impl From<DeviceListing> for Device {
    fn from(d: DeviceListing) -> Self {
        Device {
            peer_id: d.peer,
            name: Some(d.name).filter(|n| !n.is_empty()),
            linked_since_ms: d.linked_since_ms,
            last_sync_ms: d.last_sync_ms,
            behind: d.behind,
        }
    }
}

/// A friend's link now.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct FriendLink {
    /// The friend's peer id.
    pub peer_id: String,
    /// What this node calls it.
    pub name: Option<String>,
    /// Connected now.
    pub connected: bool,
    /// When a catch-up with it last ended (Unix ms), since the node started.
    pub last_catchup_ms: Option<u64>,
}

impl From<FriendCatchup> for FriendLink {
    fn from(f: FriendCatchup) -> Self {
        FriendLink {
            peer_id: f.peer_id,
            name: f.name,
            connected: f.connected,
            last_catchup_ms: f.last_catchup_ms,
        }
    }
}

/// The node now.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct Status {
    /// This node's peer id.
    pub peer_id: String,
    /// `phone` or `server`.
    pub profile: String,
    /// `running`, `paused` or `shut down`.
    pub state: String,
    /// Addresses it listens on (`<addr>/p2p/<id>`).
    pub listening: Vec<String>,
    /// Every friend's link.
    pub friends: Vec<FriendLink>,
    /// Items it holds.
    pub items_held: u64,
    /// The chat model's name, if one is set.
    pub model: Option<String>,
}

impl Status {
    pub(crate) fn running(s: NodeStatus, listening: Vec<String>, model: Option<String>) -> Self {
        Status {
            peer_id: s.peer_id,
            profile: s.profile,
            state: "running".into(),
            listening,
            friends: s.friends.into_iter().map(FriendLink::from).collect(),
            items_held: s.items_held as u64,
            model,
        }
    }
}

/// What [`crate::PorfiryNode::sync_now`] did.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct SyncReport {
    /// Friends connected at the end.
    pub friends_connected: u32,
    /// Friends whose catch-up ended during the sync.
    pub friends_caught_up: u32,
    /// Friends' notes that arrived during the sync.
    pub notes_received: u32,
    /// Time it took (ms).
    pub elapsed_ms: u64,
    /// Whether the deadline came before every friend had caught up.
    pub deadline_reached: bool,
    /// Whether the core thought once during the wake (one due tick, when
    /// the budget and the battery allowed it).
    pub thought: bool,
}

/// A chat turn's end.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct ChatAnswer {
    /// The whole answer.
    pub text: String,
    /// Tools called, in order.
    pub tools: Vec<String>,
    /// Why the model stopped (`stop`, `length`).
    pub finish_reason: Option<String>,
    /// The turn's tool events, in order, each the JSON the listener's
    /// `on_tool_event` got (`{"kind": "show_text", "text": …}`).
    pub events: Vec<String>,
}

/// A chat session the node keeps.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct ChatSessionInfo {
    /// Its name (what [`crate::PorfiryNode::chat`] was given).
    pub session: String,
    /// Messages kept (user, assistant and tool turns).
    pub messages: u32,
    /// When its oldest kept message was written (Unix ms).
    pub first_ms: u64,
    /// When its newest message was written (Unix ms).
    pub last_ms: u64,
}

impl From<porfiry_storage::ChatSessionRow> for ChatSessionInfo {
    fn from(r: porfiry_storage::ChatSessionRow) -> Self {
        ChatSessionInfo {
            session: r.session,
            messages: u32::try_from(r.messages).unwrap_or(u32::MAX),
            first_ms: r.first_ms,
            last_ms: r.last_ms,
        }
    }
}

/// One message of a chat's transcript, marked by kind.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct ChatEntry {
    /// `user` (the person), `assistant` (an answer), `tool_call` (the
    /// model's `TOOL_CALL` line) or `tool_result` (what the tool answered).
    pub kind: String,
    /// The text as the model saw it.
    pub text: String,
    /// When it was kept (Unix ms).
    pub created_ms: u64,
}

impl From<porfiry_storage::ChatLine> for ChatEntry {
    fn from(l: porfiry_storage::ChatLine) -> Self {
        let kind = match l.role.as_str() {
            "user"
                if l.content
                    .starts_with(porfiry_skills::llm::TOOL_RESULT_PREFIX) =>
            {
                "tool_result"
            }
            "assistant" if l.content.trim_start().starts_with("TOOL_CALL") => "tool_call",
            "assistant" => "assistant",
            "system" => "system",
            _ => "user",
        };
        ChatEntry {
            kind: kind.to_owned(),
            text: l.content,
            created_ms: l.created_ms,
        }
    }
}

/// One tick of the phone's thinking, as the app's listener hears it.
#[derive(Debug, Clone, PartialEq, uniffi::Record)]
pub struct TickView {
    /// The tick's number.
    pub tick: u64,
    /// Commands the reply held.
    pub commands_found: u32,
    /// Commands that ran.
    pub commands_run: u32,
    /// How new the reply was, 0 to 1, when it was evaluated.
    pub novelty: Option<f64>,
    /// Why the tick failed (the model call), if it did.
    pub error: Option<String>,
    /// How long it took (ms).
    pub duration_ms: u64,
}

impl From<&porfiry_skills::cognition::tick::TickReport> for TickView {
    fn from(r: &porfiry_skills::cognition::tick::TickReport) -> Self {
        let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        TickView {
            tick: r.tick,
            commands_found: count(r.commands.len()),
            commands_run: count(r.executed()),
            novelty: r.reflex.as_ref().and_then(|f| f.evaluation.novelty),
            error: r.error.clone(),
            duration_ms: r.duration_ms,
        }
    }
}

/// Whether and why the phone thinks now.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct ThinkingStatus {
    /// The core runs (a model is set and the node is running).
    pub running: bool,
    /// Why no tick may start now: `off`, `no conditions`, `background`,
    /// `battery`, `metered`, `budget`; `None`: it may.
    pub held_by: Option<String>,
    /// When the budget allows the next tick (Unix ms), when that holds it.
    pub next_tick_ms: Option<u64>,
    /// Ticks in the last hour.
    pub ticks_last_hour: u32,
    /// The budget: ticks an hour.
    pub ticks_per_hour: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_is_its_listing_with_an_empty_name_as_none() {
        let listing = DeviceListing {
            peer: "12D3KooWphone".into(),
            name: String::new(),
            linked_since_ms: 1_700_000_000_000,
            last_sync_ms: Some(1_700_000_500_000),
            behind: 7,
        };
        let device = Device::from(listing.clone());
        assert_eq!(
            device,
            Device {
                peer_id: "12D3KooWphone".into(),
                name: None,
                linked_since_ms: 1_700_000_000_000,
                last_sync_ms: Some(1_700_000_500_000),
                behind: 7,
            }
        );
        let named = Device::from(DeviceListing {
            name: "home".into(),
            ..listing
        });
        assert_eq!(named.name.as_deref(), Some("home"));
    }
}

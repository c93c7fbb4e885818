//! What the API serves, as two object-safe traits: [`Agent`] (the chat
//! engine: sessions that answer a message, streaming or not) and [`NodeApi`]
//! (notes, friends, status of the running node). The real implementations
//! are thin adapters over `ChatEngine` and `NodeHandle` ([`super::adapters`]);
//! tests and the bench use in-process fakes.

use std::future::Future;
use std::pin::Pin;

use futures::channel::mpsc;

use super::turn_records::{KeptRecord, RecordChange};
use super::web::signin::KeptSession;
use super::wire::{ToolRecord, WireUsage};
use porfiry_agent::chat::ClientEvent;
use porfiry_skills::{ChatMessage, Language};

/// A boxed, sendable future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One answered turn.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TurnReply {
    /// The answer.
    pub text: String,
    /// `show_text` and action events, in order.
    pub events: Vec<ClientEvent>,
    /// The turn's tool calls, in order, with whether each succeeded.
    pub tools: Vec<ToolRecord>,
    /// Token counts summed over the turn's model calls, when reported.
    pub usage: Option<WireUsage>,
    /// Why the last model call stopped (`stop`, `length`); `stop` when unknown.
    pub finish_reason: Option<String>,
    /// The friend whose model wrote the answer (its peer id), when it came
    /// over the mesh; `None` for the node's own model.
    pub served_by: Option<String>,
    /// The turn's tool turns as the session's history holds them: each
    /// `TOOL_CALL` line and its `TOOL_RESULT`, between the user's message
    /// and the answer.
    pub tool_turns: Vec<ChatMessage>,
}

/// What a turn sends while it runs, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnDelta {
    /// Answer text as the model writes it (never a tool call line).
    Text(String),
    /// A tool's client event (`show_text`, a media action) as it happens.
    Event(ClientEvent),
}

/// Why a turn got no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TurnError {
    /// The message cannot be sent (empty, too long) → 400.
    #[error("{0}")]
    BadInput(String),
    /// The model failed → 502.
    #[error("{0}")]
    Model(String),
    /// No model is configured and no friend offers one → 503.
    #[error("{0}")]
    NoModel(String),
    /// The model is busy with other requests (its queue is full) → 503 with
    /// `Retry-After`.
    #[error("{0}")]
    Busy(String),
}

/// Where the agent's model runs, for `/api/status` (`"model_source"`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ModelSource {
    /// `file` (the embedded engine on this device), `server` (an
    /// OpenAI-compatible URL), `friend` (one friend's model), `registry`
    /// (the `llm_registry` main entry) or `friends` (whichever friend
    /// offers one).
    pub kind: &'static str,
    /// The file name, URL, peer id or entry name; empty for `friends`.
    pub detail: String,
}

/// The chat engine: makes sessions.
pub trait Agent: Send + Sync + 'static {
    /// The upstream model's name, for `/api/status`.
    fn model_name(&self) -> String;
    /// Where the model runs, when the node said so.
    fn model_source(&self) -> Option<ModelSource> {
        None
    }
    /// A fresh session (no history, no active toolsets); `key` names it
    /// to its tools (the caller is the API client `key`).
    fn session(&self, key: &str) -> Box<dyn AgentSession>;
    /// The language of every text the model sees.
    fn language(&self) -> Language;
}

/// One conversation with its tool-loop state.
pub trait AgentSession: Send + 'static {
    /// Replaces the history (rebuilt from the client's turns), keeping
    /// toolset activation.
    fn replace_history(&mut self, messages: Vec<ChatMessage>);
    /// Caps each model reply of the next turn at `max_tokens` too (the
    /// client's budget; `None`: the node's alone).
    fn limit_replies(&mut self, max_tokens: Option<u32>);
    /// Answers `text`. With `deltas`, the final answer's text is sent there
    /// as the model produces it (never a tool call line) and each tool's
    /// client events as they happen; the reply still carries the whole
    /// answer and every event.
    fn send<'a>(
        &'a mut self,
        text: &'a str,
        deltas: Option<mpsc::Sender<TurnDelta>>,
    ) -> BoxFuture<'a, Result<TurnReply, TurnError>>;
    /// Toolsets active now, in name order (for tests and status).
    fn active_toolsets(&self) -> Vec<String>;
    /// The user's message of the last turn and the tool turns it ran after
    /// it (`TOOL_CALL` lines and their results). Asked only of a session
    /// whose last turn did not finish (the model failed, the client hung
    /// up), so the results it worked from outlive the failure (seed 000:
    /// the history is never cleaned). `None` when there is no such message.
    fn unfinished_turn(&self) -> Option<(String, Vec<ChatMessage>)>;
    /// The whole history now (user, assistant and tool turns, oldest
    /// first), for a caller that keeps it.
    fn history(&self) -> Vec<ChatMessage>;
}

/// Why a node call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NodeApiError {
    /// Bad input (bad peer id, empty note, bad audience) → 400.
    #[error("{0}")]
    BadInput(String),
    /// Unknown thing (friend) → 404.
    #[error("{0}")]
    NotFound(String),
    /// The node failed → 500.
    #[error("{0}")]
    Internal(String),
    /// The disk holding the data dir is full → 507 (the message names the
    /// dir and the free space; nothing was written).
    #[error("{0}")]
    DiskFull(String),
}

/// A JSON answer of the node.
pub type NodeResult<T = serde_json::Value> = Result<T, NodeApiError>;

/// What adding or changing a friend sets; each `None` keeps what an
/// existing friend has (a new one starts without a name or permission).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FriendSettings {
    /// What this node calls it (local, never sent).
    pub name: Option<String>,
    /// May it offload requests onto this node's model.
    pub allow_offload: Option<bool>,
    /// May it pull this node's model files (`porfiry run --share-models`).
    pub allow_models: Option<bool>,
}

impl FriendSettings {
    /// `Ok` when nothing is set; else the refusal of a node that keeps no
    /// names or permissions, naming the first field set.
    pub fn none_set(&self) -> NodeResult<()> {
        let set = [
            ("name", self.name.is_some()),
            ("allow_offload", self.allow_offload.is_some()),
            ("allow_models", self.allow_models.is_some()),
        ];
        match set.iter().find(|(_, is_set)| *is_set) {
            None => Ok(()),
            Some((field, _)) => Err(NodeApiError::BadInput(format!(
                "{field} is not supported by this node"
            ))),
        }
    }
}

/// The running node, as the API uses it. Answers are JSON as the node's
/// view types serialize.
pub trait NodeApi: Send + Sync + 'static {
    /// Notes as `query` asks, oldest first, each with the note it answers
    /// (`reply_to`, `reply_to_note`) when it is a reply.
    fn notes(&self, query: NotesRequest) -> BoxFuture<'_, NodeResult>;
    /// Publishes a note to its audience (`public`, `friends`, `group:NAME`,
    /// `peer:PEER_ID`, `club:…`, `private`), as a reply when `reply_to` is set.
    fn post_note(&self, note: NoteRequest) -> BoxFuture<'_, NodeResult>;
    /// The friends.
    fn friends(&self) -> BoxFuture<'_, NodeResult>;
    /// Adds (or updates) a friend, setting its local name and permissions
    /// as `settings` says (`None` keeps an existing friend's; a new one
    /// starts without). An implementation without names or permissions
    /// refuses a `Some` rather than ignore it ([`FriendSettings::none_set`]).
    fn add_friend(
        &self,
        peer: String,
        addresses: Vec<String>,
        groups: Vec<String>,
        settings: FriendSettings,
    ) -> BoxFuture<'_, NodeResult>;
    /// Removes a friend (by peer id, or by name where the node has names).
    fn remove_friend(&self, peer: String) -> BoxFuture<'_, NodeResult<()>>;
    /// Peer id, profile, friends connected, items per kind, last catch-ups.
    fn status(&self) -> BoxFuture<'_, NodeResult>;
    /// A counter that moves whenever the node's database changes (a note
    /// arrived or was posted, a friend came or went); the family page's
    /// event stream waits on it. `None`: the node cannot tell.
    fn changes(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        None
    }
    /// Renames a friend and/or sets its offload and models permissions as
    /// `settings` says (`None` keeps what it has); answers the friend as
    /// listed.
    fn update_friend(&self, peer: String, settings: FriendSettings) -> BoxFuture<'_, NodeResult> {
        let _ = (peer, settings);
        Box::pin(async { Err(unsupported("changing a friend")) })
    }
    /// Makes a one-time invitation code for a new friend called `name`
    /// here (empty: no name), valid for `valid_for`.
    fn invite(
        &self,
        name: String,
        groups: Vec<String>,
        valid_for: std::time::Duration,
    ) -> BoxFuture<'_, NodeResult<String>> {
        let _ = (name, groups, valid_for);
        Box::pin(async { Err(unsupported("invitations")) })
    }
    /// The clubs this node knows, with its role in each (`club` is the
    /// `NAME@FOUNDER` a note's `club:` audience takes).
    fn clubs(&self) -> BoxFuture<'_, NodeResult> {
        Box::pin(async { Err(unsupported("clubs")) })
    }
    /// What the cognitive core is doing, read from the database it writes:
    /// `{"paused", "goals": [...], "tasks": [...], "ticks": [...], "diary": [...]}`,
    /// each the newest few rows as stored (their fields, `id`, `created_ms`).
    fn mind(&self) -> BoxFuture<'_, NodeResult> {
        Box::pin(async { Err(unsupported("the mind view")) })
    }
    /// Pauses (`true`) or resumes the cognitive core's thinking at
    /// `now_ms`; kept in the database, so it holds across restarts.
    fn set_thinking_paused(&self, paused: bool, now_ms: u64) -> BoxFuture<'_, NodeResult<()>> {
        let _ = (paused, now_ms);
        Box::pin(async { Err(unsupported("pausing thinking")) })
    }
    /// The family page's browser sessions as last kept by
    /// [`NodeApi::save_page_sessions`] (empty when none were, or when the
    /// node has nowhere to keep them).
    fn page_sessions(&self) -> BoxFuture<'_, NodeResult<Vec<KeptSession>>> {
        Box::pin(async { Ok(Vec::new()) })
    }
    /// Keeps the page's browser sessions (hashed ids and expiries, never
    /// a cookie's value) so they outlive a restart, replacing what was
    /// kept. A node with nowhere to keep them does nothing.
    fn save_page_sessions(
        &self,
        sessions: Vec<KeptSession>,
        now_ms: u64,
    ) -> BoxFuture<'_, NodeResult<()>> {
        let _ = (sessions, now_ms);
        Box::pin(async { Ok(()) })
    }
    /// The turn records kept by [`NodeApi::keep_turn_record`], oldest
    /// first (empty when the node has nowhere to keep them).
    fn turn_records(&self) -> BoxFuture<'_, NodeResult<Vec<KeptRecord>>> {
        Box::pin(async { Ok(Vec::new()) })
    }
    /// Keeps a change of the API's turn records, so a restart rebuilds
    /// clients' histories with their tool turns; the node applies the
    /// same bounds ([`crate::limits::MAX_TURN_RECORDS`],
    /// [`crate::limits::MAX_TURN_RECORD_BYTES`]). A node with nowhere to
    /// keep them does nothing.
    fn keep_turn_record(&self, change: RecordChange) -> BoxFuture<'_, NodeResult<()>> {
        let _ = change;
        Box::pin(async { Ok(()) })
    }
    /// Presents another node's invitation code; once admitted, answers the
    /// inviter as a friend (named `name` here, if given).
    fn join(&self, code: String, name: Option<String>) -> BoxFuture<'_, NodeResult> {
        let _ = (code, name);
        Box::pin(async { Err(unsupported("invitations")) })
    }
    /// This person's other devices, as `porfiry devices list --json`.
    fn devices(&self) -> BoxFuture<'_, NodeResult> {
        Box::pin(async { Err(unsupported("devices")) })
    }
    /// Makes a one-time code that links another node of this person,
    /// valid for `valid_for`.
    fn link_device(&self, valid_for: std::time::Duration) -> BoxFuture<'_, NodeResult<String>> {
        let _ = valid_for;
        Box::pin(async { Err(unsupported("devices")) })
    }
    /// Presents another device's code; once linked, answers that device.
    fn join_device(&self, code: String) -> BoxFuture<'_, NodeResult> {
        let _ = code;
        Box::pin(async { Err(unsupported("devices")) })
    }
    /// Ends the link with the device `peer` (a peer id or a friend's name).
    fn unlink_device(&self, peer: String) -> BoxFuture<'_, NodeResult<()>> {
        let _ = peer;
        Box::pin(async { Err(unsupported("devices")) })
    }
    /// Makes the node's encrypted backup, as `porfiry backup` does, sealed
    /// with `passphrase` (already checked); off the async runtime.
    fn backup(&self, passphrase: String) -> BoxFuture<'_, NodeResult<BackupDownload>> {
        let _ = passphrase;
        Box::pin(async { Err(unsupported("making backups")) })
    }
}

/// A backup made for download: an unnamed temporary file, read from its
/// start (its space is freed when it is closed).
#[derive(Debug)]
pub struct BackupDownload {
    /// The sealed backup.
    pub file: std::fs::File,
    /// Its length in bytes.
    pub bytes: u64,
    /// The node's peer id.
    pub peer_id: String,
    /// When it was made (Unix ms).
    pub made_ms: u64,
}

/// What `GET /api/notes` asks for, its syntax checked by the route.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NotesRequest {
    /// `own`, `friends` or `all` (`None`: all).
    pub origin: Option<String>,
    /// Only notes for this audience (`friends`, `public`, `private`,
    /// `group:NAME`, `club:NAME[@FOUNDER]`, `peer:PEER`); `None`: any.
    pub audience: Option<String>,
    /// At most this many.
    pub limit: usize,
    /// The newest `limit` notes rather than the oldest (listed oldest first either way).
    pub newest: bool,
}

/// A note to post, checked by the route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteRequest {
    /// The text.
    pub text: String,
    /// Who receives it, as `notes post --audience` takes it.
    pub audience: String,
    /// The item id of the note it answers, if it is a reply.
    pub reply_to: Option<porfiry_protocol::ItemId>,
}

fn unsupported(what: &str) -> NodeApiError {
    NodeApiError::BadInput(format!("{what} is not supported by this node"))
}

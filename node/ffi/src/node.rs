//! [`PorfiryNode`]: the object an app holds. Its lifecycle is a small
//! state machine — running, paused, shut down — and each running spell has
//! its own tokio runtime, made at start and resume and shut down at pause
//! and shutdown, so a paused node owns no thread at all: nothing of it
//! wakes until [`PorfiryNode::resume`]. Several nodes live in one process
//! (distinct data dirs); a data dir's node can be started again after
//! [`PorfiryNode::shutdown`] (its lock is released when that returns).
//!
//! Lifecycle calls block for the short time starting or stopping takes
//! (call them off the UI thread); the rest are async.

use std::sync::{Arc, Mutex, PoisonError};

use porfiry_mesh::invite::InvitationRequest;
use porfiry_mesh::node::{NodeHandle, NotePost, NotesQuery, Origin};
use porfiry_storage::Note as NoteRow;
use tokio::runtime::Runtime;

use crate::app_tools::{AppToolset, MAX_APP_TOOLSETS, ToolsetHandler, ToolsetSpec};
use crate::chat::{Chats, TaskHandle};
use crate::error::PorfiryError;
use crate::listeners::{ChatListener, NodeListener};
use crate::running::Running;
use crate::settings::ModelSource;
use crate::settings::{Checked, NodeSettings};
use crate::think_policy::{Hold, PhoneConditions, ThinkPolicy};
use crate::thinking::ThinkShared;
use crate::views::{ChatEntry, ChatSessionInfo, Friend, Note, Status, SyncReport, ThinkingStatus};

/// Worker threads of a node's runtime: the mesh and database have threads
/// of their own; this one runs chat turns, event forwarding and the async
/// calls, which a phone needs one core for at most.
pub const RUNTIME_WORKERS: usize = 1;

/// The longest an invitation may be valid: as `porfiry invite --valid-for`.
pub const MAX_INVITATION_SECS: u64 = 30 * 24 * 3600;

pub(crate) enum State {
    Running { runtime: Runtime, parts: Running },
    Paused,
    ShutDown,
}

/// A Porfiry node inside an app.
#[derive(uniffi::Object)]
pub struct PorfiryNode {
    settings: Checked,
    peer_id: String,
    pub(crate) state: Mutex<State>,
    listener: Mutex<Option<Arc<dyn NodeListener>>>,
    /// The app's own toolsets, kept across pause and resume.
    app_sets: Mutex<Vec<AppToolset>>,
    /// The thinking rules and their count, kept across pause and resume.
    think: ThinkShared,
}

impl std::fmt::Debug for PorfiryNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PorfiryNode")
            .field("peer_id", &self.peer_id)
            .finish_non_exhaustive()
    }
}

/// Starts the parts of `settings` on a fresh runtime.
pub(crate) fn start_parts(
    settings: &Checked,
    listener: Option<Arc<dyn NodeListener>>,
    app_sets: &[AppToolset],
    think: &ThinkShared,
) -> Result<(Runtime, Running), PorfiryError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(RUNTIME_WORKERS)
        .thread_name("porfiry-ffi")
        .enable_all()
        .build()
        .map_err(|e| PorfiryError::Start(format!("cannot start the node's runtime: {e}")))?;
    let mut parts = {
        let _entered = runtime.enter();
        Running::start(settings, app_sets, think)?
    };
    if let Some(listener) = listener {
        parts.forwarders = crate::sync::forward_events(runtime.handle(), &parts, listener);
    }
    Ok((runtime, parts))
}

/// Stops `parts`, then the runtime (its threads end soon after).
pub(crate) async fn stop_parts(runtime: Runtime, parts: Running) -> Result<(), PorfiryError> {
    let stopped = runtime.spawn(parts.stop()).await;
    runtime.shutdown_background();
    stopped.map_err(|e| PorfiryError::Internal(format!("stopping the node: {e}")))?
}

impl PorfiryNode {
    fn running<T>(&self, f: impl FnOnce(&Runtime, &Running) -> T) -> Result<T, PorfiryError> {
        match &*self.state.lock().unwrap_or_else(PoisonError::into_inner) {
            State::Running { runtime, parts } => Ok(f(runtime, parts)),
            State::Paused => Err(PorfiryError::NotRunning(
                "the node is paused; call resume() first".into(),
            )),
            State::ShutDown => Err(PorfiryError::NotRunning(
                "the node is shut down; start a new one".into(),
            )),
        }
    }

    /// Runs `f` with the node's handle on the node's runtime.
    pub(crate) async fn on_node<T, F, Fut>(&self, f: F) -> Result<T, PorfiryError>
    where
        F: FnOnce(NodeHandle) -> Fut,
        Fut: std::future::Future<Output = Result<T, PorfiryError>> + Send + 'static,
        T: Send + 'static,
    {
        let task = self.running(|runtime, parts| runtime.spawn(f(parts.node.clone())))?;
        task.await
            .map_err(|e| PorfiryError::Internal(format!("the call was dropped: {e}")))?
    }

    /// The thinking rules and their count.
    pub(crate) fn think(&self) -> &ThinkShared {
        &self.think
    }

    pub(crate) fn listener(&self) -> Option<Arc<dyn NodeListener>> {
        self.listener
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

#[uniffi::export(async_runtime = "tokio")]
impl PorfiryNode {
    /// Starts a node on `settings.data_dir` (created when missing). A bad
    /// setting is [`PorfiryError::Config`] and creates nothing; a data dir
    /// another node holds is [`PorfiryError::Start`].
    #[uniffi::constructor]
    pub fn start(settings: NodeSettings) -> Result<Arc<PorfiryNode>, PorfiryError> {
        crate::logging::init_from_env();
        let checked = settings.check()?;
        let network_model = !matches!(checked.model, Some(ModelSource::File { .. }) | None);
        let think = ThinkShared::new(ThinkPolicy::new(
            checked.think_ticks_per_hour,
            network_model,
        ));
        let (runtime, parts) = start_parts(&checked, None, &[], &think)?;
        let peer_id = parts.node.peer_id().to_owned();
        Ok(Arc::new(PorfiryNode {
            settings: checked,
            peer_id,
            state: Mutex::new(State::Running { runtime, parts }),
            listener: Mutex::new(None),
            app_sets: Mutex::new(Vec::new()),
            think,
        }))
    }

    /// This node's peer id (what friends add).
    pub fn peer_id(&self) -> String {
        self.peer_id.clone()
    }

    /// Sets the listener that hears new notes and link changes (replacing
    /// any earlier one); kept across pause and resume.
    pub fn set_listener(&self, listener: Arc<dyn NodeListener>) {
        *self.listener.lock().unwrap_or_else(PoisonError::into_inner) = Some(Arc::clone(&listener));
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if let State::Running { runtime, parts } = &mut *state {
            for f in parts.forwarders.drain(..) {
                f.abort();
            }
            parts.forwarders = crate::sync::forward_events(runtime.handle(), parts, listener);
        }
    }

    /// The node now; a paused or shut-down node says so and lists no links.
    pub async fn status(&self) -> Result<Status, PorfiryError> {
        let model = self
            .running(|_, parts| parts.chats.as_ref().map(|c| c.model_name()))
            .ok()
            .flatten();
        let state = match &*self.state.lock().unwrap_or_else(PoisonError::into_inner) {
            State::Running { .. } => None,
            State::Paused => Some("paused"),
            State::ShutDown => Some("shut down"),
        };
        if let Some(state) = state {
            return Ok(Status {
                peer_id: self.peer_id.clone(),
                profile: self.settings.profile.to_string(),
                state: state.into(),
                listening: Vec::new(),
                friends: Vec::new(),
                items_held: 0,
                model: None,
            });
        }
        self.on_node(move |node| async move {
            let listening = node.listening().borrow().clone();
            Ok(Status::running(node.status().await?, listening, model))
        })
        .await
    }

    /// Posts a note to `audience`: `private`, `friends`, `public`,
    /// `group:NAME`, `peer:ID`, a friend's name, `club:NAME`.
    pub async fn post_note(&self, text: String, audience: String) -> Result<Note, PorfiryError> {
        self.on_node(move |node| async move {
            let audience = node.resolve_audience(&audience).await?;
            let posted = node
                .post_note(NotePost {
                    text,
                    audience,
                    reply_to: None,
                })
                .await?;
            note_by_id(&node, posted.id).await
        })
        .await
    }

    /// Notes, oldest first: `origin` `own`, `friends` or `all` (`None`:
    /// all), at most `limit` (`None`: every one).
    pub async fn notes(
        &self,
        origin: Option<String>,
        limit: Option<u32>,
    ) -> Result<Vec<Note>, PorfiryError> {
        let origin = match origin.as_deref() {
            None | Some("all") => None,
            Some("own") => Some(Origin::Own),
            Some("friends") => Some(Origin::Friends),
            Some(other) => {
                return Err(PorfiryError::BadInput(format!(
                    "origin {other:?}: use own, friends or all"
                )));
            }
        };
        let query = NotesQuery {
            origin,
            limit: limit.map(|l| l as usize),
            newest: false,
        };
        self.on_node(move |node| async move {
            Ok(node
                .notes(query)
                .await?
                .into_iter()
                .map(Note::from)
                .collect())
        })
        .await
    }

    /// The friends.
    pub async fn friends(&self) -> Result<Vec<Friend>, PorfiryError> {
        self.on_node(|node| async move {
            Ok(node
                .friends()
                .await?
                .into_iter()
                .map(Friend::from)
                .collect())
        })
        .await
    }

    /// Adds (or updates) a friend by peer id, with addresses to dial it at
    /// and a name (`None` keeps an existing friend's).
    pub async fn add_friend(
        &self,
        peer_id: String,
        addresses: Vec<String>,
        name: Option<String>,
    ) -> Result<Friend, PorfiryError> {
        self.on_node(move |node| async move {
            Ok(node
                .add_named_friend(&peer_id, addresses, Vec::new(), name, None)
                .await?
                .into())
        })
        .await
    }

    /// Renames a friend (by peer id or its current name).
    pub async fn rename_friend(
        &self,
        friend: String,
        name: String,
    ) -> Result<Friend, PorfiryError> {
        self.on_node(
            move |node| async move { Ok(node.rename_friend(&friend, &name).await?.into()) },
        )
        .await
    }

    /// Removes a friend (by peer id or name); its links close.
    pub async fn remove_friend(&self, friend: String) -> Result<(), PorfiryError> {
        self.on_node(move |node| async move { Ok(node.remove_friend(&friend).await?) })
            .await
    }

    /// Makes a one-time invitation valid for `valid_secs` and returns its
    /// code; whoever presents it in time becomes a friend named `name`.
    /// The code carries the addresses this node listens on now, so a phone
    /// (which never listens) cannot invite: its friends invite it.
    pub async fn invite(
        &self,
        name: Option<String>,
        valid_secs: u64,
    ) -> Result<String, PorfiryError> {
        if valid_secs == 0 || valid_secs > MAX_INVITATION_SECS {
            return Err(PorfiryError::BadInput(format!(
                "an invitation is valid for 1 s to {MAX_INVITATION_SECS} s, not {valid_secs}"
            )));
        }
        let request = InvitationRequest {
            name: name.unwrap_or_default(),
            valid_for: std::time::Duration::from_secs(valid_secs),
            ..Default::default()
        };
        self.on_node(move |node| async move {
            node.invite(request)
                .await
                .map_err(|e| PorfiryError::Invitation(e.to_string()))
        })
        .await
    }

    /// Presents an invitation code; once the inviter admits this node it
    /// is a friend here (named `name`, if given) and the two replicate.
    /// What is not a code is [`PorfiryError::BadInput`]; a refused code (a
    /// device code among them) is [`PorfiryError::Invitation`], naming why.
    pub async fn join(&self, code: String, name: Option<String>) -> Result<Friend, PorfiryError> {
        self.on_node(move |node| async move {
            node.join(code.trim(), name)
                .await
                .map(Friend::from)
                .map_err(crate::error::invitation_error)
        })
        .await
    }

    /// Sends `text` in chat `session` (sessions keep their history); the
    /// answer streams to `listener`. A node without a model answers
    /// [`PorfiryError::Model`] through the listener.
    pub fn chat(
        &self,
        session: String,
        text: String,
        listener: Arc<dyn ChatListener>,
    ) -> Result<Arc<TaskHandle>, PorfiryError> {
        let (handle, chats) =
            self.running(|runtime, parts| (runtime.handle().clone(), parts.chats.clone()))?;
        let Some(chats) = chats else {
            return Err(PorfiryError::Model(
                "no model is set: start the node with a model (a GGUF file, a URL or a friend)"
                    .into(),
            ));
        };
        Ok(Chats::start(&chats, &handle, &session, text, listener))
    }

    /// Adds the app's own toolset to the chat (call it after `start`,
    /// before chatting: sessions held in memory start afresh, their
    /// histories kept). It enters the registry like a built-in set — its
    /// catalogue line, activation per session, the reply grammar, argument
    /// checks before `handler` runs — and stays across pause and resume.
    /// A bad spec, a name taken, or more than
    /// [`crate::app_tools::MAX_APP_TOOLSETS`] sets is [`PorfiryError::BadInput`].
    pub fn register_toolset(
        &self,
        spec: ToolsetSpec,
        handler: Arc<dyn ToolsetHandler>,
    ) -> Result<(), PorfiryError> {
        let set = AppToolset::new(&spec, handler)?;
        let mut app_sets = self.app_sets.lock().unwrap_or_else(PoisonError::into_inner);
        if app_sets.iter().any(|s| s.set_name() == set.set_name()) {
            return Err(PorfiryError::BadInput(format!(
                "toolset {} is already registered",
                spec.name
            )));
        }
        if app_sets.len() >= MAX_APP_TOOLSETS {
            return Err(PorfiryError::BadInput(format!(
                "an app may register at most {MAX_APP_TOOLSETS} toolsets"
            )));
        }
        app_sets.push(set);
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if let State::Running { runtime, parts } = &mut *state {
            let _entered = runtime.enter();
            if let Err(e) = parts.rebuild_chats(&self.settings, &app_sets) {
                app_sets.pop();
                return Err(e);
            }
        }
        Ok(())
    }

    /// What the phone is like now, for thinking: on screen, plugged in,
    /// battery level (0–100), metered connection. The core ticks only
    /// once this was said, and only while it allows: plugged in, or on
    /// screen with at least 30 % battery; not metered when the model is
    /// across the network; within `think_ticks_per_hour`. Call it whenever
    /// one of them changes; it holds across pause and resume.
    pub fn set_conditions(
        &self,
        foreground: bool,
        charging: bool,
        battery_percent: u8,
        metered: bool,
    ) -> Result<(), PorfiryError> {
        if battery_percent > 100 {
            return Err(PorfiryError::BadInput(format!(
                "battery_percent {battery_percent}: 0 to 100"
            )));
        }
        self.think.policy().set_conditions(PhoneConditions {
            foreground,
            charging,
            battery_percent,
            metered,
        });
        self.think.changed.send_replace(());
        Ok(())
    }

    /// Whether the phone thinks now, and if not, why.
    pub fn thinking_status(&self) -> ThinkingStatus {
        let running = self.running(|_, parts| parts.thinks()).unwrap_or(false);
        let now = crate::chat_store::now_ms();
        let policy = self.think.policy();
        let hold = policy.hold(now);
        ThinkingStatus {
            running,
            held_by: hold.map(|h| h.word().to_owned()),
            next_tick_ms: match hold {
                Some(Hold::Budget { until_ms }) => Some(until_ms),
                _ => None,
            },
            ticks_last_hour: policy.ticks_in_hour(now),
            ticks_per_hour: policy.per_hour(),
        }
    }

    /// The chat sessions the node keeps, the most recently used first
    /// (their histories outlive a pause and the app being killed).
    pub async fn chat_sessions(&self) -> Result<Vec<ChatSessionInfo>, PorfiryError> {
        self.on_node(|node| async move {
            let rows = node
                .db()
                .read(|s| s.chat_sessions())
                .await
                .map_err(|e| PorfiryError::Internal(e.to_string()))?
                .map_err(|e| PorfiryError::Internal(e.to_string()))?;
            Ok(rows.into_iter().map(ChatSessionInfo::from).collect())
        })
        .await
    }

    /// The transcript of chat `session`, oldest first: its newest `limit`
    /// messages (`None`: all), each marked user, assistant, tool call or
    /// tool result. An unknown session has none.
    pub async fn chat_history(
        &self,
        session: String,
        limit: Option<u32>,
    ) -> Result<Vec<ChatEntry>, PorfiryError> {
        self.on_node(move |node| async move {
            let lines = node
                .db()
                .read(move |s| s.chat_messages(&session, limit.map(|l| l as usize)))
                .await
                .map_err(|e| PorfiryError::Internal(e.to_string()))?
                .map_err(|e| PorfiryError::Internal(e.to_string()))?;
            Ok(lines.into_iter().map(ChatEntry::from).collect())
        })
        .await
    }

    /// Deletes chat `session` at the person's request: its history in the
    /// database and the session in memory (a turn it is running finishes
    /// but keeps nothing). Returns the messages deleted.
    pub async fn forget_session(&self, session: String) -> Result<u64, PorfiryError> {
        let chats = self.running(|_, parts| parts.chats.clone())?;
        match chats {
            Some(chats) => {
                let runtime = self.running(|runtime, _| runtime.handle().clone())?;
                runtime
                    .spawn(async move { chats.forget(&session).await })
                    .await
                    .map_err(|e| PorfiryError::Internal(format!("the call was dropped: {e}")))?
            }
            None => {
                self.on_node(move |node| async move {
                    node.db()
                        .write(move |s| s.forget_chat_session(&session))
                        .await
                        .map_err(|e| PorfiryError::Internal(e.to_string()))?
                        .map_err(|e| PorfiryError::Internal(e.to_string()))
                })
                .await
            }
        }
    }

    /// The app goes to the background: every link closes, everything is
    /// written and the database closed, and the node's threads end; nothing
    /// wakes until [`PorfiryNode::resume`]. Pausing a paused node is fine.
    pub fn pause(&self) -> Result<(), PorfiryError> {
        self.stop_to(State::Paused)
    }

    /// Starts a paused node again: links come back and it catches up.
    pub fn resume(&self) -> Result<(), PorfiryError> {
        self.start_if_paused().map(|_| ())
    }

    /// Stops the node for good (its data dir can be started again).
    pub fn shutdown(&self) -> Result<(), PorfiryError> {
        self.stop_to(State::ShutDown)
    }

    /// What a push notification's wake does: connect to friends, catch up
    /// and publish what waits, and return within `deadline_ms` with counts.
    /// A paused node is resumed for it and paused again after.
    pub async fn sync_now(&self, deadline_ms: u64) -> Result<SyncReport, PorfiryError> {
        crate::sync::sync_now(self, deadline_ms).await
    }
}

impl PorfiryNode {
    /// Starts the node if it is paused; says whether it was. A running node
    /// is left as it is; a shut-down one is an error.
    pub(crate) fn start_if_paused(&self) -> Result<bool, PorfiryError> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        match &*state {
            State::Running { .. } => Ok(false),
            State::ShutDown => Err(PorfiryError::NotRunning(
                "the node is shut down; start a new one".into(),
            )),
            State::Paused => {
                let app_sets = self.app_sets.lock().unwrap_or_else(PoisonError::into_inner);
                let (runtime, parts) =
                    start_parts(&self.settings, self.listener(), &app_sets, &self.think)?;
                *state = State::Running { runtime, parts };
                Ok(true)
            }
        }
    }

    fn stop_to(&self, next: State) -> Result<(), PorfiryError> {
        let previous = {
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            let was_shut = matches!(*state, State::ShutDown);
            let previous = std::mem::replace(&mut *state, next);
            if was_shut {
                // Shut down stays shut down.
                *state = State::ShutDown;
            }
            previous
        };
        match previous {
            State::Running { runtime, parts } => {
                futures::executor::block_on(stop_parts(runtime, parts))
            }
            State::Paused | State::ShutDown => Ok(()),
        }
    }
}

/// Note `id` as the bindings show it.
pub(crate) async fn note_by_id(node: &NodeHandle, id: i64) -> Result<Note, PorfiryError> {
    let stored = node
        .db()
        .read(move |s| s.get::<NoteRow>(id))
        .await
        .map_err(|e| PorfiryError::Internal(e.to_string()))?
        .map_err(|e| PorfiryError::Internal(e.to_string()))?;
    Ok(Note::from(porfiry_mesh::node::NoteView::from(stored)))
}

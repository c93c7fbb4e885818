//! The API's shared state: the node, the agent (when a model is
//! configured), the token, the sessions with the turn records and the
//! conversations of clients that name no session, the family page's
//! sign-ins and language, the clock, the backups under way, and the few
//! settings tests change (the keep-alive interval).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use super::backend::{Agent, NodeApi, NodeApiError};
use super::conversations::Conversations;
use super::limits::{KEEPALIVE_INTERVAL, MAX_BACKUPS_AT_ONCE, MAX_SESSIONS, SESSION_IDLE_TTL};
use super::sessions::{SessionStore, Shared};
use super::token::ApiToken;
use super::turn::SessionSlot;
use super::turn_records::{RecordChange, TurnRecords};
use super::web::signin::SignIns;
use porfiry_agent::chat::Clock;
use porfiry_skills::Language;

/// Everything the handlers share; cheap to clone.
#[derive(Clone)]
pub struct ApiState {
    inner: Arc<Inner>,
}

struct Inner {
    node: Arc<dyn NodeApi>,
    agent: Option<Arc<dyn Agent>>,
    token: ApiToken,
    sessions: Mutex<SessionStore<SessionSlot>>,
    records: Mutex<TurnRecords>,
    conversations: Mutex<Conversations>,
    clock: Arc<dyn Clock>,
    keepalive: Duration,
    started_ms: u64,
    next_id: AtomicU64,
    signins: Mutex<SignIns>,
    language: Language,
    /// Permits for backups under way ([`MAX_BACKUPS_AT_ONCE`]).
    backups: tokio::sync::Semaphore,
}

impl ApiState {
    /// State over `node` and, when a model is configured, `agent`.
    pub fn new(
        node: Arc<dyn NodeApi>,
        agent: Option<Arc<dyn Agent>>,
        token: ApiToken,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self::with_keepalive(node, agent, token, clock, KEEPALIVE_INTERVAL)
    }

    /// [`ApiState::new`] with another keep-alive interval.
    pub fn with_keepalive(
        node: Arc<dyn NodeApi>,
        agent: Option<Arc<dyn Agent>>,
        token: ApiToken,
        clock: Arc<dyn Clock>,
        keepalive: Duration,
    ) -> Self {
        let started_ms = clock.now().unix_ms();
        let language = agent.as_ref().map(|a| a.language()).unwrap_or_default();
        Self {
            inner: Arc::new(Inner {
                node,
                agent,
                token,
                sessions: Mutex::new(SessionStore::new(SESSION_IDLE_TTL, MAX_SESSIONS)),
                records: Mutex::new(TurnRecords::new()),
                conversations: Mutex::new(Conversations::new()),
                clock,
                keepalive,
                started_ms,
                next_id: AtomicU64::new(1),
                signins: Mutex::new(SignIns::new()),
                language,
                backups: tokio::sync::Semaphore::new(MAX_BACKUPS_AT_ONCE),
            }),
        }
    }

    /// This state with the family page in `language` (default: the agent's,
    /// else English). Call it before the state is cloned (it is a no-op after).
    pub fn with_page_language(mut self, language: Language) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.language = language;
        }
        self
    }

    /// The family page's language.
    pub fn language(&self) -> Language {
        self.inner.language
    }

    /// The page's login codes and browser sessions (held briefly, never
    /// across an await).
    pub fn signins(&self) -> std::sync::MutexGuard<'_, SignIns> {
        self.inner
            .signins
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// A new one-time login code for the family page.
    pub fn issue_login_code(&self) -> Result<String, getrandom::Error> {
        let now = self.now_ms();
        self.signins().issue_code(now)
    }

    /// Takes back the page's browser sessions the node kept before a
    /// restart (a signed-in browser stays signed in for its 30 days);
    /// returns how many are open. Call it once, before serving.
    pub async fn restore_page_sessions(&self) -> Result<usize, NodeApiError> {
        let kept = self.node().page_sessions().await?;
        let now = self.now_ms();
        Ok(self.signins().restore(kept, now))
    }

    /// Takes back the turn records the node kept before a restart; returns
    /// how many. Call it once, before serving.
    pub async fn restore_turn_records(&self) -> Result<usize, NodeApiError> {
        let kept = self.node().turn_records().await?;
        let n = kept.len();
        let mut records = self.records();
        for (key, turns) in kept {
            records.restore(key, turns);
        }
        Ok(n)
    }

    /// Keeps a change of the turn records in the node. A failure is logged:
    /// the record is held until a restart.
    pub async fn keep_turn_record(&self, change: RecordChange) {
        if let Err(e) = self.node().keep_turn_record(change).await {
            tracing::warn!(error = %e, "a turn record was not kept: a restart loses its tool turns");
        }
    }

    /// Keeps the page's open sessions (hashes only) in the node, for a
    /// restart. A failure is logged: the browser is signed in until then.
    pub async fn keep_page_sessions(&self) {
        let now = self.now_ms();
        let kept = self.signins().kept(now);
        if let Err(e) = self.node().save_page_sessions(kept, now).await {
            tracing::warn!(error = %e, "family page sessions not kept: a restart signs browsers out");
        }
    }

    /// A permit to make a backup while it is held; `None` while
    /// [`MAX_BACKUPS_AT_ONCE`] are being made.
    pub fn backup_permit(&self) -> Option<tokio::sync::SemaphorePermit<'_>> {
        self.inner.backups.try_acquire().ok()
    }

    /// The node.
    pub fn node(&self) -> &dyn NodeApi {
        self.inner.node.as_ref()
    }

    /// The agent, when a model is configured.
    pub fn agent(&self) -> Option<&Arc<dyn Agent>> {
        self.inner.agent.as_ref()
    }

    /// The bearer token.
    pub fn token(&self) -> &ApiToken {
        &self.inner.token
    }

    /// The keep-alive interval of streams.
    pub fn keepalive(&self) -> Duration {
        self.inner.keepalive
    }

    /// Now, in unix milliseconds, from the injected clock.
    pub fn now_ms(&self) -> u64 {
        self.inner.clock.now().unix_ms()
    }

    /// When the API started, in unix seconds (the model's `created`).
    pub fn started_secs(&self) -> u64 {
        self.inner.started_ms / 1_000
    }

    /// A new completion id, unique in this process's life.
    pub fn completion_id(&self) -> String {
        let n = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        format!("chatcmpl-{:x}-{n}", self.inner.started_ms)
    }

    /// The session under `key`, made from `agent` if there is none.
    pub fn session(&self, key: &str, agent: &dyn Agent) -> Shared<SessionSlot> {
        let now = self.now_ms();
        let mut store = self
            .inner
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let (slot, made) = store.get_or_insert_with(key, now, || {
            SessionSlot::new(agent.session(key), agent.language())
        });
        if made {
            tracing::debug!(session = %key, held = store.len(), "new API session");
        }
        slot
    }

    /// The turn records (held only for a sync or an insert, never across an await).
    pub fn records(&self) -> std::sync::MutexGuard<'_, TurnRecords> {
        self.inner
            .records
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The conversations of clients that name no session (held briefly too).
    pub fn conversations(&self) -> std::sync::MutexGuard<'_, Conversations> {
        self.inner
            .conversations
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Sessions held now.
    pub fn session_count(&self) -> usize {
        self.inner
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

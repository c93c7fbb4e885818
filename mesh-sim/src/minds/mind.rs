//! One simulated mind: a fresh node's SQLite database (seeded as
//! `porfiry init` seeds it), the daemon's own [`CognitiveCore`] over it with
//! the node's toolset registry, a model — scripted ([`PolicyLlm`]) or real
//! ([`TapedLlm`], `[[models]]`) — and the shared virtual clock.
//! [`Mind::step`] runs one tick: merge what friends sent (the node's own
//! merge code), maybe a note from the user, the core's tick, the core's own
//! wait plan, the policy's transitions (a scripted mind) or the core's own
//! repeat verdict (a model-backed one), and the node's own publishing pass,
//! whose new items go to the replication engine.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use porfiry_agent::cognition::wait::WaitPlan;
use porfiry_agent::cognition::{CognitiveCore, CoreConfig, CoreEvents, CoreParts, Trace};
use porfiry_agent::llm::registry_models::RegistryModels;
use porfiry_mesh::seed::seed_core;
use porfiry_mesh::sharing::merge::merge_items;
use porfiry_mesh::sharing::publish::publish_pending;
use porfiry_protocol::{Body, NodeKey, VerifiedItem};
use porfiry_skills::cognition::{CYCLE_CONFIG_KEY, CycleSettings};
use porfiry_skills::llm::Llm;
use porfiry_skills::{Clock, Language, ManualClock};
use porfiry_storage::db::Db;
use porfiry_storage::{ListQuery, LlmEntry, Note, NoteSource, ProcessEntry, Store};
use porfiry_toolsets::{RowModels, StoreTools, ToolsetOptions, core_toolsets};
use rand::Rng;
use rand_chacha::ChaCha20Rng;

use super::asker::SimAsker;
use super::knowhow::{TRICK_PREFIX, strategy_command};
use super::policy::{MODEL_NAME, PolicyLlm, PolicyState};
use super::scenario::Policy;
use super::tape::TapeEntry;
use super::taped::{OneModel, TapedLlm};

/// The true effectiveness of every strategy a mind wrote, by name: the
/// simulated world's physics, which every scripted model knows and the
/// cores must find out through ratings.
pub(crate) type Truth = Arc<RwLock<BTreeMap<String, f64>>>;

/// Process rows read after a tick to find the strategies it applied: a
/// tick runs at most 16 commands and applies at most 3 strategies, so 256
/// rows since the tick began is more than one tick can write.
const PROCESS_SCAN: u32 = 256;

/// The prompt budget of every mind: the daemon's default.
const CONTEXT_TOKENS: usize = porfiry_skills::cognition::budget::DEFAULT_CONTEXT_TOKENS;

/// A mind's failure: its database or its core.
#[derive(Debug, thiserror::Error)]
pub enum MindError {
    /// The database could not be created or used.
    #[error("mind {mind}: database: {detail}")]
    Db {
        /// Which mind.
        mind: usize,
        /// What failed.
        detail: String,
    },
    /// The cognitive core failed (a database failure inside a tick).
    #[error("mind {mind}: core: {detail}")]
    Core {
        /// Which mind.
        mind: usize,
        /// What failed.
        detail: String,
    },
}

/// What one step did, for the world's counters.
#[derive(Debug, Default)]
pub(crate) struct StepOut {
    /// The tick's reply was a loop.
    pub(crate) looping: bool,
    /// The mind started looping after this tick.
    pub(crate) began: bool,
    /// The mind got out after this many looping ticks.
    pub(crate) escaped: Option<u64>,
    /// New own items for the engine, in the order they were signed.
    pub(crate) items: Vec<VerifiedItem>,
    /// Strategies this mind wrote, with their true effectiveness.
    pub(crate) invented: Vec<(String, f64)>,
    /// When the core wants its next tick, virtual ms.
    pub(crate) next_ms: u64,
    /// Strategies the core applied in the tick.
    pub(crate) applied: u64,
    /// Friends' strategies the mind adopted after the tick.
    pub(crate) adopted: u64,
    /// Of those, adversaries' useless ones.
    pub(crate) adopted_useless: u64,
}

/// How a mind starts: everything but its database's path.
pub(crate) struct MindSetup {
    /// Its index.
    pub(crate) index: usize,
    /// Its node's key.
    pub(crate) key: NodeKey,
    /// The shared clock.
    pub(crate) clock: ManualClock,
    /// Its own seeded stream.
    pub(crate) rng: ChaCha20Rng,
    /// The world's tick grid, ms.
    pub(crate) tick_ms: u64,
    /// Whether know-how goes to the engine.
    pub(crate) sharing: bool,
    /// Its real model; `None` for the scripted policy.
    pub(crate) model: Option<Arc<TapedLlm>>,
}

/// One mind and everything its loop keeps.
pub(crate) struct Mind {
    pub(super) index: usize,
    pub(super) db: Db,
    pub(super) core: CognitiveCore,
    pub(super) state: Arc<Mutex<PolicyState>>,
    pub(super) rng: ChaCha20Rng,
    pub(super) key: Arc<NodeKey>,
    pub(super) clock: ManualClock,
    pub(super) outbox: Arc<Mutex<Vec<VerifiedItem>>>,
    /// Friends' items delivered since the last step.
    pub(crate) inbox: Vec<VerifiedItem>,
    pub(super) skipped: HashSet<(&'static str, i64)>,
    pub(super) last_process: i64,
    pub(super) looping_ticks: u64,
    /// Own strategies not shared yet: name and number.
    pub(super) unshared: Vec<(String, u64)>,
    pub(super) invented: u64,
    /// Friends' strategies this mind wrote a copy of, by name.
    pub(super) adopted: std::collections::BTreeSet<String>,
    /// Whether know-how (strategies, methods, ratings) goes to the engine.
    pub(super) sharing: bool,
    /// Whether this mind is an adversary.
    pub(crate) adversary: bool,
    /// Steps run.
    pub(super) steps: u64,
    /// Its real model; `None` for the scripted policy.
    pub(super) model: Option<Arc<TapedLlm>>,
}

impl Mind {
    /// A fresh mind as `setup` says, with its database at `path`.
    pub(crate) async fn start(path: &Path, setup: MindSetup) -> Result<Mind, MindError> {
        let MindSetup {
            index,
            key,
            clock,
            rng,
            tick_ms,
            sharing,
            model,
        } = setup;
        let db_err = |e: &dyn std::fmt::Display| MindError::Db {
            mind: index,
            detail: e.to_string(),
        };
        let now = clock.now().unix_ms();
        let store = Store::create(path).map_err(|e| db_err(&e))?;
        seed_core(&store, Language::En, now).map_err(|e| db_err(&e))?;
        let cycle = CycleSettings {
            pause_secs: tick_ms / 1_000,
            ..Default::default()
        };
        store
            .config_set(CYCLE_CONFIG_KEY, &cycle, now)
            .map_err(|e| db_err(&e))?;
        drop(store);
        let db = Db::open(path).map_err(|e| db_err(&e))?;
        let events = CoreEvents::new();
        let tools = StoreTools {
            db: db.clone(),
            language: Language::En,
            events: events.clone(),
            node: None,
        };
        let state = Arc::new(Mutex::new(PolicyState {
            mind: index,
            ..Default::default()
        }));
        // A model-backed mind's toolsets reach its one model too, so a
        // registry row its model writes cannot bypass the tape.
        let (llm, rows): (Arc<dyn Llm>, Arc<dyn RowModels>) = match &model {
            Some(m) => {
                let llm: Arc<dyn Llm> = m.clone();
                (llm.clone(), Arc::new(OneModel(llm)))
            }
            None => (
                Arc::new(PolicyLlm::new(state.clone())),
                Arc::new(RegistryModels::new(None)),
            ),
        };
        let registry =
            core_toolsets(&ToolsetOptions::default(), &tools, rows).map_err(|e| db_err(&e))?;
        let name = model.as_ref().map_or(MODEL_NAME, |m| m.name.as_str());
        let key = Arc::new(key);
        let outbox = Arc::new(Mutex::new(Vec::new()));
        let parts = CoreParts {
            db: db.clone(),
            registry: Arc::new(registry),
            maker: Arc::new(OneModel(llm)),
            clock: Arc::new(clock.clone()),
            events,
            asker: Some(Arc::new(SimAsker {
                db: db.clone(),
                key: key.clone(),
                clock: clock.clone(),
                outbox: outbox.clone(),
            })),
            trace: Trace::off(),
        };
        let config = CoreConfig {
            context_tokens: CONTEXT_TOKENS,
            language: Language::En,
            // The endpoint is never dialled: the maker gives the mind's model.
            main: Some(LlmEntry {
                name: name.into(),
                endpoint: "http://127.0.0.1:9/v1".into(),
                model: name.into(),
                ..Default::default()
            }),
            pause_secs: None,
            constrained: false,
        };
        let core = CognitiveCore::start(parts, config)
            .await
            .map_err(|e| MindError::Core {
                mind: index,
                detail: e.to_string(),
            })?;
        Ok(Mind {
            index,
            db,
            core,
            state,
            rng,
            key,
            clock,
            outbox,
            inbox: Vec::new(),
            skipped: HashSet::new(),
            last_process: 0,
            looping_ticks: 0,
            unshared: Vec::new(),
            invented: 0,
            adopted: std::collections::BTreeSet::new(),
            sharing,
            adversary: false,
            steps: 0,
            model,
        })
    }

    /// Whether a real model thinks for this mind.
    pub(crate) fn model_backed(&self) -> bool {
        self.model.is_some()
    }

    /// The real-model calls of the last step, for the tape; none for a
    /// scripted mind.
    pub(crate) fn take_calls(&self) -> Vec<TapeEntry> {
        self.model
            .as_ref()
            .map(|m| m.take_calls())
            .unwrap_or_default()
    }

    pub(super) fn db_err(&self, e: impl std::fmt::Display) -> MindError {
        MindError::Db {
            mind: self.index,
            detail: e.to_string(),
        }
    }

    /// Runs one tick at `now_ms` (virtual ms since the run began; the
    /// shared clock stands there) and what follows it; `tick_ms` is the
    /// world's tick grid.
    pub(crate) async fn step(
        &mut self,
        now_ms: u64,
        tick_ms: u64,
        policy: &Policy,
        truth: &Truth,
    ) -> Result<StepOut, MindError> {
        let at = self.clock.now().unix_ms();
        let inbox = std::mem::take(&mut self.inbox);
        let user_note = self.rng.gen_bool(policy.user_notes);
        let index = self.index;
        self.db
            .write(move |s: &Store| -> porfiry_storage::Result<()> {
                if !inbox.is_empty() {
                    merge_items(s, &inbox)?;
                }
                if user_note {
                    s.add(
                        &Note {
                            text: format!("A note from the user of mind {index} at {at}."),
                            source: NoteSource::User,
                            ..Default::default()
                        },
                        at,
                    )?;
                }
                Ok(())
            })
            .await
            .map_err(|e| self.db_err(e))?
            .map_err(|e| self.db_err(e))?;
        if let Some(m) = &self.model {
            m.cursor.start(self.steps);
        }
        let looping = self.policy_state().looping;
        let done = self.core.tick().await.map_err(|e| MindError::Core {
            mind: self.index,
            detail: e.to_string(),
        })?;
        // A real model's loop is what the core judges a repeat.
        let looping = if self.model_backed() {
            done.report.repeat
        } else {
            looping
        };
        let wait_ms = match self.core.plan_wait().await.map_err(|e| MindError::Core {
            mind: self.index,
            detail: e.to_string(),
        })? {
            WaitPlan::Pause { length, .. } => u64::try_from(length.as_millis()).unwrap_or(u64::MAX),
            WaitPlan::Idle(_) => tick_ms,
        };
        // Ticks stay on the world's grid: a longer pause skips whole ticks.
        let next_ms = now_ms + wait_ms.div_ceil(tick_ms).max(1) * tick_ms;
        let applied = self.applied(at).await?;
        let mut out = StepOut {
            looping,
            next_ms,
            applied: applied.len() as u64,
            ..Default::default()
        };
        if self.model_backed() {
            self.repeats(&mut out);
        } else {
            self.transitions(&applied, policy, truth, &mut out);
        }
        self.share_what_worked(policy).await?;
        if !self.model_backed()
            && !self.policy_state().looping
            && self.rng.gen_bool(policy.adopt)
            && let Some(name) = self.adopt(policy).await?
        {
            out.adopted = 1;
            out.adopted_useless = u64::from(name.starts_with(TRICK_PREFIX));
        }
        if self.adversary {
            self.cheat(at, &mut out).await?;
        }
        out.items = self.publish(at).await?;
        self.steps += 1;
        Ok(out)
    }

    pub(super) fn policy_state(&self) -> std::sync::MutexGuard<'_, PolicyState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The strategies the tick applied, as (name, class), oldest first.
    async fn applied(&mut self, since: u64) -> Result<Vec<(String, String)>, MindError> {
        let last = self.last_process;
        let rows = self
            .db
            .read(move |s: &Store| {
                s.list::<ProcessEntry>(&ListQuery {
                    since_ms: Some(since),
                    limit: Some(PROCESS_SCAN),
                    oldest_first: true,
                    ..Default::default()
                })
            })
            .await
            .map_err(|e| self.db_err(e))?
            .map_err(|e| self.db_err(e))?;
        let mut out = Vec::new();
        for r in rows.into_iter().filter(|r| r.id > last) {
            self.last_process = self.last_process.max(r.id);
            if r.row.name == "stagnation_strategy" {
                let field = |k: &str| r.row.command[k].as_str().unwrap_or_default().to_owned();
                out.push((field("name"), field("class")));
            }
        }
        Ok(out)
    }

    /// The policy's draws after a tick: escape (per applied strategy, with
    /// its true effectiveness), on its own, or drift into a loop; and on an
    /// escape, maybe a strategy of its own.
    fn transitions(
        &mut self,
        applied: &[(String, String)],
        policy: &Policy,
        truth: &Truth,
        out: &mut StepOut,
    ) {
        if !out.looping {
            if self.rng.gen_bool(policy.drift) {
                self.policy_state().looping = true;
                out.began = true;
            }
            return;
        }
        self.looping_ticks += 1;
        let known = truth.read().unwrap_or_else(PoisonError::into_inner);
        let mut escaped = false;
        for (name, class) in applied {
            let p = known
                .get(name)
                .copied()
                .unwrap_or_else(|| policy.effectiveness.of(class));
            escaped |= self.rng.gen_bool(p);
        }
        drop(known);
        escaped |= self.rng.gen_bool(policy.self_escape);
        if !escaped {
            return;
        }
        out.escaped = Some(self.looping_ticks);
        self.looping_ticks = 0;
        let mut state = self.policy_state();
        state.looping = false;
        drop(state);
        if self.rng.gen_bool(policy.invent) {
            let [low, high] = policy.invented_effectiveness;
            let p = if high > low {
                self.rng.gen_range(low..=high)
            } else {
                low
            };
            self.invented += 1;
            let name = format!("Way {} of mind {}", self.invented, self.index);
            self.policy_state()
                .commands
                .push(strategy_command(&name, self.invented, "local"));
            self.unshared.push((name.clone(), self.invented));
            out.invented.push((name, p));
        }
    }

    /// A model-backed mind's episodes, from the core's repeat verdicts: a
    /// loop begins with the first repeated reply and ends, after that many
    /// looping ticks, with the first reply that is not.
    fn repeats(&mut self, out: &mut StepOut) {
        if out.looping {
            out.began = self.looping_ticks == 0;
            self.looping_ticks += 1;
        } else if self.looping_ticks > 0 {
            out.escaped = Some(self.looping_ticks);
            self.looping_ticks = 0;
        }
    }

    /// The node's publishing pass; with sharing off, know-how stays home
    /// (its rows are still signed and marked, as on a node with no friends).
    async fn publish(&mut self, at: u64) -> Result<Vec<VerifiedItem>, MindError> {
        let key = self.key.clone();
        let mut skipped = std::mem::take(&mut self.skipped);
        let (items, skipped) = self
            .db
            .write(move |s: &Store| {
                let items = publish_pending(s, &key, at, &mut skipped);
                (items, skipped)
            })
            .await
            .map_err(|e| self.db_err(e))?;
        self.skipped = skipped;
        let mut items = items.map_err(|e| self.db_err(e))?;
        let mut asked =
            std::mem::take(&mut *self.outbox.lock().unwrap_or_else(PoisonError::into_inner));
        asked.append(&mut items);
        if !self.sharing {
            asked.retain(|i| !is_knowhow(i));
        }
        Ok(asked)
    }
}

/// Whether an item is know-how (a strategy, method or rating).
pub(crate) fn is_knowhow(item: &VerifiedItem) -> bool {
    matches!(
        item.body(),
        Body::StagnationStrategy(_) | Body::ThinkingMethod(_) | Body::Rating(_)
    )
}

/// Whether an item is a strategy.
pub(crate) fn is_strategy(item: &VerifiedItem) -> bool {
    matches!(item.body(), Body::StagnationStrategy(_))
}

//! Core replies for the training data (issue 43 §3: "short core replies: a
//! reflection and a valid command for a given context"): fresh nodes, each
//! with two goals ([`super::core_goals`]), run ticks of the very cognitive core `porfiry think`
//! runs (its prompt, contexts 0–6, its parser, its tools over SQLite), with
//! a scripted [`Thinker`] as the main model. The thinker answers each main
//! call with a sentence about one goal and one command that serves it — a
//! `TOOL_CALL` line or the seed's JSON command block — and keeps the
//! exchange only when the tick ran the command.
//!
//! Nothing repeats within a node (the anti-stagnation reflex would flag a
//! repeat): each goal's steps are taken in turn.

use std::path::Path;
use std::sync::{Arc, Mutex};

use porfiry_mesh::seed::seed_core;
use porfiry_skills::cognition::texts::prompt::core_system_prompt;
use porfiry_skills::llm::{BoxFuture, Completion, LlmError, ModelRequest};
use porfiry_skills::{Clock, Language, Llm, ManualClock};
use porfiry_storage::db::Db;
use porfiry_storage::{Goal, LlmEntry, Store};
use porfiry_toolsets::{StoreTools, ToolsetOptions, core_toolsets};
use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};

use super::core_goals::{DrawnGoal, draw_two};
use super::core_texts::{evaluation, reply_for};
use super::{Example, ExampleKind};
use crate::cognition::models::ModelMaker;
use crate::cognition::{CognitiveCore, CoreConfig, CoreEvents, CoreParts, Trace};
use crate::llm::registry_models::RegistryModels;

/// Ticks one node runs before a fresh one starts: the first ticks of a
/// node with new goals are the ones a small model meets most (and a node
/// that ran longer would need replies about its own growing history).
pub const TICKS_PER_NODE: u32 = 4;

/// The prompt budget of the taught ticks (`porfiry think --context-tokens`
/// of the taught model's runs): at 1,024 the Russian prompt's never-cut
/// part alone fills the room and the goals are cut; 2,048 shows both goals
/// in both languages and stays well inside a small model's context.
pub const CORE_CONTEXT_TOKENS: usize = 2_048;

/// The registry name the core asks its maker for.
const THINKER: &str = "teacher";

/// Why core data could not be written.
#[derive(Debug, thiserror::Error)]
pub enum CoreDataError {
    /// A scratch node could not be made or read.
    #[error("a scratch node for core data: {0}")]
    Node(String),
    /// The core failed to start or to tick.
    #[error("a core tick for the data: {0}")]
    Core(#[from] crate::cognition::CoreError),
}

/// Core examples and what became of the ticks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoreGenerated {
    /// The examples, in order.
    pub examples: Vec<Example>,
    /// Ticks run.
    pub ticks: usize,
    /// Ticks whose command did not run (left out).
    pub dropped: usize,
}

/// `ticks` core ticks, nodes taking the `languages` in turn, drawn by
/// `seed`; each scratch node's database lives in `dir` while it thinks.
pub async fn core_examples(
    seed: u64,
    ticks: usize,
    languages: &[Language],
    dir: &Path,
) -> Result<CoreGenerated, CoreDataError> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xC0DE);
    let mut out = CoreGenerated {
        examples: Vec::new(),
        ticks: 0,
        dropped: 0,
    };
    let per_node = TICKS_PER_NODE as usize;
    let mut node = 0usize;
    while out.ticks < ticks {
        let Some(&language) = languages.get(node % languages.len().max(1)) else {
            break;
        };
        let n = per_node.min(ticks - out.ticks);
        let seed = rng.next_u64();
        run_node(
            seed,
            language,
            n,
            &dir.join(format!("core-{node}.db")),
            &mut out,
        )
        .await?;
        node += 1;
    }
    Ok(out)
}

/// One scratch node: two goals, `ticks` ticks.
async fn run_node(
    seed: u64,
    language: Language,
    ticks: usize,
    path: &Path,
    out: &mut CoreGenerated,
) -> Result<(), CoreDataError> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let clock = ManualClock::at(
        time::OffsetDateTime::from_unix_timestamp(super::generate::START_UNIX)
            .unwrap_or(time::OffsetDateTime::UNIX_EPOCH),
        "UTC",
    );
    let now_ms = clock.now().unix_ms();
    let node_error = |e: &dyn std::fmt::Display| CoreDataError::Node(e.to_string());
    let _ = std::fs::remove_file(path);
    let store = Store::create(path).map_err(|e| node_error(&e))?;
    seed_core(&store, language, now_ms).map_err(|e| node_error(&e))?;
    let mut goals = Vec::new();
    for (i, text) in draw_two(&mut rng).into_iter().enumerate() {
        let goal = Goal {
            title: text.title(language).to_owned(),
            priority: 2 - i as i64,
            ..Default::default()
        };
        let id = store.add(&goal, now_ms).map_err(|e| node_error(&e))?;
        goals.push((id, text));
    }
    let db = Db::start(store).map_err(|e| node_error(&e))?;
    let thinker = Arc::new(Thinker::new(language, goals, rng));
    let events = CoreEvents::new();
    let tools = StoreTools {
        db: db.clone(),
        language,
        events: events.clone(),
        node: None,
    };
    let registry = core_toolsets(
        &ToolsetOptions::default(),
        &tools,
        Arc::new(RegistryModels::new(None)),
    )
    .map_err(|e| node_error(&e))?;
    let shared: Arc<dyn Clock> = Arc::new(clock.clone());
    let parts = CoreParts {
        db: db.clone(),
        registry: Arc::new(registry),
        maker: Arc::new(ThinkerMaker(thinker.clone())),
        clock: shared,
        events,
        asker: None,
        trace: Trace::off(),
    };
    let config = CoreConfig {
        context_tokens: CORE_CONTEXT_TOKENS,
        language,
        main: Some(LlmEntry {
            name: THINKER.into(),
            endpoint: "http://127.0.0.1:9/v1".into(),
            model: THINKER.into(),
            ..Default::default()
        }),
        pause_secs: Some(0),
        constrained: false,
    };
    let mut core = CognitiveCore::start(parts, config).await?;
    for _ in 0..ticks {
        clock.advance(time::Duration::minutes(5));
        let done = core.tick().await?;
        out.ticks += 1;
        let exchange = thinker.take();
        match exchange {
            Some((request, reply)) if done.report.executed() > 0 => {
                out.examples.push(Example {
                    kind: ExampleKind::Core,
                    language,
                    system: request.system,
                    messages: request.messages,
                    reply,
                });
            }
            _ => {
                tracing::debug!(report = ?done.report, "a teaching tick ran no command; left out");
                out.dropped += 1;
            }
        }
    }
    drop(core);
    db.close().await;
    for suffix in ["", "-wal", "-shm"] {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        let _ = std::fs::remove_file(name);
    }
    Ok(())
}

struct ThinkerMaker(Arc<Thinker>);

impl ModelMaker for ThinkerMaker {
    fn make(&self, _: &LlmEntry) -> Result<Arc<dyn Llm>, LlmError> {
        Ok(self.0.clone())
    }
}

struct ThinkerState {
    rng: ChaCha8Rng,
    /// Steps taken per goal (the next reply takes the next one).
    taken: Vec<usize>,
    /// The main call of the current tick and the reply given.
    last: Option<(ModelRequest, String)>,
    replies: usize,
}

/// The scripted main model of a teaching tick.
struct Thinker {
    language: Language,
    goals: Vec<(i64, DrawnGoal)>,
    state: Mutex<ThinkerState>,
}

impl Thinker {
    fn new(language: Language, goals: Vec<(i64, DrawnGoal)>, rng: ChaCha8Rng) -> Self {
        let taken = vec![0; goals.len()];
        Self {
            language,
            goals,
            state: Mutex::new(ThinkerState {
                rng,
                taken,
                last: None,
                replies: 0,
            }),
        }
    }

    /// The tick's main exchange, if there was one.
    fn take(&self) -> Option<(ModelRequest, String)> {
        self.lock().last.take()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ThinkerState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn is_main_call(&self, request: &ModelRequest) -> bool {
        let first_line = core_system_prompt(self.language)
            .lines()
            .next()
            .unwrap_or("-");
        request.system.starts_with(first_line)
    }
}

impl Llm for Thinker {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<Completion, LlmError>> {
        Box::pin(async move {
            if !self.is_main_call(request) {
                return Ok(Completion::text(evaluation(self.language)));
            }
            let mut state = self.lock();
            let state = &mut *state;
            let which = state.replies % self.goals.len().max(1);
            state.replies += 1;
            let (id, goal) = &self.goals[which];
            let step = state.taken[which];
            state.taken[which] += 1;
            let form = state.rng.next_u32();
            let reply = reply_for(self.language, *id, goal, step, form);
            state.last = Some((request.clone(), reply.clone()));
            Ok(Completion::text(reply))
        })
    }

    fn model_name(&self) -> String {
        THINKER.to_owned()
    }
}

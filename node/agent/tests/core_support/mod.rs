//! Shared by the cognitive core's tests and bench: a scripted in-process
//! model (the model is outside our code; the core, registry and SQLite are
//! real), a model maker that hands out scripted models by registry name,
//! and a core on a fresh node's database with a manual clock.

#![allow(dead_code)]

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use porfiry_agent::cognition::models::ModelMaker;
use porfiry_agent::cognition::{
    CognitiveCore, CoreConfig, CoreEvents, CoreParts, FriendsAsker, Trace,
};
use porfiry_agent::llm::registry_models::RegistryModels;
use porfiry_mesh::seed::seed_core;
use porfiry_skills::cognition::strategy::Mechanism;
use porfiry_skills::cognition::texts::prompt::core_system_prompt;
use porfiry_skills::cognition::{
    CYCLE_CONFIG_KEY, CycleSettings, IdleSettings, NoteFilter, NotesMode,
};
use porfiry_skills::llm::{BoxFuture, Completion, Llm, LlmError, ModelRequest};
use porfiry_skills::{Language, ManualClock};
use porfiry_storage::db::Db;
use porfiry_storage::{DiaryEntry, ListQuery, LlmEntry, Note, StagnationStrategy, Store, Stored};
use porfiry_toolsets::{StoreTools, ToolsetOptions, core_toolsets};

/// A manual clock at 2026-05-28 (any fixed moment will do).
pub fn start_clock() -> ManualClock {
    ManualClock::at(
        time::OffsetDateTime::from_unix_timestamp(1_780_000_000).unwrap(),
        "UTC",
    )
}

/// Answers a request, or fails it.
pub type Handler = dyn Fn(&ModelRequest) -> Result<String, LlmError> + Send + Sync;

/// An in-process model driven by a handler; counts its calls.
pub struct ScriptLlm {
    name: String,
    handler: Box<Handler>,
    calls: AtomicUsize,
    seen: Mutex<Vec<ModelRequest>>,
}

impl ScriptLlm {
    /// A model named `name` answering with `handler`.
    pub fn new(
        name: &str,
        handler: impl Fn(&ModelRequest) -> Result<String, LlmError> + Send + Sync + 'static,
    ) -> Arc<Self> {
        Arc::new(Self {
            name: name.to_owned(),
            handler: Box::new(handler),
            calls: AtomicUsize::new(0),
            seen: Mutex::new(Vec::new()),
        })
    }

    /// Calls made so far.
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    /// Every request seen, in order.
    pub fn seen(&self) -> Vec<ModelRequest> {
        self.seen.lock().unwrap().clone()
    }
}

impl Llm for ScriptLlm {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<Completion, LlmError>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.seen.lock().unwrap().push(request.clone());
        let answer = (self.handler)(request);
        Box::pin(async move { answer.map(Completion::text) })
    }

    fn model_name(&self) -> String {
        self.name.clone()
    }
}

/// Whether `request` is the tick's main call (its system prompt is the
/// core's context 0), not a reflex or validator question.
pub fn is_main_call(request: &ModelRequest, language: Language) -> bool {
    request
        .system
        .starts_with(core_system_prompt(language).lines().next().unwrap_or("-"))
}

/// Hands out scripted models by registry name.
#[derive(Default)]
pub struct ScriptMaker {
    models: Mutex<HashMap<String, Arc<dyn Llm>>>,
}

impl ScriptMaker {
    /// Registers `llm` under its name.
    pub fn with(self, llm: Arc<ScriptLlm>) -> Self {
        let name = llm.name.clone();
        self.with_named(&name, llm)
    }

    /// Registers any model under `name`.
    pub fn with_named(self, name: &str, llm: Arc<dyn Llm>) -> Self {
        self.models.lock().unwrap().insert(name.to_owned(), llm);
        self
    }
}

impl ModelMaker for ScriptMaker {
    fn make(&self, entry: &LlmEntry) -> Result<Arc<dyn Llm>, LlmError> {
        self.models
            .lock()
            .unwrap()
            .get(&entry.name)
            .cloned()
            .ok_or_else(|| LlmError::NoModel(format!("no scripted model {}", entry.name)))
    }
}

/// A registry row for a scripted model.
pub fn entry(name: &str) -> LlmEntry {
    LlmEntry {
        name: name.into(),
        endpoint: "http://127.0.0.1:9/v1".into(),
        model: name.into(),
        ..Default::default()
    }
}

/// A fresh node's database (seeded as `porfiry init` seeds it).
pub fn fresh_db(dir: &Path) -> Db {
    let store = Store::create(dir.join("node.db")).unwrap();
    seed_core(&store, Language::En, 1_000).unwrap();
    drop(store);
    Db::open(&dir.join("node.db")).unwrap()
}

/// Starts a core on `db` whose main model is `main` (by registry name in
/// `maker`), with a manual clock at `clock`.
pub async fn core(
    db: &Db,
    maker: ScriptMaker,
    main: &str,
    clock: ManualClock,
    events: CoreEvents,
    trace: Trace,
) -> CognitiveCore {
    core_with_pause(db, maker, main, clock, events, trace, Some(0)).await
}

/// [`core`] with only `main` (a scripted model of that name), no events and
/// no trace.
pub async fn core_of(db: &Db, main: Arc<ScriptLlm>, clock: &ManualClock) -> CognitiveCore {
    let name = main.name.clone();
    core(
        db,
        ScriptMaker::default().with(main),
        &name,
        clock.clone(),
        CoreEvents::new(),
        Trace::off(),
    )
    .await
}

/// [`core`] with this run's pause bound (`--pause-secs`; `None` = the
/// cycle setting).
pub async fn core_with_pause(
    db: &Db,
    maker: ScriptMaker,
    main: &str,
    clock: ManualClock,
    events: CoreEvents,
    trace: Trace,
    pause_secs: Option<u64>,
) -> CognitiveCore {
    let setup = Setup {
        events,
        trace,
        pause_secs,
        ..Setup::default()
    };
    core_from(db, Arc::new(maker), main, clock, setup).await
}

/// What else a test core may differ in.
pub struct Setup {
    /// Wake-up events.
    pub events: CoreEvents,
    /// Where trace lines go.
    pub trace: Trace,
    /// This run's pause bound.
    pub pause_secs: Option<u64>,
    /// Who posts to friends.
    pub asker: Option<Arc<dyn FriendsAsker>>,
    /// Whether ticks carry their reply grammar (`--constrained`).
    pub constrained: bool,
    /// The prompt budget (`--context-tokens`).
    pub context_tokens: usize,
}

impl Default for Setup {
    /// No events, no trace, `--pause-secs 0`, no way to friends, the
    /// default budget.
    fn default() -> Self {
        Self {
            events: CoreEvents::new(),
            trace: Trace::off(),
            pause_secs: Some(0),
            asker: None,
            constrained: false,
            context_tokens: porfiry_skills::cognition::budget::DEFAULT_CONTEXT_TOKENS,
        }
    }
}

/// A core on `db` with any model maker, main model `main`, and `setup`.
pub async fn core_from(
    db: &Db,
    maker: Arc<dyn ModelMaker>,
    main: &str,
    clock: ManualClock,
    setup: Setup,
) -> CognitiveCore {
    let Setup {
        events,
        trace,
        pause_secs,
        asker,
        constrained,
        context_tokens,
    } = setup;
    let tools = StoreTools {
        db: db.clone(),
        language: Language::En,
        events: events.clone(),
        node: None,
    };
    let registry = core_toolsets(
        &ToolsetOptions::default(),
        &tools,
        Arc::new(RegistryModels::new(None)),
    )
    .unwrap();
    let parts = CoreParts {
        db: db.clone(),
        registry: Arc::new(registry),
        maker,
        clock: Arc::new(clock),
        events,
        asker,
        trace,
    };
    CognitiveCore::start(
        parts,
        CoreConfig {
            context_tokens,
            language: Language::En,
            main: Some(entry(main)),
            pause_secs,
            constrained,
        },
    )
    .await
    .unwrap()
}

/// A busy family node: 10,000 diary entries (every 500th pinned) and
/// 100,000 notes, notes shown to the core in auto mode.
pub async fn fill_busy(db: &Db) {
    db.write(|s| {
        let diary: Vec<DiaryEntry> = (0..10_000)
            .map(|i| DiaryEntry {
                text: format!("diary entry {i}: thoughts about mesh replication and friends"),
                pinned: i % 500 == 0,
                ..Default::default()
            })
            .collect();
        s.add_many(&diary, 2_000).unwrap();
        let notes: Vec<Note> = (0..100_000)
            .map(|i| Note {
                text: format!("note {i} from the family chat, with some words in it"),
                priority: i64::from(i % 3),
                ..Default::default()
            })
            .collect();
        s.add_many(&notes, 2_000).unwrap();
        set_cycle(
            s,
            CycleSettings {
                notes: NotesMode::Auto {
                    filter: NoteFilter::default(),
                },
                ..Default::default()
            },
            2_000,
        );
    })
    .await
    .unwrap();
}

/// Stores `cycle` as the core's cycle settings.
pub fn set_cycle(s: &Store, cycle: CycleSettings, now_ms: u64) {
    s.config_set(CYCLE_CONFIG_KEY, &cycle, now_ms).unwrap();
}

/// A model that never answers (a hung server): only a deadline ends its call.
pub struct HungLlm(pub String);

impl Llm for HungLlm {
    fn complete<'a>(&'a self, _: &'a ModelRequest) -> BoxFuture<'a, Result<Completion, LlmError>> {
        Box::pin(std::future::pending())
    }

    fn model_name(&self) -> String {
        self.0.clone()
    }
}

/// A main model answering each main call with the next of `replies` (the
/// last one again when they run out) and the reflexes with a usable
/// evaluation; every main call's user message is kept.
pub fn scripted(replies: &[&str]) -> (Arc<ScriptLlm>, Arc<Mutex<Vec<String>>>) {
    let prompts = Arc::new(Mutex::new(Vec::new()));
    let seen = prompts.clone();
    let replies: Vec<String> = replies.iter().map(|r| (*r).to_owned()).collect();
    let llm = ScriptLlm::new("main", move |req: &ModelRequest| {
        if is_main_call(req, Language::En) {
            let mut seen = seen.lock().unwrap();
            seen.push(req.messages.iter().map(|m| m.content.clone()).collect());
            let i = (seen.len() - 1).min(replies.len() - 1);
            Ok(replies[i].clone())
        } else {
            Ok(r#"{"novel": "yes", "novelty": 0.7, "new_ideas": ["x"], "tags": ["t"]}"#.into())
        }
    });
    (llm, prompts)
}

pub fn all<T: porfiry_storage::Record>(s: &Store) -> Vec<Stored<T>> {
    s.list::<T>(&ListQuery {
        limit: Some(1_000),
        oldest_first: true,
        ..Default::default()
    })
    .unwrap()
}

/// Deletes every stagnation strategy but the one built on `mechanism`, so a
/// stall must choose it.
pub async fn keep_only_strategy(db: &Db, mechanism: Mechanism) {
    let tag = mechanism.tag();
    db.write(move |s| {
        for st in all::<StagnationStrategy>(s) {
            if !st.row.tags.contains(&tag) {
                s.delete::<StagnationStrategy>(st.id).unwrap();
            }
        }
    })
    .await
    .unwrap();
}

// ------------------------------------------------ the core and idle tests' helpers

/// The tests' manual clock at the shared start.
pub fn clock() -> ManualClock {
    start_clock()
}

/// A main model answering the tick with `reply` and the reflexes with a
/// usable evaluation.
pub fn thinker(name: &str, reply: &'static str) -> std::sync::Arc<ScriptLlm> {
    ScriptLlm::new(name, move |req| {
        if is_main_call(req, Language::En) {
            Ok(reply.to_owned())
        } else {
            Ok(r#"{"novel": "yes", "novelty": 0.8, "new_ideas": ["a"], "refined_ideas": [], "discarded_ideas": [], "tags": ["mesh"], "emotions": ["joy:3"]}"#.to_owned())
        }
    })
}

/// A core with `maker`'s models, main model "main", no events, no trace.
pub async fn quiet_core(
    db: &porfiry_storage::db::Db,
    maker: ScriptMaker,
    clock: ManualClock,
) -> porfiry_agent::cognition::CognitiveCore {
    core(db, maker, "main", clock, CoreEvents::new(), Trace::off()).await
}

/// Switches idle mode on with `settings`.
pub async fn idle(db: &porfiry_storage::db::Db, settings: IdleSettings) {
    let since = settings.since_ms;
    db.write(move |s| {
        set_cycle(
            s,
            CycleSettings {
                idle: Some(settings),
                ..Default::default()
            },
            since,
        )
    })
    .await
    .unwrap();
}

/// A read of the database, its errors failing the test.
pub async fn read<T: Send + 'static>(
    db: &porfiry_storage::db::Db,
    f: impl FnOnce(&Store) -> T + Send + 'static,
) -> T {
    db.read(f).await.unwrap()
}

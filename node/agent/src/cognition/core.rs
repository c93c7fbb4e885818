//! The cognitive core: the continuous thinking cycle (seed 003) on the
//! node's database, models and toolset registry. [`CognitiveCore::tick`]
//! runs one tick (load → prompt → model → reflexes → validated commands,
//! journaled ahead → record → stagnation check, its strategies journaled
//! ahead too); [`CognitiveCore::run`] repeats it with the pause or idle
//! wait between ticks until shut down or a tick budget ends.
//! [`CognitiveCore::start`] first records a tick the node stopped in while
//! its commands or its reflex's strategies ran.

use std::collections::BTreeMap;
use std::sync::Arc;

use porfiry_skills::cognition::CycleSettings;
use porfiry_skills::cognition::context::build_prompt;
use porfiry_skills::cognition::tick::{Tick, TickReport, TickStart, TickStep};
use porfiry_skills::llm::stops::tick_answer_stop;
use porfiry_skills::{Clock, Language, ToolEffect, ToolsetRegistry};
use porfiry_storage::{LlmEntry, Store};
use tokio::sync::broadcast;

use crate::cognition::asker::FriendsAsker;
use crate::cognition::embedder::Embedder;
use crate::cognition::error::CoreError;
use crate::cognition::journal::{JournalIo, JournalPart, TickJournal, run_journaled};
use crate::cognition::limits::MAX_COMMANDS_RUN;
use crate::cognition::load::{LoadRequest, Loaded, load};
use crate::cognition::mechanisms::StagnationIo;
use crate::cognition::models::{ModelCache, ModelMaker, Voice};
use crate::cognition::record::{Recorded, TickFacts, record_tick};
use crate::cognition::reflect::{ask_main, reflect};
use crate::cognition::run_commands::{CommandRunner, catalogue_lines};
use crate::cognition::stagnation::Stagnation;
use crate::cognition::trace::Trace;
use crate::cognition::wait::{WaitPlan, Waited, plan_wait, wait_between_ticks};
use porfiry_mesh::events::{CoreEvent, CoreEvents};
use porfiry_skills::cognition::THINKING_PAUSED_KEY;
use porfiry_storage::db::Db;

/// How the core is set up.
#[derive(Debug, Clone)]
pub struct CoreConfig {
    /// The prompt budget in tokens (`--context-tokens`).
    pub context_tokens: usize,
    /// The language of prompts and tool replies.
    pub language: Language,
    /// The main model from the flags; `None` = the registry's main model.
    pub main: Option<LlmEntry>,
    /// Seconds between ticks for this run instead of the cycle setting
    /// (`porfiry think --pause-secs`), and the most any pause may last,
    /// strategy pauses included; idle mode still waits as set.
    pub pause_secs: Option<u64>,
    /// Whether each tick's request carries the grammar of a reply whose
    /// commands are catalogue tools (`--constrained`; a backend that can
    /// constrain decoding applies it, see `crate::llm::constrained`).
    pub constrained: bool,
}

/// The core's parts, given once.
pub struct CoreParts {
    /// The node's database actor.
    pub db: Db,
    /// The node's toolsets (the same registry chat uses).
    pub registry: Arc<ToolsetRegistry>,
    /// Builds model clients from registry rows.
    pub maker: Arc<dyn ModelMaker>,
    /// The injected clock.
    pub clock: Arc<dyn Clock>,
    /// Wake-up events (finished processes, new notes).
    pub events: CoreEvents,
    /// Posts notes to friends, when there is a way to.
    pub asker: Option<Arc<dyn FriendsAsker>>,
    /// Where `--trace` lines go.
    pub trace: Trace,
}

/// What one tick did, in brief (for `porfiry think` and tests).
#[derive(Debug, Clone)]
pub struct TickDone {
    /// The full report.
    pub report: TickReport,
    /// What was written.
    pub recorded: Recorded,
}

/// The running core.
pub struct CognitiveCore {
    parts: CoreParts,
    config: CoreConfig,
    models: ModelCache,
    runner: CommandRunner,
    catalogue: Vec<String>,
    effects: Arc<BTreeMap<String, ToolEffect>>,
    events: broadcast::Receiver<CoreEvent>,
    stagnation: Stagnation,
    embedder: Embedder,
    next_tick: u64,
    /// The reply grammar every tick's request carries, when constrained.
    grammar: Option<String>,
}

impl CognitiveCore {
    /// A core continuing after the last recorded tick. Process rows left
    /// running by an earlier run of the node are closed as errors saying so;
    /// open questions to friends stay open until answered or timed out. A
    /// tick the node stopped in while its commands ran is recorded first,
    /// from its journal ([`crate::cognition::journal::recover`]), and so are
    /// the strategies of a reflex it stopped in.
    pub async fn start(parts: CoreParts, config: CoreConfig) -> Result<Self, CoreError> {
        let now = parts.clock.now().unix_ms();
        let language = config.language;
        let (recovered, last) = parts
            .db
            .write(move |store: &Store| {
                porfiry_toolsets::acting::close_orphans(store, now, language)?;
                let recovered = crate::cognition::journal::recover(store, language, now)?;
                let last = store.last_tick()?.map(|t| t.row.tick);
                Ok::<_, porfiry_storage::StorageError>((recovered, last))
            })
            .await??;
        if let Some(r) = &recovered {
            let what = match r.part {
                JournalPart::Commands => "commands",
                JournalPart::Stagnation => "anti-stagnation strategies",
            };
            tracing::warn!(
                tick = r.tick,
                "the node stopped during tick {}'s {what}; recorded them from the journal, {} of {} finished",
                r.tick,
                r.finished,
                r.commands
            );
            parts
                .trace
                .line(format_args!("recovered interrupted tick: {r:?}"));
        }
        let effects = Arc::new(
            parts
                .registry
                .sets()
                .flat_map(|set| set.tools().iter().map(|t| (t.name.clone(), t.effect)))
                .collect(),
        );
        let mut catalogue = catalogue_lines(&parts.registry);
        catalogue.push(crate::cognition::texts::mesh_catalogue_line(
            config.language,
        ));
        let grammar = config.constrained.then(|| {
            porfiry_skills::grammar::core_reply(
                config.language,
                &porfiry_skills::grammar::core_catalogue(&parts.registry),
            )
        });
        let runner = CommandRunner::new(parts.registry.clone(), config.language)
            .with_mesh(parts.db.clone(), parts.asker.clone());
        let events = parts.events.subscribe();
        let stagnation = Stagnation::restore(config.language, &parts.db).await?;
        Ok(Self {
            models: ModelCache::new(parts.maker.clone()),
            runner,
            catalogue,
            effects,
            events,
            stagnation,
            embedder: Embedder::new(),
            next_tick: last.map_or(1, |t| u64::try_from(t).unwrap_or(0).saturating_add(1)),
            grammar,
            parts,
            config,
        })
    }

    /// The number the next tick will have.
    pub fn next_tick(&self) -> u64 {
        self.next_tick
    }

    /// Runs ticks until `ticks` have run (`None` = until `shutdown`
    /// resolves), waiting between them as the cycle settings say. With
    /// `None`, no tick starts while a person has paused thinking; the core
    /// sleeps on its events until [`CoreEvent::ThinkingSwitched`] says the
    /// pause is off (never a poll).
    pub async fn run(
        &mut self,
        ticks: Option<u64>,
        shutdown: impl std::future::Future<Output = ()>,
    ) -> Result<(), CoreError> {
        tokio::pin!(shutdown);
        let mut done = 0u64;
        loop {
            // A person's pause holds the daemon's core (`ticks` = `None`);
            // a bounded run (`porfiry think --ticks N`) was asked for by hand.
            if ticks.is_none() {
                tokio::select! {
                    _ = &mut shutdown => return Ok(()),
                    resumed = self.until_resumed() => resumed?,
                }
            }
            tokio::select! {
                _ = &mut shutdown => return Ok(()),
                result = self.tick() => { result?; }
            }
            done += 1;
            if ticks.is_some_and(|n| done >= n) {
                return Ok(());
            }
            tokio::select! {
                _ = &mut shutdown => return Ok(()),
                waited = self.wait() => { waited?; }
            }
        }
    }

    /// Returns at once unless a person paused thinking; then sleeps on the
    /// core's events until [`CoreEvent::ThinkingSwitched`] says the pause
    /// is off (never a poll). With nobody left to resume it, it never
    /// returns: race it against the caller's shutdown.
    pub async fn until_resumed(&mut self) -> Result<(), CoreError> {
        if !self.paused().await? {
            return Ok(());
        }
        tracing::info!("thinking paused by the user; waiting to be resumed");
        self.parts.trace.line("thinking paused");
        loop {
            if let Err(broadcast::error::RecvError::Closed) = self.events.recv().await {
                std::future::pending::<()>().await;
            }
            if !self.paused().await? {
                tracing::info!("thinking resumed");
                self.parts.trace.line("thinking resumed");
                return Ok(());
            }
        }
    }

    /// Whether a person paused thinking ([`THINKING_PAUSED_KEY`]).
    pub async fn paused(&self) -> Result<bool, CoreError> {
        Ok(self
            .parts
            .db
            .read(|s: &Store| s.config_get::<bool>(THINKING_PAUSED_KEY))
            .await??
            .unwrap_or(false))
    }

    /// Waits as the cycle settings say: the pause, or idle until a wake
    /// condition holds (an awaited event or the timeout, never a poll). A
    /// pause of [`NOTICE_PAUSE`](crate::cognition::wait::NOTICE_PAUSE) or
    /// more is logged with its reason before it starts.
    pub async fn wait(&mut self) -> Result<Waited, CoreError> {
        let plan = self.plan_wait().await?;
        if let Some(notice) = plan.notice() {
            tracing::info!(tick = self.next_tick - 1, "before the next tick: {notice}");
        }
        self.wait_as(&plan).await
    }

    /// What the next wait will be: idle mode, or the pause with its reason.
    /// This run's `pause_secs` bound caps every pause, strategy pauses
    /// included. Takes the radical-pause strategy's extra pause, so follow
    /// it with [`CognitiveCore::wait_as`].
    pub async fn plan_wait(&mut self) -> Result<WaitPlan, CoreError> {
        let cycle: CycleSettings = self
            .parts
            .db
            .read(|s: &Store| s.config_get(porfiry_skills::cognition::CYCLE_CONFIG_KEY))
            .await??
            .unwrap_or_default();
        let extra = self.stagnation.extra_pause();
        if extra.is_some() {
            // Taken once: a restart during the pause must not sleep it again.
            self.stagnation
                .save(&self.parts.db, self.parts.clock.now().unix_ms())
                .await?;
        }
        Ok(plan_wait(&cycle, self.config.pause_secs, extra))
    }

    /// Waits as `plan` ([`CognitiveCore::plan_wait`]) says.
    pub async fn wait_as(&mut self, plan: &WaitPlan) -> Result<Waited, CoreError> {
        let db = self.parts.db.clone();
        let waited = wait_between_ticks(&db, &mut self.events, plan, &*self.parts.clock).await?;
        self.parts.trace.line(format_args!("wait: {waited:?}"));
        Ok(waited)
    }

    /// Runs one tick and records it. A failed model call is recorded as the
    /// tick's error (the next tick tries again); only a database failure
    /// is an `Err`.
    pub async fn tick(&mut self) -> Result<TickDone, CoreError> {
        let number = self.next_tick;
        self.next_tick += 1;
        let started = self.parts.clock.now();
        // Friends' answers to earlier mesh_interact questions, into their
        // process rows before context 2 is read.
        let at = started.unix_ms();
        self.parts
            .db
            .write(move |s: &Store| crate::cognition::mesh_interact::gather_answers(s, at))
            .await??;
        let main = self.main_entry(number).await;
        let model_name = main
            .as_ref()
            .map_or_else(|_| "-".to_owned(), |e| e.name.clone());
        let request = LoadRequest {
            tick: number,
            now: started.clone(),
            language: self.config.language,
            catalogue: self.catalogue.clone(),
            settings: vec![
                ("model".into(), model_name.clone()),
                (
                    "context_tokens".into(),
                    self.config.context_tokens.to_string(),
                ),
            ],
            hints: self.stagnation.take_hints(),
        };
        let mut loaded: Loaded = self.parts.db.read(move |s| load(s, &request)).await??;
        if let Some(secs) = self.config.pause_secs {
            // Context 5 shows the pause this run really keeps.
            loaded.data.cycle.pause_secs = secs;
        }
        let mut prompt = build_prompt(&loaded.data, self.config.context_tokens);
        prompt.request.grammar.clone_from(&self.grammar);
        prompt.request.stop = tick_answer_stop(self.config.language)
            .map(str::to_owned)
            .into();
        self.parts.trace.prompt(&prompt);
        // Only what context 2 showed is closed: a result the budget cut
        // stays open until a tick shows it (issue 42, seed 003 #3).
        let shown_processes: Vec<i64> = loaded
            .data
            .processes
            .iter()
            .filter(|p| !(p.status == "warning" && p.result.is_none()))
            .filter(|p| prompt.shown_processes.contains(&p.id))
            .map(|p| p.id)
            .collect();
        let prompt_tokens = prompt.tokens;
        let mut tick = Tick::new(TickStart {
            tick: number,
            started_ms: started.unix_ms(),
            prompt,
            previous_reply: loaded.previous_reply.clone(),
            emotions: loaded.emotions.clone(),
            validators: loaded.validators.iter().map(|v| v.name.clone()).collect(),
            main_model: model_name.clone(),
            main_aliases: main
                .as_ref()
                .map(|m| {
                    loaded
                        .validators
                        .iter()
                        .filter(|v| v.name != m.name && same_model(v, m))
                        .map(|v| v.name.clone())
                        .collect()
                })
                .unwrap_or_default(),
            thresholds: loaded.thresholds,
            effects: self.effects.clone(),
            language: self.config.language,
        });
        let main_voice: Result<Voice, String> =
            main.and_then(|entry| self.models.voice(&entry).map_err(|e| e.to_string()));
        let mode = match loaded.cycle.notes {
            porfiry_skills::cognition::NotesMode::Manual => "manual",
            porfiry_skills::cognition::NotesMode::Auto { .. } => "auto",
        };
        // What the journal of the tick's commands needs besides them.
        let mut journal = TickJournal {
            tick: number,
            part: JournalPart::Commands,
            started_ms: started.unix_ms(),
            updated_ms: started.unix_ms(),
            model: model_name.clone(),
            mode: mode.to_owned(),
            reply: String::new(),
            prompt_tokens: u32::try_from(prompt_tokens).unwrap_or(u32::MAX),
            model_calls: 0,
            shown_processes: shown_processes.clone(),
            commands: Vec::new(),
        };
        let report = loop {
            match tick.next(self.parts.clock.now().unix_ms()) {
                TickStep::CallModel(request) => {
                    journal.model_calls = journal.model_calls.saturating_add(1);
                    let answer = match &main_voice {
                        Ok(voice) => ask_main(voice, &request).await,
                        Err(e) => Err(e.clone()),
                    };
                    self.parts.trace.reply(&answer);
                    if let Ok(reply) = &answer {
                        journal.reply.clone_from(reply);
                    }
                    tick.model_answered(answer);
                }
                TickStep::Reflect(reflection) => {
                    let calls = 1
                        + reflection.validators.len()
                        + usize::from(reflection.cognitive.is_some());
                    journal.model_calls = journal
                        .model_calls
                        .saturating_add(u32::try_from(calls).unwrap_or(u32::MAX));
                    let validators = loaded
                        .validators
                        .iter()
                        .map(|entry| (entry.name.clone(), self.models.voice(entry)))
                        .collect();
                    let answers = match &main_voice {
                        Ok(voice) => reflect(voice, validators, *reflection).await,
                        Err(_) => Default::default(),
                    };
                    tick.reflected(answers);
                }
                TickStep::Run(mut commands) => {
                    commands.truncate(MAX_COMMANDS_RUN);
                    let io = JournalIo {
                        db: &self.parts.db,
                        runner: &self.runner,
                        trace: &self.parts.trace,
                        clock: &*self.parts.clock,
                    };
                    let results = run_journaled(&io, journal.clone(), &commands).await?;
                    tick.ran(results);
                }
                TickStep::Finish(report) => break *report,
            }
        };
        let facts_model = model_name.clone();
        let language = self.config.language;
        let now_ms = self.parts.clock.now().unix_ms();
        let to_record = report.clone();
        let recorded = self
            .parts
            .db
            .write(move |s| {
                record_tick(
                    s,
                    &to_record,
                    &TickFacts {
                        model: &facts_model,
                        mode,
                        shown_processes: &shown_processes,
                        language,
                        now_ms,
                    },
                )
            })
            .await??;
        self.parts.trace.done(&report);
        self.stagnation
            .after_tick(
                &report,
                &mut StagnationIo {
                    db: &self.parts.db,
                    runner: &self.runner,
                    asker: self.parts.asker.as_deref(),
                    clock: &*self.parts.clock,
                    trace: &self.parts.trace,
                    model: &model_name,
                    llm: main_voice.as_ref().ok().map(|v| v.llm.as_ref()),
                    embedder: &self.embedder,
                },
            )
            .await?;
        self.stagnation
            .save(&self.parts.db, self.parts.clock.now().unix_ms())
            .await?;
        Ok(TickDone { report, recorded })
    }

    /// The main model's row for this tick: a switched-to model while the
    /// switch lasts, else the flags' model, else the registry's main one,
    /// with any raised sampling; `Err` says why there is none.
    async fn main_entry(&self, tick: u64) -> Result<LlmEntry, String> {
        if let Some(entry) = self.stagnation.switched_model(tick) {
            return Ok(self.stagnation.tuned(entry.clone(), tick));
        }
        let base = match &self.config.main {
            Some(entry) => entry.clone(),
            None => self
                .parts
                .db
                .read(|s: &Store| s.llm_main())
                .await
                .map_err(|e| e.to_string())?
                .map_err(|e| e.to_string())?
                .map(|m| m.row)
                .ok_or_else(|| {
                    "no main model: give --llm-url and --llm-model, or `porfiry llm add NAME --url URL --model M --main`"
                        .to_owned()
                })?,
        };
        Ok(self.stagnation.tuned(base, tick))
    }
}

/// Whether two registry entries reach the same model: the same endpoint
/// (a trailing `/` aside) and model name.
fn same_model(a: &LlmEntry, b: &LlmEntry) -> bool {
    a.endpoint.trim_end_matches('/') == b.endpoint.trim_end_matches('/') && a.model == b.model
}

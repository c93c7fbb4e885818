//! Stagnation beyond the seed's single check: after each tick the detectors
//! see what it did; when they find stagnation, the strategies in
//! `stagnation_strategies` are chosen by the seed's algorithm (diagnose the
//! source → cheapest first → combine classes once the stall escalates) and
//! their mechanisms act ([`crate::cognition::mechanisms`]). The chosen
//! strategies are journaled before they apply
//! ([`crate::cognition::strategy_journal`]); each application is recorded
//! in `process_log` as the journal ends; [`RATE_AFTER_TICKS`] ticks later
//! the novelty before and after becomes a row in `ratings` for the
//! strategy. A strategy that travels (published here or received from a
//! friend) is rated by its item id and the rating is shareable, so friends
//! learn which strategies work; a local one (the seeds) is rated by its row
//! and the rating stays home.
//! The whole state is stored after every tick ([`STAGNATION_CONFIG_KEY`]),
//! so a restart goes on mid-strategy.

use std::collections::VecDeque;
use std::time::Duration;

use porfiry_skills::Language;
use porfiry_skills::cognition::detectors::{Assessment, DetectorConfig, DetectorMemory, Detectors};
use porfiry_skills::cognition::strategy::{Candidate, Mechanism, StrategyClass, choose, rate};
use porfiry_skills::cognition::tick::TickReport;
use porfiry_storage::db::Db;
use porfiry_storage::{
    Concept, Link, ListQuery, LlmEntry, NoteSource, Rating, StagnationStrategy, Store, Stored,
};
use serde::{Deserialize, Serialize};

use crate::cognition::effects::{Effects, EnvironmentReturn, TaskReturn};
use crate::cognition::error::CoreError;
use crate::cognition::mechanisms::{StagnationIo, apply, return_from_environment, return_to_tasks};
use crate::cognition::strategy_journal::StrategyJournal;
use crate::cognition::texts;

/// Ticks after an application before it is rated: long enough for the
/// changed context to show in a few replies, short enough that the rating
/// still belongs to the strategy.
pub const RATE_AFTER_TICKS: u64 = 3;

/// Ticks after an application before another may be chosen: mechanisms
/// need a tick or two to act, and stacking them would blur their ratings.
pub const COOLDOWN_TICKS: u64 = 3;

/// How much "LLM reflex tuning" raises temperature, and its ceiling.
pub const TEMPERATURE_STEP: f64 = 0.4;
/// Highest temperature tuning sets.
pub const MAX_TUNED_TEMPERATURE: f64 = 1.5;
/// The temperature assumed when the model's row sets none.
pub const BASE_TEMPERATURE: f64 = 0.7;
/// How much tuning raises presence_penalty, and its ceiling (OpenAI's range ends at 2).
pub const PRESENCE_STEP: f64 = 0.6;
/// Highest presence_penalty tuning sets.
pub const MAX_PRESENCE_PENALTY: f64 = 2.0;

/// Novelty scores kept for before/after ratings.
const NOVELTY_HISTORY: usize = 32;

/// `config` key of the stored stagnation state ([`Saved`]).
pub const STAGNATION_CONFIG_KEY: &str = "core.stagnation";

/// An application waiting for its rating.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Pending {
    /// What the rating names: the strategy's item id when it travels (its
    /// own published one, or the friend's it came from), so friends can
    /// match it; else the local row.
    target: String,
    shareable: bool,
    tick: u64,
    before: Vec<f64>,
}

/// The stagnation state as stored under [`STAGNATION_CONFIG_KEY`] after
/// every tick: the detectors' windows, pending ratings, the cooldown and the
/// mechanisms' effects (a model switch, raised sampling, hints, an extra
/// pause), so a node the OS killed goes on mid-strategy after a restart.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
struct Saved {
    detectors: DetectorMemory,
    novelty: VecDeque<(u64, f64)>,
    pending: Vec<Pending>,
    recent: VecDeque<i64>,
    cooldown_until: u64,
    last_tick_start: Option<u64>,
    hints: Vec<String>,
    switched: Option<(LlmEntry, u64)>,
    tuned_until: Option<u64>,
    extra_pause_secs: Option<u64>,
    task_return: Option<TaskReturn>,
    environment: Option<EnvironmentReturn>,
    world_checked_ms: Option<u64>,
}

/// Pending ratings kept: one escalation applies at most
/// [`porfiry_skills::cognition::strategy::MAX_COMBINED`] strategies every
/// [`COOLDOWN_TICKS`], so a few escalations' worth is all that can wait.
const MAX_PENDING: usize = 16;

/// Recently applied strategies kept, so the next escalation tries others.
const MAX_RECENT: usize = 4;

/// The core's stagnation state; stored after every tick (see [`Saved`]).
pub struct Stagnation {
    effects: Effects,
    detectors: Detectors,
    novelty: VecDeque<(u64, f64)>,
    pending: Vec<Pending>,
    recent: VecDeque<i64>,
    cooldown_until: u64,
    last_tick_start: Option<u64>,
}

impl Stagnation {
    /// Fresh state.
    pub fn new(language: Language) -> Self {
        Self {
            effects: Effects::new(language),
            detectors: Detectors::new(DetectorConfig::default()),
            novelty: VecDeque::new(),
            pending: Vec::new(),
            recent: VecDeque::new(),
            cooldown_until: 0,
            last_tick_start: None,
        }
    }

    /// The state stored in `db`, or fresh state when none is stored (or it
    /// no longer reads: logged, and the stall is simply seen again).
    pub async fn restore(language: Language, db: &Db) -> Result<Self, CoreError> {
        let saved = match db
            .read(|s: &Store| s.config_get::<Saved>(STAGNATION_CONFIG_KEY))
            .await?
        {
            Ok(saved) => saved.unwrap_or_default(),
            Err(e) => {
                tracing::warn!(error = %e, "stored stagnation state unreadable; starting afresh");
                Saved::default()
            }
        };
        let mut me = Self::new(language);
        me.detectors = Detectors::resume(DetectorConfig::default(), saved.detectors);
        me.novelty = saved.novelty;
        while me.novelty.len() > NOVELTY_HISTORY {
            me.novelty.pop_front();
        }
        me.pending = saved.pending;
        me.pending.truncate(MAX_PENDING);
        me.recent = saved.recent;
        while me.recent.len() > MAX_RECENT {
            me.recent.pop_front();
        }
        me.cooldown_until = saved.cooldown_until;
        me.last_tick_start = saved.last_tick_start;
        me.effects.hints = saved.hints;
        me.effects.switched = saved.switched;
        me.effects.tuned_until = saved.tuned_until;
        me.effects.extra_pause = saved.extra_pause_secs.map(Duration::from_secs);
        me.effects.task_return = saved.task_return;
        me.effects.environment = saved.environment;
        me.effects.world_checked_ms = saved.world_checked_ms;
        Ok(me)
    }

    /// Stores the state (see [`Saved`]).
    pub async fn save(&self, db: &Db, now_ms: u64) -> Result<(), CoreError> {
        let saved = Saved {
            detectors: self.detectors.memory().clone(),
            novelty: self.novelty.clone(),
            pending: self.pending.clone(),
            recent: self.recent.clone(),
            cooldown_until: self.cooldown_until,
            last_tick_start: self.last_tick_start,
            hints: self.effects.hints.clone(),
            switched: self.effects.switched.clone(),
            tuned_until: self.effects.tuned_until,
            extra_pause_secs: self.effects.extra_pause.map(|d| d.as_secs()),
            task_return: self.effects.task_return.clone(),
            environment: self.effects.environment.clone(),
            world_checked_ms: self.effects.world_checked_ms,
        };
        db.write(move |s: &Store| s.config_set(STAGNATION_CONFIG_KEY, &saved, now_ms))
            .await??;
        Ok(())
    }

    /// The prompts the mechanisms left for the next tick.
    pub fn take_hints(&mut self) -> Vec<String> {
        std::mem::take(&mut self.effects.hints)
    }

    /// The pause the radical-pause mechanism added, once.
    pub fn extra_pause(&mut self) -> Option<Duration> {
        self.effects.extra_pause.take()
    }

    /// The switched-to model while the switch lasts.
    pub fn switched_model(&self, tick: u64) -> Option<&LlmEntry> {
        self.effects
            .switched
            .as_ref()
            .filter(|(_, until)| tick < *until)
            .map(|(entry, _)| entry)
    }

    /// `entry` with raised sampling while tuning lasts, else as it is.
    pub fn tuned(&self, mut entry: LlmEntry, tick: u64) -> LlmEntry {
        if self.effects.tuned_until.is_some_and(|until| tick < until) {
            let t = entry.config.temperature.unwrap_or(BASE_TEMPERATURE);
            entry.config.temperature = Some((t + TEMPERATURE_STEP).min(MAX_TUNED_TEMPERATURE));
            let p = entry.config.presence_penalty.unwrap_or(0.0);
            entry.config.presence_penalty = Some((p + PRESENCE_STEP).min(MAX_PRESENCE_PENALTY));
        }
        entry
    }

    /// Watches the finished tick; rates due applications; applies a
    /// strategy when a detector finds stagnation, several when the stall
    /// escalates.
    pub async fn after_tick(
        &mut self,
        report: &TickReport,
        io: &mut StagnationIo<'_>,
    ) -> Result<Option<Assessment>, CoreError> {
        let since = self.last_tick_start.replace(io.clock.now().unix_ms());
        self.return_to_tasks_when_due(io).await?;
        self.return_from_environment_when_due(report.tick, io)
            .await?;
        let Some(mut observation) = report.observation.clone() else {
            return Ok(None);
        };
        if !observation.reply.trim().is_empty() {
            let reply = vec![observation.reply.clone()];
            observation.embedding = io
                .embedder
                .embed(io.llm, &reply, report.tick)
                .await
                .and_then(|mut v| v.pop());
        }
        let (growth, stimuli) = count_since(io.db, since).await?;
        observation.graph_growth = growth;
        observation.stimuli = stimuli;
        self.novelty.push_back((report.tick, observation.novelty));
        while self.novelty.len() > NOVELTY_HISTORY {
            self.novelty.pop_front();
        }
        let assessment = self.detectors.observe(observation);
        if !assessment.signals.is_empty() {
            io.trace.line(format_args!(
                "stagnation: {:?} stall={} escalate={}",
                assessment.signals, assessment.stall, assessment.escalate
            ));
        }
        self.rate_due(report.tick, io).await?;
        // Seed 003: stagnation found → diagnose → the cheap strategy of its
        // class first; a stall that goes on (escalated) combines classes.
        if !assessment.signals.is_empty() && report.tick >= self.cooldown_until {
            self.respond(report, &assessment, io).await?;
        }
        Ok(Some(assessment))
    }

    /// The task switch's return, once its time came: the frozen tasks are
    /// pinned again and the next prompt reminds the model of them.
    async fn return_to_tasks_when_due(&mut self, io: &StagnationIo<'_>) -> Result<(), CoreError> {
        let now = io.clock.now().unix_ms();
        let Some(back) = self.effects.task_return.clone().filter(|b| now >= b.at_ms) else {
            return Ok(());
        };
        self.effects.task_return = None;
        let titles = io
            .db
            .write(move |s: &Store| return_to_tasks(s, &back, now))
            .await??;
        if !titles.is_empty() {
            let named: Vec<String> = titles.iter().map(|t| format!("\"{t}\"")).collect();
            io.trace
                .line(format_args!("stagnation: back to {}", named.join(", ")));
            self.effects.hints.push(texts::task_return_hint(
                self.effects.language,
                &named.join(", "),
            ));
        }
        Ok(())
    }

    /// The change of setting's end, once its ticks passed: the usual notes
    /// mode comes back (unless the model chose another meanwhile) and the
    /// next prompt says so.
    async fn return_from_environment_when_due(
        &mut self,
        tick: u64,
        io: &StagnationIo<'_>,
    ) -> Result<(), CoreError> {
        let Some(back) = self
            .effects
            .environment
            .clone()
            .filter(|b| tick + 1 >= b.until_tick)
        else {
            return Ok(());
        };
        self.effects.environment = None;
        let now = io.clock.now().unix_ms();
        let restored = io
            .db
            .write(move |s: &Store| {
                return_from_environment(s, &back.clone(), now).map(|r| (r, back))
            })
            .await??;
        if let (true, back) = restored {
            let auto = matches!(
                back.previous,
                porfiry_skills::cognition::NotesMode::Auto { .. }
            );
            let lang = self.effects.language;
            let mode = texts::notes_mode_name(lang, auto);
            io.trace
                .line(format_args!("stagnation: back to notes mode {mode}"));
            self.effects
                .hints
                .push(texts::environment_return_hint(lang, mode));
        }
        Ok(())
    }

    /// Rates the applications old enough.
    async fn rate_due(&mut self, tick: u64, io: &StagnationIo<'_>) -> Result<(), CoreError> {
        let (due, waiting): (Vec<Pending>, Vec<Pending>) = self
            .pending
            .drain(..)
            .partition(|p| tick >= p.tick + RATE_AFTER_TICKS);
        self.pending = waiting;
        for p in due {
            let after: Vec<f64> = self
                .novelty
                .iter()
                .filter(|(t, _)| *t > p.tick)
                .map(|(_, n)| *n)
                .collect();
            let score = rate(&p.before, &after);
            let comment = format!(
                "novelty before {:.2}, after {:.2} ({} ticks)",
                mean(&p.before),
                mean(&after),
                after.len()
            );
            let now = io.clock.now().unix_ms();
            let row = Rating {
                target: p.target.clone(),
                score,
                comment,
                shareable: p.shareable,
                ..Default::default()
            };
            io.db.write(move |s: &Store| s.add(&row, now)).await??;
        }
        Ok(())
    }

    /// Chooses and applies strategies for a stall (one, or several from
    /// different classes once it escalated).
    async fn respond(
        &mut self,
        report: &TickReport,
        assessment: &Assessment,
        io: &mut StagnationIo<'_>,
    ) -> Result<(), CoreError> {
        let rows = io.db.read(|s: &Store| strategies_with_ratings(s)).await??;
        let candidates: Vec<Candidate> = rows.iter().map(|(c, _)| c.clone()).collect();
        let recent: Vec<i64> = self.recent.iter().copied().collect();
        let chosen: Vec<&(Candidate, About)> = choose(&candidates, assessment, &recent)
            .into_iter()
            .filter_map(|id| rows.iter().find(|(c, _)| c.id == id))
            .collect();
        if chosen.is_empty() {
            return Ok(());
        }
        let signals = format!("{:?}", assessment.signals);
        let commands: Vec<serde_json::Value> = chosen
            .iter()
            .map(|(c, about)| strategy_command(c, about, &signals))
            .collect();
        // Journaled before the first mechanism acts: a node stopped in
        // between records the strategies at its next start.
        let mut journal =
            StrategyJournal::begin(io.db, io.clock, report.tick, io.model, &commands).await?;
        let before: Vec<f64> = self.novelty.iter().map(|(_, n)| *n).collect();
        let mut applied = false;
        for (candidate, about) in chosen {
            let name = &about.name;
            let Some(done) = apply(&mut self.effects, candidate.mechanism, report, io).await?
            else {
                journal.passed_over(io.db, io.clock).await?;
                io.trace.line(format_args!(
                    "stagnation: {name} ({}) does not apply now",
                    candidate.mechanism.as_str()
                ));
                continue;
            };
            journal
                .applied(io.db, io.clock, &format!("applied {name}: {done}"))
                .await?;
            io.trace
                .line(format_args!("stagnation: applied {name}: {done}"));
            if self.pending.len() >= MAX_PENDING {
                // The oldest goes unrated rather than the queue growing.
                self.pending.remove(0);
            }
            self.pending.push(Pending {
                target: about.target.clone(),
                shareable: about.travels,
                tick: report.tick,
                before: before.clone(),
            });
            self.recent.push_back(candidate.id);
            while self.recent.len() > MAX_RECENT {
                self.recent.pop_front();
            }
            applied = true;
        }
        // Each application's row, in the transaction that ends the journal.
        journal
            .record(io.db, self.effects.language, io.clock.now().unix_ms())
            .await?;
        // The cooldown follows an application only: when nothing could act
        // (no strategy of the diagnosed class, or none applies now) the next
        // tick may try again, as the diagnosis may have changed.
        if applied {
            self.cooldown_until = report.tick + COOLDOWN_TICKS;
        }
        Ok(())
    }
}

/// A strategy's `stagnation_strategy` row `command`: which one, and why.
fn strategy_command(c: &Candidate, about: &About, signals: &str) -> serde_json::Value {
    serde_json::json!({
        "strategy": c.id,
        "name": about.name,
        "class": c.class.as_str(),
        "mechanism": c.mechanism.as_str(),
        "signals": signals,
    })
}

/// What a rating needs to know about a strategy.
struct About {
    name: String,
    /// The rating's target (see [`Pending::target`]).
    target: String,
    /// Whether the strategy travels, so its rating should too.
    travels: bool,
}

/// The strategies as candidates (mechanism from the `mechanism:<name>` tag;
/// rows without one are the model's own notes and are not applied
/// automatically), with what their ratings name.
fn strategies_with_ratings(s: &Store) -> porfiry_storage::Result<Vec<(Candidate, About)>> {
    let rows: Vec<Stored<StagnationStrategy>> = s.list(&ListQuery {
        limit: Some(porfiry_storage::limits::MAX_LIST_LIMIT),
        ..Default::default()
    })?;
    let mut out = Vec::new();
    for r in rows {
        let Some(mechanism) = Mechanism::from_tags(&r.row.tags) else {
            continue;
        };
        let Some(class) = StrategyClass::parse(&r.row.class) else {
            continue;
        };
        let item = r.row.item_id.or(r.row.origin_item_id);
        let target = match item {
            Some(item) => item.to_string(),
            None => format!("stagnation_strategies:{}", r.id),
        };
        let rating = s.rating_summary(&target)?.map(|(mean, _)| mean);
        out.push((
            Candidate {
                id: r.id,
                class,
                mechanism,
                cost: r.row.cost,
                rating,
            },
            About {
                name: r.row.name,
                target,
                travels: item.is_some(),
            },
        ));
    }
    Ok(out)
}

/// Concepts and links added, and notes from outside the core (the user,
/// friends, the CLI), since `since` (Unix ms); none before the first tick.
async fn count_since(
    db: &porfiry_storage::db::Db,
    since: Option<u64>,
) -> Result<(u32, u32), CoreError> {
    let Some(since) = since else {
        return Ok((1, 1));
    };
    Ok(db
        .read(move |s: &Store| -> porfiry_storage::Result<(u32, u32)> {
            // Counts, not rows: after a catch-up thousands of notes (tens of
            // KB each) may be new, and only how many matters.
            let growth = s.count_since::<Concept>(since)? + s.count_since::<Link>(since)?;
            let stimuli = s.notes_count_since(since, NoteSource::Llm)?;
            Ok((
                u32::try_from(growth).unwrap_or(u32::MAX),
                u32::try_from(stimuli).unwrap_or(u32::MAX),
            ))
        })
        .await??)
}

fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        0.0
    } else {
        xs.iter().sum::<f64>() / xs.len() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use porfiry_toolsets::test_support::store_tools;

    #[tokio::test]
    async fn a_switch_raised_sampling_hints_and_pending_ratings_survive_a_restart() {
        let (_dir, tools) = store_tools(Language::En);
        let mut before = Stagnation::new(Language::En);
        let other = LlmEntry {
            name: "other".into(),
            endpoint: "http://127.0.0.1:9/v1".into(),
            model: "o".into(),
            ..Default::default()
        };
        before.effects.switched = Some((other.clone(), 9));
        before.effects.tuned_until = Some(8);
        before.effects.hints = vec!["look back".into()];
        before.effects.extra_pause = Some(Duration::from_secs(1_800));
        before.pending.push(Pending {
            target: "stagnation_strategies:3".into(),
            shareable: false,
            tick: 5,
            before: vec![0.0, 0.1],
        });
        before.cooldown_until = 8;
        before.save(&tools.db, 1_000).await.unwrap();

        let mut after = Stagnation::restore(Language::En, &tools.db).await.unwrap();
        assert_eq!(
            after.switched_model(7).map(|e| e.name.as_str()),
            Some("other")
        );
        assert_eq!(
            after.switched_model(9),
            None,
            "the switch still ends on time"
        );
        let tuned = after.tuned(other.clone(), 7);
        assert_eq!(
            tuned.config.temperature,
            Some(BASE_TEMPERATURE + TEMPERATURE_STEP)
        );
        assert_eq!(after.tuned(other, 8).config.temperature, None, "restored");
        assert_eq!(after.take_hints(), ["look back"]);
        assert_eq!(after.extra_pause(), Some(Duration::from_secs(1_800)));
        assert_eq!(after.pending, before.pending);
        assert_eq!(after.cooldown_until, 8);
    }

    #[tokio::test]
    async fn an_unreadable_stored_state_starts_afresh() {
        let (_dir, tools) = store_tools(Language::En);
        tools
            .db
            .write(|s| s.config_set(STAGNATION_CONFIG_KEY, "garbage", 1))
            .await
            .unwrap()
            .unwrap();
        let fresh = Stagnation::restore(Language::En, &tools.db).await.unwrap();
        assert!(fresh.pending.is_empty() && fresh.effects.switched.is_none());
    }
}

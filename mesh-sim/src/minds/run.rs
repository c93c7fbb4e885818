//! One minds world on one seed: every mind's database and core, the
//! replication run of `mesh-sim run` under them, and the loop on the
//! shared virtual clock. At each tick time the replication run advances to
//! it, friends' items are handed to the minds they reached, every mind due
//! ticks (concurrently: each has its own database threads), and the new
//! items each mind's publishing pass signed go to its engine, in mind order
//! so the run repeats exactly. Model-backed minds' calls go to the tape (or
//! come from it) through [`ModelCalls`], a step at a time, in mind order.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, RwLock};

use porfiry_skills::ManualClock;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use serde::Serialize;

use porfiry_protocol::Audience;

use super::calls::ModelCalls;
use super::mind::{Mind, MindError, MindSetup, StepOut, Truth, is_knowhow, is_strategy};
use super::scenario::MindsScenario;
use super::tape::{TapeError, WorldKey};
use super::taped::TapedLlm;
use crate::faults::FaultPlan;
use crate::limits::EPOCH_MS;
use crate::sim::live::LiveSim;
use crate::world::World;

/// Mixed into the run's seed for the minds' own generators, so they are
/// streams of their own, apart from every stream `mesh-sim run` draws.
const MIND_SEED_SALT: u64 = 0x6D69_6E64_735F_7631;

/// The adversaries' draw: a stream above every mind's own (at most
/// [`MAX_MINDS`](super::scenario::MAX_MINDS)).
const ADVERSARY_STREAM: u64 = 1 << 32;

/// Minds started at once: each start creates and seeds a database (a few
/// ms of disk work), and 64 keeps both cores busy without opening
/// thousands of files in one burst.
const START_WAVE: usize = 64;

/// Minds ticking at once: each tick hops between its task and its
/// database's threads a dozen times, so a few in flight keep both cores
/// busy while more only add thread switches and allocator contention
/// (measured in `docs/benchmarks.md`).
const IN_FLIGHT: usize = 8;

/// Why a minds world could not run.
#[derive(Debug, thiserror::Error)]
pub enum MindsError {
    /// The mesh part could not be built.
    #[error(transparent)]
    Sim(#[from] crate::SimError),
    /// A mind failed.
    #[error(transparent)]
    Mind(#[from] MindError),
    /// The runtime or the temporary folder could not be made, or a task died.
    #[error("minds runtime: {0}")]
    Runtime(String),
    /// The tape could not be written, or does not match the run.
    #[error(transparent)]
    Tape(#[from] TapeError),
    /// A `[[models]]` model could not be opened.
    #[error("model {model:?} ({at}): {detail}")]
    Model {
        /// Its name in the scenario.
        model: String,
        /// Its URL or file.
        at: String,
        /// What failed.
        detail: String,
    },
}

/// The figures `result.json` holds for one world.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figures {
    /// Minds in the world.
    pub minds: usize,
    /// Ticks run, all minds together.
    pub ticks: u64,
    /// Share of those ticks whose reply was a loop.
    pub stagnant_tick_share: f64,
    /// Loops begun.
    pub episodes: u64,
    /// Mean looping ticks before an escape, over the loops that ended;
    /// `null` when none did.
    pub mean_ticks_to_escape: Option<f64>,
    /// Strategy items the minds handed to their engines.
    pub strategies_shared: u64,
    /// Bytes delivered on all links.
    pub wire_bytes: u64,
}

/// One row of `timeseries.csv`, at one tick time.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Virtual ms since the start.
    pub time_ms: u64,
    /// Minds that ticked then.
    pub ticked: u64,
    /// Of those, minds whose reply was a loop.
    pub looping: u64,
    /// Loops begun so far.
    pub episodes: u64,
    /// Loops ended so far.
    pub escapes: u64,
    /// Strategy items handed to engines so far.
    pub strategies_shared: u64,
    /// Strategies the cores applied so far.
    pub applied: u64,
    /// Friends' strategies adopted so far.
    pub adopted: u64,
    /// Of those, adversaries' useless ones.
    pub adopted_useless: u64,
    /// Bytes delivered so far.
    pub wire_bytes: u64,
}

/// A world's figures and time series.
#[derive(Debug, Clone)]
pub struct WorldRun {
    /// The figures.
    pub figures: Figures,
    /// One row per tick time.
    pub series: Vec<Row>,
    /// Where the know-how went (not in `result.json`).
    pub reach: Reach,
}

/// Know-how deliveries to minds, over the whole run: how far the audience
/// the minds publish to (`policy.audience`) let it travel.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reach {
    /// Strategies, thinking methods and ratings delivered to minds.
    pub knowhow: u64,
    /// Of those, ones whose author is not a friend of the mind they
    /// reached (relayed on by someone else).
    pub beyond_friends: u64,
}

/// Running totals of a world.
#[derive(Default)]
struct Totals {
    ticks: u64,
    looping: u64,
    episodes: u64,
    escapes: u64,
    escape_ticks: u64,
    strategies: u64,
    applied: u64,
    adopted: u64,
    adopted_useless: u64,
}

/// Runs `scenario` on `seed`, with know-how sharing on or off; `watch` is
/// told the virtual time after each tick time (for a progress bar).
/// Model-backed minds call their models live, unrecorded.
pub fn run_world(
    scenario: &MindsScenario,
    seed: u64,
    sharing: bool,
    watch: &mut dyn FnMut(u64),
) -> Result<WorldRun, MindsError> {
    run_world_with(scenario, seed, sharing, &ModelCalls::live(), watch)
}

/// [`run_world`] with model-backed minds' calls going through `calls`
/// (recorded, or answered from a tape).
pub fn run_world_with(
    scenario: &MindsScenario,
    seed: u64,
    sharing: bool,
    calls: &ModelCalls,
    watch: &mut dyn FnMut(u64),
) -> Result<WorldRun, MindsError> {
    let models = calls.minds(scenario, WorldKey { seed, sharing })?;
    let mesh = scenario.mesh();
    let world = World::build(&mesh, seed)?;
    let audience = scenario.policy.audience.node_audience(&world)?;
    let authors: HashMap<&str, usize> = world
        .peers
        .iter()
        .enumerate()
        .map(|(i, p)| (p.as_str(), i))
        .collect();
    let plan = FaultPlan::draw(&mesh, seed, &world.phones);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| MindsError::Runtime(e.to_string()))?;
    let dir = tempfile::tempdir().map_err(|e| MindsError::Runtime(e.to_string()))?;
    let mut sim = LiveSim::new(&mesh, seed, &world, &plan)?;
    let start = time::OffsetDateTime::from_unix_timestamp(
        i64::try_from(EPOCH_MS / 1_000).unwrap_or(i64::MAX),
    )
    .map_err(|e| MindsError::Runtime(e.to_string()))?;
    let clock = ManualClock::at(start, "UTC");
    let policy = Arc::new(scenario.policy.clone());
    let truth: Truth = Arc::new(RwLock::new(BTreeMap::new()));
    let tick_ms = scenario.tick_ms;
    let in_flight = Arc::new(tokio::sync::Semaphore::new(IN_FLIGHT));
    runtime.block_on(async {
        let mut minds = start_minds(
            scenario,
            WorldKey { seed, sharing },
            &audience,
            &world,
            &clock,
            dir.path(),
            models,
        )
        .await?;
        // A model-backed mind writes what its model writes: never a cheat.
        for i in adversaries(scenario, seed) {
            if let Some(Some(m)) = minds.get_mut(i)
                && !m.model_backed()
            {
                m.adversary = true;
            }
        }
        let mut due = vec![0u64; minds.len()];
        let mut totals = Totals::default();
        let mut reach = Reach::default();
        let mut series = Vec::new();
        let mut t = 0u64;
        while t < scenario.duration_ms {
            sim.advance_to(t);
            for (node, item) in sim.take_arrivals() {
                if is_knowhow(&item) {
                    reach.knowhow += 1;
                    let friend = authors
                        .get(item.author_peer_id())
                        .is_some_and(|&a| world.graph.neighbours(node).any(|x| x == a));
                    reach.beyond_friends += u64::from(!friend);
                }
                if let Some(Some(m)) = minds.get_mut(node) {
                    m.inbox.push(item);
                }
            }
            let batch: Vec<usize> = (0..minds.len()).filter(|&i| due[i] <= t).collect();
            let mut tasks = Vec::with_capacity(batch.len());
            for &i in &batch {
                let Some(mut mind) = minds[i].take() else {
                    continue;
                };
                let policy = policy.clone();
                let truth = truth.clone();
                let in_flight = in_flight.clone();
                tasks.push(tokio::spawn(async move {
                    let permit = in_flight.acquire_owned().await;
                    let out = mind.step(t, tick_ms, &policy, &truth).await;
                    drop(permit);
                    (mind, out)
                }));
            }
            let mut row = Row::at(t);
            let mut step_calls = Vec::new();
            for (&i, task) in batch.iter().zip(tasks) {
                let (mind, out) = task
                    .await
                    .map_err(|e| MindsError::Runtime(format!("mind {i}: {e}")))?;
                step_calls.extend(mind.take_calls());
                minds[i] = Some(mind);
                let out: StepOut = out?;
                due[i] = out.next_ms;
                row.ticked += 1;
                row.looping += u64::from(out.looping);
                totals.ticks += 1;
                totals.looping += u64::from(out.looping);
                totals.episodes += u64::from(out.began);
                totals.applied += out.applied;
                totals.adopted += out.adopted;
                totals.adopted_useless += out.adopted_useless;
                if let Some(n) = out.escaped {
                    totals.escapes += 1;
                    totals.escape_ticks += n;
                }
                // Minds still ticking in this batch may read `truth` while
                // this writes: harmless, as a strategy written now reaches
                // any store (its own included) only at a later tick.
                if !out.invented.is_empty() {
                    let mut known = truth
                        .write()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    known.extend(out.invented);
                }
                for item in out.items {
                    let strategy = is_strategy(&item);
                    if sim.publish(i, item) && strategy {
                        totals.strategies += 1;
                    }
                }
            }
            calls.after_step(step_calls)?;
            row.episodes = totals.episodes;
            row.escapes = totals.escapes;
            row.strategies_shared = totals.strategies;
            row.applied = totals.applied;
            row.adopted = totals.adopted;
            row.adopted_useless = totals.adopted_useless;
            row.wire_bytes = sim.wire_bytes();
            series.push(row);
            watch(t);
            t += tick_ms;
            clock.advance_ms(i64::try_from(tick_ms).unwrap_or(i64::MAX));
        }
        sim.advance_to(scenario.duration_ms);
        tracing::debug!(events = sim.events(), "minds world done");
        let figures = Figures {
            minds: minds.len(),
            ticks: totals.ticks,
            stagnant_tick_share: ratio(totals.looping, totals.ticks).unwrap_or(0.0),
            episodes: totals.episodes,
            mean_ticks_to_escape: ratio(totals.escape_ticks, totals.escapes),
            strategies_shared: totals.strategies,
            wire_bytes: sim.wire_bytes(),
        };
        Ok(WorldRun {
            figures,
            series,
            reach,
        })
    })
}

impl Row {
    fn at(time_ms: u64) -> Row {
        Row {
            time_ms,
            ticked: 0,
            looping: 0,
            episodes: 0,
            escapes: 0,
            strategies_shared: 0,
            applied: 0,
            adopted: 0,
            adopted_useless: 0,
            wire_bytes: 0,
        }
    }
}

/// `a / b`, or `None` when `b` is 0.
fn ratio(a: u64, b: u64) -> Option<f64> {
    // Counts of ticks: far below 2^53, exact in f64.
    (b > 0).then(|| a as f64 / b as f64)
}

/// Which minds are adversaries: `policy.adversaries` of them, drawn on a
/// stream of their own.
fn adversaries(scenario: &MindsScenario, seed: u64) -> Vec<usize> {
    let n = scenario.minds();
    // A share of at most 10,000 minds: exact in f64, and rounds into range.
    let k = ((scenario.policy.adversaries * n as f64).round() as usize).min(n);
    if k == 0 {
        return Vec::new();
    }
    let mut rng = ChaCha20Rng::seed_from_u64(seed ^ MIND_SEED_SALT);
    rng.set_stream(ADVERSARY_STREAM);
    rand::seq::index::sample(&mut rng, n, k).into_vec()
}

/// Starts every mind, [`START_WAVE`] at a time, each node's know-how
/// audience set to `audience`, each with its model from `models` (`None`:
/// the scripted policy).
async fn start_minds(
    scenario: &MindsScenario,
    at: WorldKey,
    audience: &Audience,
    world: &World,
    clock: &ManualClock,
    dir: &std::path::Path,
    mut models: Vec<Option<Arc<TapedLlm>>>,
) -> Result<Vec<Option<Mind>>, MindsError> {
    let n = scenario.minds();
    let mut minds = Vec::with_capacity(n);
    for wave in (0..n).collect::<Vec<_>>().chunks(START_WAVE) {
        let mut tasks = Vec::with_capacity(wave.len());
        for &i in wave {
            let path = dir.join(format!("mind-{i}.db"));
            let key = world.keys[i].clone();
            let clock = clock.clone();
            let mut rng = ChaCha20Rng::seed_from_u64(at.seed ^ MIND_SEED_SALT);
            rng.set_stream(i as u64);
            let setup = MindSetup {
                index: i,
                key,
                clock,
                rng,
                tick_ms: scenario.tick_ms,
                sharing: at.sharing,
                model: models.get_mut(i).and_then(Option::take),
            };
            let audience = audience.clone();
            tasks.push(tokio::spawn(async move {
                let mind = Mind::start(&path, setup).await?;
                super::audience::apply(&mind, audience).await?;
                Ok::<Mind, MindError>(mind)
            }));
        }
        for task in tasks {
            let mind = task
                .await
                .map_err(|e| MindsError::Runtime(e.to_string()))??;
            minds.push(Some(mind));
        }
    }
    Ok(minds)
}

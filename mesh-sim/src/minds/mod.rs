//! `mesh-sim minds`: many cognitive cores on one virtual clock, sharing
//! anti-stagnation strategies and their ratings through the real
//! replication engine (issue 48).
//!
//! Every mind is a fresh node's SQLite database with the daemon's own
//! `CognitiveCore` over it (the pure tick, the command handling, the
//! stagnation detectors, strategy choice and ratings), a seeded scripted
//! model ([`policy`]) or a real one ([`models`]; its calls taped, [`tape`])
//! and one shared manual clock. What the node's own
//! publishing pass signs goes to that node's engine in the same
//! discrete-event run `mesh-sim run` uses (graph, links, faults), and what
//! arrives is merged by the node's own merge code. Nothing of the core or of
//! replication is re-implemented here.
//!
//! - [`scenario`]: the TOML and its checks.
//! - [`models`]: `[[models]]`, the real models some minds use instead.
//! - [`audience`]: who the minds' know-how goes to (`policy.audience`).
//! - [`policy`]: the scripted model.
//! - `taped`: a model-backed mind's model, recorded or replayed.
//! - [`calls`]: how a run's model-backed minds reach their models.
//! - [`tape`]: the tape's format, writing and replaying it.
//! - [`mind`]: one mind and its tick (`asker`: its "ask friends").
//! - [`knowhow`]: sharing what worked, adopting friends' strategies, adversaries.
//! - [`run`]: one world on one seed.
//! - [`result`]: twins, seeds, `result.json`, `timeseries.csv`.
//! - [`sweep`]: `sweep` over parameters and seeds in shards, and `merge`.

pub(crate) mod asker;
pub mod audience;
pub mod calls;
pub mod knowhow;
pub mod mind;
pub mod models;
pub mod policy;
pub mod result;
pub mod run;
pub mod scenario;
pub mod sweep;
pub mod tape;
pub(crate) mod taped;

pub use calls::ModelCalls;
pub use models::ModelSpec;
pub use result::{
    MindsOptions, MindsOutcome, MindsResult, run_minds, run_minds_with, write_outcome,
};
pub use run::{Figures, MindsError, run_world, run_world_with};
pub use scenario::{MindsScenario, MindsScenarioError};
pub use tape::{TAPE_FILE, TapeError};

//! `mesh-sim minds`: many cognitive cores on one virtual clock, sharing
//! anti-stagnation strategies and their ratings through the real
//! replication engine (issue 48).
//!
//! Every mind is a fresh node's SQLite database with the daemon's own
//! `CognitiveCore` over it (the pure tick, the command handling, the
//! stagnation detectors, strategy choice and ratings), a seeded scripted
//! model ([`policy`]) and one shared manual clock. What the node's own
//! publishing pass signs goes to that node's engine in the same
//! discrete-event run `mesh-sim run` uses (graph, links, faults), and what
//! arrives is merged by the node's own merge code. Nothing of the core or of
//! replication is re-implemented here.
//!
//! - [`scenario`]: the TOML and its checks.
//! - [`audience`]: who the minds' know-how goes to (`policy.audience`).
//! - [`policy`]: the scripted model.
//! - [`mind`]: one mind and its tick.
//! - [`knowhow`]: sharing what worked, adopting friends' strategies, adversaries.
//! - [`run`]: one world on one seed.
//! - [`result`]: twins, seeds, `result.json`, `timeseries.csv`.
//! - [`sweep`]: `sweep` over parameters and seeds in shards, and `merge`.

pub mod audience;
pub mod knowhow;
pub mod mind;
pub mod policy;
pub mod result;
pub mod run;
pub mod scenario;
pub mod sweep;

pub use result::{MindsOptions, MindsOutcome, MindsResult, run_minds, write_outcome};
pub use run::{Figures, MindsError, run_world};
pub use scenario::{MindsScenario, MindsScenarioError};

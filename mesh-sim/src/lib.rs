//! mesh-sim: a discrete-event simulator that drives many copies of the real
//! Porfiry replication engine (`porfiry_protocol::engine`) over simulated
//! links with latency, loss, bandwidth, partitions, phone churn and
//! crash-restarts, and measures what arrives where and at what cost.
//!
//! It never re-implements replication: it only moves the engines' output
//! messages (encoded with the real wire codec, verified at the receiving
//! edge), fires their timers, and answers their storage requests from an
//! in-memory map per node that survives a crash.
//!
//! Entry points: [`Scenario::from_toml`] → [`run`] → [`Report`], then
//! [`output::write_all`] for `result.json`, `timeseries.csv` and
//! `delivery.svg`. [`minds`] runs cognitive cores over the same run
//! (`mesh-sim minds`).

pub mod clubs;
pub mod error;
pub mod faults;
pub mod graph;
pub mod items;
pub mod limits;
pub mod link;
pub mod link_queue;
pub mod metrics;
pub mod minds;
mod node;
pub mod output;
pub mod plot;
pub mod progress;
mod queue;
pub mod redundancy;
pub mod report;
pub mod rng;
pub mod scenario;
mod scenario_check;
mod scenario_scale;
mod sim;
pub mod trace;
mod verify_cache;
pub mod world;

pub use error::SimError;
pub use report::Report;
pub use scenario::Scenario;
pub use sim::{Outcome, run, run_outcome, run_traced, run_watched};
pub use world::World;

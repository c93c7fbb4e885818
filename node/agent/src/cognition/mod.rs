//! The HMP cognitive core's IO glue (seed 003): it loads what a tick needs
//! from SQLite, calls the models, runs the validated commands through the
//! node's toolset registry and records the tick. The decisions themselves
//! live in `porfiry_skills::cognition` (the tick machine, prompt budget,
//! parsers, detectors, votes, strategy choice).
//!
//! - [`core`]: [`CognitiveCore`] — one tick, the run loop.
//! - [`load`], [`record`]: the tick's reads and its one write transaction.
//! - [`reflect`], [`models`]: model calls and the clients behind them.
//! - [`run_commands`]: commands through the registry, and `help`.
//! - [`wait`]: the pause and idle mode's awaited wake-ups (on
//!   [`CoreEvents`], which the mesh sends too).
//! - [`stagnation`], [`mechanisms`], [`effects`]: detectors, strategy choice,
//!   acting, rating, and what acting leaves for the next ticks. What a fresh
//!   node holds (prompts, strategies, methods) is `porfiry_mesh::seed`, written
//!   when a data dir is created.
//! - [`requested`], [`trace`], [`texts`], [`limits`], [`error`].

pub mod asker;
pub mod core;
pub mod effects;
pub mod error;
pub mod limits;
pub mod load;
pub mod mechanisms;
pub mod models;
pub mod record;
pub mod reflect;
pub mod requested;
pub mod run_commands;
pub mod stagnation;
pub mod texts;
pub mod trace;
pub mod wait;

pub use asker::FriendsAsker;
pub use core::{CognitiveCore, CoreConfig, CoreParts, TickDone};
pub use error::CoreError;
pub use porfiry_mesh::events::{CoreEvent, CoreEvents};
pub use trace::Trace;

//! The HMP cognitive core's IO glue (seed 003): it loads what a tick needs
//! from SQLite, calls the models, runs the validated commands through the
//! node's toolset registry and records the tick. The decisions themselves
//! live in `porfiry_skills::cognition` (the tick machine, prompt budget,
//! parsers, detectors, votes, strategy choice).
//!
//! - [`core`]: [`CognitiveCore`] — one tick, the run loop.
//! - [`load`], [`record`]: the tick's reads and its one write transaction.
//! - [`journal`]: the write-ahead journal of a tick's commands, and the
//!   recording at start of a tick the node stopped in; [`strategy_journal`]:
//!   the same journal of the anti-stagnation reflex's strategies.
//! - [`reflect`], [`models`]: model calls and the clients behind them.
//! - [`run_commands`]: commands through the registry, and `help`.
//! - [`wait`]: the pause and idle mode's awaited wake-ups (on
//!   [`CoreEvents`], which the mesh sends too).
//! - [`stagnation`], [`mechanisms`], [`effects`]: detectors, strategy choice,
//!   acting, rating, and what acting leaves for the next ticks. What a fresh
//!   node holds (prompts, strategies, methods) is `porfiry_mesh::seed`, written
//!   when a data dir is created.
//! - [`embedder`]: embeddings from the tick's model where it has them.
//! - [`advice`]: the validator warning said when the core starts.
//! - [`mesh_interact`]: the core's question to friends, answers in process_log.
//! - [`requested`], [`trace`], [`texts`], [`limits`], [`error`].

pub mod advice;
pub mod asker;
pub(crate) mod core;
pub(crate) mod effects;
pub(crate) mod embedder;
pub(crate) mod error;
pub mod journal;
pub(crate) mod limits;
pub(crate) mod load;
pub(crate) mod mechanisms;
pub mod mesh_interact;
pub mod models;
pub(crate) mod record;
pub(crate) mod reflect;
pub(crate) mod requested;
pub(crate) mod run_commands;
pub(crate) mod stagnation;
pub(crate) mod strategy_journal;
pub(crate) mod texts;
pub(crate) mod trace;
pub mod wait;

pub use asker::FriendsAsker;
pub use core::{CognitiveCore, CoreConfig, CoreParts, TickDone};
pub use error::CoreError;
pub use mechanisms::{CORE_FEEDS_KEY, READING_TAG};
pub use porfiry_mesh::events::{CoreEvent, CoreEvents};
pub use stagnation::{COOLDOWN_TICKS, RATE_AFTER_TICKS};
pub use trace::Trace;

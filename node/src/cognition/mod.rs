//! The HMP cognitive core's IO glue (seed 003): it loads what a tick needs
//! from SQLite, calls the models, runs the validated commands through the
//! node's toolset registry and records the tick. The decisions themselves
//! live in `porfiry_skills::cognition`.
//!
//! - [`events`]: what wakes an idle core (a finished process, a new note).

pub mod events;

pub use events::{CoreEvent, CoreEvents};

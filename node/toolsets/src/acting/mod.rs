//! The acting sets of the HMP command catalogue (seed 003): `process`
//! (external programs from an allow-list), `cycle` (the model steers its
//! own thinking cycle) and `llm` (the model registry: list, select, tune,
//! background tasks and multi-voice questions). They share the background
//! [`jobs`] (so `process_stop` stops a program or a model task alike) and
//! are registered together by [`register_acting_sets`].
//!
//! Files: [`process`] and [`process_run`] (the set and one run), [`fetch`]
//! and [`readable`] (`process_fetch`: one allowed GET and its text), [`cycle`]
//! and [`cycle_parse`] (the set and its argument grammar), [`llm_tools`]
//! and [`llm_jobs`] (the set and its model calls), [`jobs`] (running
//! state of `process_log` rows), [`common`] (shared helpers), [`texts`]
//! (every model-visible text, English and Russian).

pub mod common;
pub mod cycle;
pub mod cycle_parse;
pub mod fetch;
pub mod jobs;
pub mod llm_jobs;
pub mod llm_tools;
pub mod process;
pub mod process_run;
pub mod readable;
pub mod texts;

#[cfg(any(test, feature = "test-support"))]
pub mod test_support;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use porfiry_skills::{RegistryError, ToolsetRegistry};

pub use cycle::CycleToolset;
pub use fetch::PROCESS_ALLOW_URLS_KEY;
pub use jobs::{Jobs, RUNNING_STATUS, close_orphans};
pub use llm_tools::{LlmJobLimits, LlmToolset};
pub use process::{PROCESS_ALLOW_KEY, PROCESS_FETCH, ProcessToolset};
pub use process_run::ProcessLimits;

use super::StoreTools;
use crate::models::RowModels;

/// Registers `process`, `cycle` and `llm` with their default limits;
/// `models` builds the registry rows' models for `llm_task` and `llm_ask`.
pub fn register_acting_sets(
    registry: &mut ToolsetRegistry,
    tools: &StoreTools,
    models: Arc<dyn RowModels>,
) -> Result<(), RegistryError> {
    let jobs = Jobs::new();
    registry.register(ProcessToolset::new(
        tools.clone(),
        jobs.clone(),
        ProcessLimits::default(),
    ))?;
    registry.register(CycleToolset::new(tools.clone()))?;
    registry.register(LlmToolset::new(
        tools.clone(),
        jobs,
        models,
        LlmJobLimits::default(),
    ))?;
    Ok(())
}

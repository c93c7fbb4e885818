//! How a run's model-backed minds reach their models ([`ModelCalls`]):
//! live (the scenario's servers and GGUF files, each call recorded when a
//! tape is being written) or from a tape (no model at all). The world loop
//! asks it for every mind's model when a world starts, hands it each
//! step's calls in mind order, and lets it finish the run.

use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use porfiry_agent::llm::RegistryModels;
use porfiry_agent::llm::local::file_endpoint;
use porfiry_skills::llm::Llm;
use porfiry_storage::{LlmConfig, LlmEntry};
use tokio::sync::Semaphore;

use super::models::{ModelSpec, model_of_minds};
use super::result::MindsOptions;
use super::run::MindsError;
use super::scenario::MindsScenario;
use super::tape::{TapeEntry, TapeError, TapeHeader, TapeReplay, TapeWriter, WorldKey};
use super::taped::{Source, TapedLlm};

/// Where model-backed minds' answers come from in one run.
#[derive(Debug)]
pub enum ModelCalls {
    /// From the scenario's models, recorded when a tape is given.
    Live(Option<Mutex<TapeWriter>>),
    /// From a tape; no model is reached.
    Replay(Arc<TapeReplay>),
}

impl ModelCalls {
    /// Live, nothing recorded (scripted-only scenarios, sweeps).
    pub fn live() -> ModelCalls {
        ModelCalls::Live(None)
    }

    /// Live, every call recorded into a new tape at `path` for the run of
    /// `scenario` under `options`.
    pub fn record(
        path: &Path,
        scenario: &MindsScenario,
        options: &MindsOptions,
    ) -> Result<ModelCalls, TapeError> {
        let header = TapeHeader::for_run(scenario, options);
        Ok(ModelCalls::Live(Some(Mutex::new(TapeWriter::create(
            path, &header,
        )?))))
    }

    /// From the tape at `path`, read and checked against the run of
    /// `scenario` under `options` before anything runs.
    pub fn replay(
        path: &Path,
        scenario: &MindsScenario,
        options: &MindsOptions,
    ) -> Result<ModelCalls, TapeError> {
        let tape = TapeReplay::load(path)?;
        tape.check(&TapeHeader::for_run(scenario, options))?;
        Ok(ModelCalls::Replay(Arc::new(tape)))
    }

    /// Every mind's model in `world`: `None` for a scripted mind. Live
    /// models are opened here (a GGUF file loads now), once per table.
    pub(crate) fn minds(
        &self,
        scenario: &MindsScenario,
        world: WorldKey,
    ) -> Result<Vec<Option<Arc<TapedLlm>>>, MindsError> {
        let sources: Vec<Source> = scenario
            .models
            .iter()
            .map(|spec| match self {
                ModelCalls::Live(_) => Ok(Source::Live {
                    inner: client(spec)?,
                    limit: Arc::new(Semaphore::new(spec.concurrency)),
                }),
                ModelCalls::Replay(tape) => Ok(Source::Replay(tape.clone())),
            })
            .collect::<Result<_, MindsError>>()?;
        Ok(model_of_minds(&scenario.models, scenario.minds())
            .into_iter()
            .enumerate()
            .map(|(mind, k)| {
                k.map(|k| {
                    Arc::new(TapedLlm::new(
                        scenario.models[k].name.clone(),
                        mind,
                        world,
                        sources[k].clone(),
                    ))
                })
            })
            .collect())
    }

    /// After a step: the live calls (in mind order) go to the tape; in a
    /// replay, a call the tape had no answer for stops the run.
    pub(crate) fn after_step(&self, calls: Vec<TapeEntry>) -> Result<(), MindsError> {
        match self {
            ModelCalls::Live(Some(tape)) => {
                let mut tape = tape.lock().unwrap_or_else(PoisonError::into_inner);
                for call in &calls {
                    tape.write(call)?;
                }
                Ok(())
            }
            ModelCalls::Live(None) => Ok(()),
            ModelCalls::Replay(tape) => match tape.mismatch() {
                Some(e) => Err(e.into()),
                None => Ok(()),
            },
        }
    }

    /// After the run: the tape flushed, or every recorded call asked.
    pub fn finish(&self) -> Result<(), MindsError> {
        match self {
            ModelCalls::Live(Some(tape)) => Ok(tape
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .flush()?),
            ModelCalls::Live(None) => Ok(()),
            ModelCalls::Replay(tape) => Ok(tape.leftover()?),
        }
    }
}

/// The live client of a `[[models]]` table: the node's own model
/// construction (`RegistryModels`), as for a registry row naming that
/// server or file.
fn client(spec: &ModelSpec) -> Result<Arc<dyn Llm>, MindsError> {
    let endpoint = match (&spec.url, &spec.gguf) {
        (Some(url), _) => url.clone(),
        (None, Some(path)) => file_endpoint(path),
        (None, None) => spec.source(),
    };
    let entry = LlmEntry {
        name: spec.name.clone(),
        endpoint,
        model: spec.model.clone().unwrap_or_else(|| spec.name.clone()),
        config: LlmConfig {
            temperature: Some(spec.temperature),
            api_key_env: spec.api_key_env.clone(),
            ..Default::default()
        },
        ..Default::default()
    };
    RegistryModels::new(None)
        .model(&entry)
        .map_err(|e| MindsError::Model {
            model: spec.name.clone(),
            at: spec.source(),
            detail: e.to_string().replace('\n', " "),
        })
}

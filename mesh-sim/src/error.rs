//! Why a scenario could not be loaded or run, or its outputs not written:
//! one variant per cause, each naming what to fix.

use std::path::PathBuf;

use porfiry_protocol::ItemError;

/// Everything mesh-sim can fail with.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The scenario file could not be read.
    #[error("cannot read scenario {path}: {source}")]
    ReadScenario {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The scenario is not valid TOML or has unknown or mistyped fields.
    #[error("scenario is not valid: {0}")]
    ParseScenario(#[from] toml::de::Error),
    /// A field has a value the simulator cannot use.
    #[error("scenario field `{field}`: {detail}")]
    InvalidScenario {
        /// Dotted field path, e.g. `graph.degree`.
        field: &'static str,
        /// What is wrong and what would be accepted.
        detail: String,
    },
    /// No friend graph with the requested shape could be drawn.
    #[error("no {what} could be drawn after {attempts} attempts; try another seed or degree")]
    GraphGeneration {
        /// The shape asked for.
        what: String,
        /// How many draws were tried.
        attempts: usize,
    },
    /// An item the scenario asks for could not be signed (limits).
    #[error("item {index} could not be signed: {source}")]
    Sign {
        /// Which planned item.
        index: usize,
        /// Why.
        source: ItemError,
    },
    /// An output file or folder could not be written.
    #[error("cannot write {path}: {source}")]
    WriteOutput {
        /// The file or folder.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The result could not be serialised.
    #[error("cannot serialise the result: {0}")]
    Serialise(#[from] serde_json::Error),
    /// The SVG plot could not be drawn.
    #[error("cannot draw {path}: {detail}")]
    Plot {
        /// The file.
        path: PathBuf,
        /// What plotters said.
        detail: String,
    },
}

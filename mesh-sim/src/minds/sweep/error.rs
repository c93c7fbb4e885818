//! Why a sweep or a merge did not happen: one line each, naming the
//! option, the key or the file.

use std::path::PathBuf;

use super::super::run::MindsError;

/// A refused or failed `mesh-sim minds sweep` / `merge`.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// A `--param` that names no sweepable key, has a value that does not
    /// parse, or makes the scenario invalid.
    #[error("--param {0}")]
    Param(String),
    /// A `--shard` that is not `I/N` with `I < N`.
    #[error("--shard {given}: {detail}")]
    Shard {
        /// As given.
        given: String,
        /// What would be accepted.
        detail: String,
    },
    /// Seeds out of range.
    #[error("--seeds {0}: must be in 1..={max}", max = super::super::result::MAX_SEEDS)]
    Seeds(usize),
    /// More runs than [`MAX_RUNS`](super::plan::MAX_RUNS).
    #[error("the sweep has {runs} runs (values × seeds); at most {max}", max = super::plan::MAX_RUNS)]
    TooManyRuns {
        /// Runs asked for (saturating).
        runs: u64,
    },
    /// A file of the sweep folder is missing, unreadable, too large,
    /// malformed or from another sweep.
    #[error("{}: {detail}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        detail: String,
    },
    /// A run failed.
    #[error("run {id}: {cause}")]
    Run {
        /// The run id.
        id: String,
        /// Why (in the message, so an error chain prints one line).
        cause: MindsError,
    },
}

impl SweepError {
    /// A [`SweepError::File`].
    pub fn file(path: impl Into<PathBuf>, detail: impl std::fmt::Display) -> SweepError {
        SweepError::File {
            path: path.into(),
            detail: detail.to_string().replace('\n', " "),
        }
    }
}

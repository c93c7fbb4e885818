//! The tape of a minds run: every call a model-backed mind made to its
//! real model, so `--replay TAPE` reruns the world with no model at all.
//!
//! JSON Lines, UTF-8, one object a line. The first line is the header
//! ([`TapeHeader`]): the format version, the scenario's name, the worlds
//! the run holds (seed and sharing, in run order) and which mind thinks
//! with which model. Every later line is one call ([`TapeEntry`]): the
//! world (`seed`, `sharing`), the mind (`node`), its step (`tick`, from 0),
//! the call's number in that step (`call`, from 0, in the order the core
//! asked), the model's name, the SHA-256 of the request (`prompt`, hex,
//! over the request's JSON: system prompt, messages, token budget, stop
//! texts, grammar) and either the answer (`reply`) or why there was none
//! (`error`). Lines come in world order, then the world's tick time, then
//! mind, then call, so the same replies give the same bytes. Only
//! model-backed minds' calls are on it: scripted minds need no tape.
//!
//! - [`record`]: writing a tape while the models answer.
//! - [`replay`]: reading one back, checking it against the run, answering.

use std::path::PathBuf;

use porfiry_skills::llm::ModelRequest;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::models::model_of_minds;
use super::result::MindsOptions;
use super::scenario::MindsScenario;

pub mod record;
pub mod replay;

pub use record::TapeWriter;
pub use replay::TapeReplay;

/// The tape's file name in `--out`.
pub const TAPE_FILE: &str = "tape.jsonl";

/// The format version in the header; a tape of another version is refused.
pub const TAPE_VERSION: u32 = 1;

/// Largest tape read or written: a recorded six-mind real-model week is
/// about 18,000 calls of a few KB each (under 100 MB); 1 GiB holds ten of
/// those and still fits the 4 GB a minds run may use when replayed.
pub const MAX_TAPE_BYTES: u64 = 1 << 30;

/// Longest line: one reply, capped by the HTTP client's own 8 MiB reply
/// limit, plus its keys.
pub const MAX_LINE_BYTES: usize = 9 << 20;

/// The first line of a tape.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TapeHeader {
    /// [`TAPE_VERSION`].
    pub porfiry_minds_tape: u32,
    /// The scenario's `name`.
    pub scenario: String,
    /// The worlds of the run, in run order.
    pub worlds: Vec<WorldKey>,
    /// Every model-backed mind and its model's name, by mind.
    pub minds: Vec<TapeMind>,
}

/// One world of a run: its seed and whether know-how sharing was on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorldKey {
    /// The world's seed.
    pub seed: u64,
    /// Know-how sharing on (`--twin`'s second world has it off).
    pub sharing: bool,
}

impl std::fmt::Display for WorldKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let side = if self.sharing { "on" } else { "off" };
        write!(f, "seed {}, sharing {side}", self.seed)
    }
}

/// A model-backed mind in the header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TapeMind {
    /// The mind's index.
    pub node: usize,
    /// Its model's `name` in the scenario.
    pub model: String,
}

/// One recorded model call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TapeEntry {
    /// The world's seed.
    pub seed: u64,
    /// The world's sharing.
    pub sharing: bool,
    /// The mind.
    pub node: usize,
    /// The mind's step, from 0.
    pub tick: u64,
    /// The call's number in the step, from 0.
    pub call: u32,
    /// The model's name in the scenario.
    pub model: String,
    /// [`prompt_hash`] of the request.
    pub prompt: String,
    /// The answer text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply: Option<String>,
    /// Why there was no answer (the client's error, one line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl TapeEntry {
    /// The entry's world.
    pub fn world(&self) -> WorldKey {
        WorldKey {
            seed: self.seed,
            sharing: self.sharing,
        }
    }

    /// The recorded outcome: the answer or the error.
    pub fn outcome(&self) -> Result<String, String> {
        match (&self.reply, &self.error) {
            (Some(text), _) => Ok(text.clone()),
            (None, Some(e)) => Err(e.clone()),
            (None, None) => Err(String::new()),
        }
    }
}

/// Why a tape could not be written, read or used.
#[derive(Debug, thiserror::Error)]
pub enum TapeError {
    /// The file could not be opened, read or written.
    #[error("tape {path}: {source}")]
    Io {
        /// The tape.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// A line is not what the format says.
    #[error("tape {path} line {line}: {detail}")]
    Line {
        /// The tape.
        path: PathBuf,
        /// The line, from 1.
        line: usize,
        /// What is wrong with it.
        detail: String,
    },
    /// The tape is not of this run: the header, or a call the world asks
    /// for, differs. One line naming what.
    #[error("tape {path} does not match this run: {detail}")]
    Mismatch {
        /// The tape.
        path: PathBuf,
        /// What differs.
        detail: String,
    },
}

/// The SHA-256 of `request`'s JSON, lowercase hex.
pub fn prompt_hash(request: &ModelRequest) -> String {
    // A request is strings and numbers: its JSON always encodes.
    let bytes = serde_json::to_vec(request).unwrap_or_default();
    hex::encode(Sha256::digest(&bytes))
}

impl TapeHeader {
    /// The header a run of `scenario` under `options` writes, and the one
    /// a tape must have to be replayed by it.
    pub fn for_run(scenario: &MindsScenario, options: &MindsOptions) -> TapeHeader {
        TapeHeader {
            porfiry_minds_tape: TAPE_VERSION,
            scenario: scenario.name.clone(),
            worlds: run_worlds(options),
            minds: model_of_minds(&scenario.models, scenario.minds())
                .into_iter()
                .enumerate()
                .filter_map(|(node, k)| {
                    k.map(|k| TapeMind {
                        node,
                        model: scenario.models[k].name.clone(),
                    })
                })
                .collect(),
        }
    }

    /// What differs from `expected` (the run's header), in one line; `None`
    /// when they match.
    pub fn differs_from(&self, expected: &TapeHeader) -> Option<String> {
        if self.scenario != expected.scenario {
            return Some(format!(
                "it was recorded for scenario {:?}, this is {:?}",
                self.scenario, expected.scenario
            ));
        }
        if let Some(w) = expected.worlds.iter().find(|w| !self.worlds.contains(w)) {
            return Some(format!(
                "it holds no world for {w} (it has {})",
                list(&self.worlds)
            ));
        }
        if self.worlds != expected.worlds {
            return Some(format!(
                "it holds worlds {}, this run asks for {}",
                list(&self.worlds),
                list(&expected.worlds)
            ));
        }
        for want in &expected.minds {
            match self.minds.iter().find(|m| m.node == want.node) {
                None => {
                    return Some(format!(
                        "mind {} thinks with model {:?} here but has no model on the tape",
                        want.node, want.model
                    ));
                }
                Some(m) if m.model != want.model => {
                    return Some(format!(
                        "mind {} thinks with model {:?} here but with {:?} on the tape",
                        want.node, want.model, m.model
                    ));
                }
                Some(_) => {}
            }
        }
        if let Some(extra) = self
            .minds
            .iter()
            .find(|m| !expected.minds.iter().any(|w| w.node == m.node))
        {
            return Some(format!(
                "mind {} thinks with model {:?} on the tape but with the scripted policy here",
                extra.node, extra.model
            ));
        }
        None
    }
}

/// The worlds `options` run, in run order: each seed's sharing-on world,
/// then with `--twin` its sharing-off twin.
pub fn run_worlds(options: &MindsOptions) -> Vec<WorldKey> {
    let seeds = options.seeds.clamp(1, super::result::MAX_SEEDS);
    let mut out = Vec::with_capacity(seeds * 2);
    for k in 0..seeds {
        let seed = options.seed.wrapping_add(k as u64);
        out.push(WorldKey {
            seed,
            sharing: true,
        });
        if options.twin {
            out.push(WorldKey {
                seed,
                sharing: false,
            });
        }
    }
    out
}

fn list(worlds: &[WorldKey]) -> String {
    let names: Vec<String> = worlds.iter().map(|w| format!("[{w}]")).collect();
    names.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(worlds: Vec<WorldKey>, minds: Vec<(usize, &str)>) -> TapeHeader {
        TapeHeader {
            porfiry_minds_tape: TAPE_VERSION,
            scenario: "s".into(),
            worlds,
            minds: minds
                .into_iter()
                .map(|(node, model)| TapeMind {
                    node,
                    model: model.into(),
                })
                .collect(),
        }
    }

    fn w(seed: u64, sharing: bool) -> WorldKey {
        WorldKey { seed, sharing }
    }

    #[test]
    fn a_header_names_the_first_difference_in_one_line() {
        let run = header(vec![w(6, true)], vec![(0, "a"), (2, "b")]);
        assert_eq!(run.differs_from(&run), None);
        let cases = [
            (
                header(vec![w(7, true)], vec![(0, "a"), (2, "b")]),
                "no world for seed 6, sharing on",
            ),
            (header(vec![w(6, true)], vec![(0, "a")]), "mind 2"),
            (
                header(vec![w(6, true)], vec![(0, "a"), (2, "c")]),
                "with \"c\" on the tape",
            ),
            (
                header(vec![w(6, true)], vec![(0, "a"), (1, "a"), (2, "b")]),
                "mind 1",
            ),
        ];
        for (tape, want) in cases {
            let line = tape.differs_from(&run).expect("differs");
            assert!(line.contains(want), "{want}: {line}");
            assert_eq!(line.lines().count(), 1);
        }
    }

    #[test]
    fn twins_and_seeds_give_worlds_in_run_order() {
        let options = MindsOptions {
            seed: 4,
            seeds: 2,
            twin: true,
        };
        assert_eq!(
            run_worlds(&options),
            vec![w(4, true), w(4, false), w(5, true), w(5, false)]
        );
    }

    #[test]
    fn the_prompt_hash_covers_the_whole_request() {
        let a = ModelRequest::new("system".into(), Vec::new(), Some(10));
        let b = ModelRequest::new("system".into(), Vec::new(), Some(11));
        assert_eq!(prompt_hash(&a), prompt_hash(&a.clone()));
        assert_ne!(prompt_hash(&a), prompt_hash(&b));
        assert_eq!(prompt_hash(&a).len(), 64);
    }
}

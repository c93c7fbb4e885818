//! What `porfiry model teach` keeps between runs, and the pure decisions
//! around it: the run's settings and progress (`state.json` in its work
//! folder), whether a second run resumes the first, the order the windows
//! are trained in (a seeded shuffle per epoch), and the run's peak memory.

use std::path::Path;

use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

/// Which labels a step's loss counts (`model teach --loss`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum LossScope {
    /// The reply's: the micro-batches that hold its labels.
    Reply,
    /// Every token's, prompt included (llama.cpp's own loss; what a state
    /// written before `--loss` existed trained with).
    #[default]
    All,
}

impl From<LossScope> for porfiry_trainer::LossOn {
    fn from(scope: LossScope) -> Self {
        match scope {
            LossScope::Reply => Self::Reply,
            LossScope::All => Self::Everything,
        }
    }
}

/// A teaching run's settings and progress.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TeachState {
    /// The model file taught.
    pub base: String,
    /// SHA-256 of the data's JSONL, hex.
    pub data_sha256: String,
    /// The seed the windows are shuffled by.
    pub seed: u64,
    /// Tokens per step.
    pub context: u32,
    /// Layers trained, from the top (0: all).
    pub layers: u32,
    /// AdamW's learning rate.
    pub learning_rate: f32,
    /// Which labels the loss counts.
    #[serde(default)]
    pub loss: LossScope,
    /// Steps the run is to take.
    pub total_steps: u64,
    /// Steps taken and saved in the checkpoint.
    pub steps_done: u64,
    /// Mean training loss of each saved stretch of steps, in order.
    pub losses: Vec<f32>,
}

impl TeachState {
    /// Whether a run with `wanted`'s settings continues this one: the same
    /// base, data, seed and shape of training (the step count and learning
    /// rate may change between runs).
    pub fn resumes(&self, wanted: &TeachState) -> bool {
        self.base == wanted.base
            && self.data_sha256 == wanted.data_sha256
            && self.seed == wanted.seed
            && self.context == wanted.context
            && self.layers == wanted.layers
            && self.loss == wanted.loss
            && self.steps_done > 0
    }

    /// Reads `path`; `None` when it is missing or not a state (a fresh run).
    pub fn read(path: &Path) -> Option<Self> {
        let text = std::fs::read_to_string(path).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Writes `path` whole (a temporary file renamed over it).
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let tmp = path.with_extension("json.tmp");
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        std::fs::write(&tmp, text)?;
        std::fs::rename(&tmp, path)
    }
}

/// The step size at `step` of `total`: `base` at the start, falling in a
/// straight line to a tenth of it at the end, so late steps polish what
/// early ones moved instead of undoing it (a constant rate that moved the
/// model fast enough broke its language over a longer run; see
/// docs/benchmarks.md).
pub fn learning_rate_at(base: f32, step: u64, total: u64) -> f32 {
    let done = if total == 0 {
        1.0
    } else {
        (step.min(total) as f64 / total as f64) as f32
    };
    base * (1.0 - 0.9 * done)
}

/// Which window step `step` trains on: every window once per epoch, each
/// epoch in its own order drawn from `seed`.
pub fn window_of(step: u64, windows: usize, seed: u64) -> usize {
    let windows = windows.max(1);
    let epoch = step / windows as u64;
    let mut order: Vec<usize> = (0..windows).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ epoch.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    // Fisher–Yates.
    for i in (1..windows).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    order[(step % windows as u64) as usize]
}

/// This process's peak resident memory in bytes (`VmHWM`), where Linux
/// reports it.
pub fn peak_memory_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    parse_kib_field(&status, "VmHWM:")
}

/// Memory the system can give now (`MemAvailable`), where Linux reports it.
pub fn available_memory_bytes() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    parse_kib_field(&meminfo, "MemAvailable:")
}

fn parse_kib_field(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(key))?;
    let kib: u64 = line[key.len()..].split_whitespace().next()?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> TeachState {
        TeachState {
            base: "/m/smol.gguf".into(),
            data_sha256: "ab".into(),
            seed: 1,
            context: 512,
            layers: 8,
            learning_rate: 1e-4,
            loss: LossScope::Reply,
            total_steps: 100,
            steps_done: 40,
            losses: vec![2.0, 1.5],
        }
    }

    #[test]
    fn a_run_resumes_only_the_same_base_data_seed_and_shape() {
        let saved = state();
        let mut wanted = TeachState {
            steps_done: 0,
            total_steps: 300,
            learning_rate: 5e-5,
            ..saved.clone()
        };
        assert!(saved.resumes(&wanted));
        wanted.data_sha256 = "cd".into();
        assert!(!saved.resumes(&wanted));
        let other_shape = TeachState {
            layers: 4,
            ..saved.clone()
        };
        assert!(!saved.resumes(&TeachState {
            steps_done: 0,
            ..other_shape
        }));
        assert!(!saved.resumes(&TeachState {
            steps_done: 0,
            loss: LossScope::All,
            ..saved.clone()
        }));
        let nothing_done = TeachState {
            steps_done: 0,
            ..saved.clone()
        };
        assert!(!nothing_done.resumes(&saved));
    }

    #[test]
    fn the_state_survives_a_write_and_a_broken_file_is_a_fresh_run() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        assert_eq!(TeachState::read(&path), None);
        state().write(&path).unwrap();
        assert_eq!(TeachState::read(&path), Some(state()));
        std::fs::write(&path, "{not json").unwrap();
        assert_eq!(TeachState::read(&path), None);
        // A state from before --loss trained every token.
        let mut old = serde_json::to_value(state()).unwrap();
        old.as_object_mut().unwrap().remove("loss");
        std::fs::write(&path, old.to_string()).unwrap();
        assert_eq!(TeachState::read(&path).unwrap().loss, LossScope::All);
    }

    #[test]
    fn each_epoch_trains_every_window_once_in_a_seeded_order() {
        let epoch = |e: u64, seed| -> Vec<usize> {
            (e * 7..e * 7 + 7).map(|s| window_of(s, 7, seed)).collect()
        };
        for e in 0..3 {
            let mut seen = epoch(e, 3);
            seen.sort_unstable();
            assert_eq!(seen, (0..7).collect::<Vec<_>>());
        }
        assert_ne!(epoch(0, 3), epoch(1, 3));
        assert_eq!(epoch(0, 3), epoch(0, 3));
        assert_ne!(epoch(0, 3), epoch(0, 4));
        assert_eq!(window_of(5, 0, 1), 0);
    }

    #[test]
    fn memory_fields_are_read_in_kib() {
        let status = "Name:\tporfiry\nVmHWM:\t  123456 kB\nVmRSS:\t 1 kB\n";
        assert_eq!(parse_kib_field(status, "VmHWM:"), Some(123_456 * 1024));
        assert_eq!(parse_kib_field(status, "VmSwap:"), None);
    }

    #[test]
    fn the_step_size_falls_in_a_line_to_a_tenth() {
        assert_eq!(learning_rate_at(1e-4, 0, 100), 1e-4);
        assert!((learning_rate_at(1e-4, 50, 100) - 5.5e-5).abs() < 1e-9);
        assert!((learning_rate_at(1e-4, 100, 100) - 1e-5).abs() < 1e-9);
        // Past the end (a resumed run asked for fewer steps) and no steps.
        assert!((learning_rate_at(1e-4, 300, 100) - 1e-5).abs() < 1e-9);
        assert!((learning_rate_at(1e-4, 0, 0) - 1e-5).abs() < 1e-9);
    }
}

//! What `mesh-sim minds` reports: the figures of one world, of twin worlds
//! (know-how sharing on and off, same seed) and 95 % intervals over seeds,
//! as `result.json`, and the time series as `timeseries.csv`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::calls::ModelCalls;
use super::run::{Figures, MindsError, Row, WorldRun, run_world_with};
use super::scenario::MindsScenario;

/// Name of the JSON result.
pub const RESULT_FILE: &str = "result.json";
/// Name of the time series (the sharing-on world of the first seed).
pub const SERIES_FILE: &str = "timeseries.csv";

/// Most seeds one command runs: each seed is a whole world (twice with
/// `--twin`); 100 gives intervals as narrow as a 2-core machine has time for.
pub const MAX_SEEDS: usize = 100;

/// Student's t, two-sided 95 %, for 1..=30 degrees of freedom; past 30 the
/// normal's 1.96 is within 2 %.
const T95: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// The normal quantile used past 30 degrees of freedom.
const Z95: f64 = 1.96;

/// How the command runs a scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MindsOptions {
    /// The first seed.
    pub seed: u64,
    /// Seeds run: `seed`, `seed + 1`, …
    pub seeds: usize,
    /// Run each seed twice, know-how sharing on and off.
    pub twin: bool,
}

/// Twin worlds of one seed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Twin {
    /// Sharing on.
    pub sharing_on: Figures,
    /// Sharing off.
    pub sharing_off: Figures,
    /// `mean_ticks_to_escape` on / off; `null` when either is.
    pub escape_ratio: Option<f64>,
}

/// A mean over seeds with its 95 % interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Interval {
    /// The mean.
    pub mean: f64,
    /// Lower end.
    pub low: f64,
    /// Upper end.
    pub high: f64,
}

/// Intervals over `--seeds N`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ci95 {
    /// Seeds run.
    pub seeds: usize,
    /// Of the sharing-on worlds.
    pub stagnant_tick_share: Option<Interval>,
    /// Of the sharing-on worlds (seeds where some loop ended).
    pub mean_ticks_to_escape: Option<Interval>,
    /// Of the twins (with `--twin`).
    pub escape_ratio: Option<Interval>,
}

/// `result.json`: the first seed's figures (its sharing-on world), its
/// twin, and intervals over seeds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MindsResult {
    /// The first seed's figures.
    #[serde(flatten)]
    pub figures: Figures,
    /// With `--twin`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub twin: Option<Twin>,
    /// With `--seeds N`, N > 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci95: Option<Ci95>,
}

/// A whole command's outcome.
#[derive(Debug, Clone)]
pub struct MindsOutcome {
    /// What `result.json` holds.
    pub result: MindsResult,
    /// The first seed's sharing-on time series.
    pub series: Vec<Row>,
}

/// Runs the worlds `options` ask for; `watch(world, virtual_ms)` follows
/// progress (world counts from 0 over seeds and twins). Model-backed minds
/// call their models live, unrecorded.
pub fn run_minds(
    scenario: &MindsScenario,
    options: MindsOptions,
    watch: &mut dyn FnMut(usize, u64),
) -> Result<MindsOutcome, MindsError> {
    run_minds_with(scenario, options, &ModelCalls::live(), watch)
}

/// [`run_minds`] with model-backed minds' calls going through `calls`
/// (recorded into a tape, or answered from one), finished at the end.
pub fn run_minds_with(
    scenario: &MindsScenario,
    options: MindsOptions,
    calls: &ModelCalls,
    watch: &mut dyn FnMut(usize, u64),
) -> Result<MindsOutcome, MindsError> {
    let seeds = options.seeds.clamp(1, MAX_SEEDS);
    let mut first: Option<(WorldRun, Option<Twin>)> = None;
    let mut shares = Vec::new();
    let mut escapes = Vec::new();
    let mut ratios = Vec::new();
    let mut world = 0;
    for k in 0..seeds {
        let seed = options.seed.wrapping_add(k as u64);
        let on = run_world_with(scenario, seed, true, calls, &mut |t| watch(world, t))?;
        world += 1;
        let twin = if options.twin {
            let off = run_world_with(scenario, seed, false, calls, &mut |t| watch(world, t))?;
            world += 1;
            let escape_ratio = match (
                on.figures.mean_ticks_to_escape,
                off.figures.mean_ticks_to_escape,
            ) {
                (Some(a), Some(b)) if b > 0.0 => Some(a / b),
                _ => None,
            };
            ratios.extend(escape_ratio);
            Some(Twin {
                sharing_on: on.figures.clone(),
                sharing_off: off.figures,
                escape_ratio,
            })
        } else {
            None
        };
        shares.push(on.figures.stagnant_tick_share);
        escapes.extend(on.figures.mean_ticks_to_escape);
        if first.is_none() {
            first = Some((on, twin));
        }
    }
    let Some((run, twin)) = first else {
        return Err(MindsError::Runtime("no seed ran".into()));
    };
    calls.finish()?;
    let ci95 = (seeds > 1).then(|| Ci95 {
        seeds,
        stagnant_tick_share: interval(&shares),
        mean_ticks_to_escape: interval(&escapes),
        escape_ratio: interval(&ratios),
    });
    Ok(MindsOutcome {
        result: MindsResult {
            figures: run.figures,
            twin,
            ci95,
        },
        series: run.series,
    })
}

/// The mean of `xs` and its 95 % t interval; `None` for fewer than two.
pub fn interval(xs: &[f64]) -> Option<Interval> {
    let n = xs.len();
    if n < 2 {
        return None;
    }
    // At most MAX_SEEDS values: exact in f64.
    let nf = n as f64;
    let mean = xs.iter().sum::<f64>() / nf;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (nf - 1.0);
    let t = T95.get(n - 2).copied().unwrap_or(Z95);
    let half = t * (var / nf).sqrt();
    Some(Interval {
        mean,
        low: mean - half,
        high: mean + half,
    })
}

/// The time series as CSV.
pub fn series_csv(series: &[Row]) -> String {
    let mut out = String::from(
        "time_ms,ticked,looping,episodes,escapes,strategies_shared,applied,adopted,adopted_useless,wire_bytes\n",
    );
    for r in series {
        // Writing to a String cannot fail.
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{}",
            r.time_ms,
            r.ticked,
            r.looping,
            r.episodes,
            r.escapes,
            r.strategies_shared,
            r.applied,
            r.adopted,
            r.adopted_useless,
            r.wire_bytes
        );
    }
    out
}

/// Writes `result.json` and `timeseries.csv` into `dir` (created if
/// missing); their paths.
pub fn write_outcome(dir: &Path, outcome: &MindsOutcome) -> Result<Vec<PathBuf>, crate::SimError> {
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| crate::SimError::WriteOutput { path, source }
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let mut json = serde_json::to_string_pretty(&outcome.result)?;
    json.push('\n');
    let result = dir.join(RESULT_FILE);
    std::fs::write(&result, json).map_err(io(&result))?;
    let series = dir.join(SERIES_FILE);
    std::fs::write(&series, series_csv(&outcome.series)).map_err(io(&series))?;
    Ok(vec![result, series])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interval_uses_students_t() {
        assert_eq!(interval(&[1.0]), None);
        let i = interval(&[1.0, 3.0]).unwrap();
        assert_eq!(i.mean, 2.0);
        // s = √2, n = 2: half = 12.706 · √2 / √2.
        assert!((i.high - 2.0 - 12.706).abs() < 1e-9, "{i:?}");
    }
}

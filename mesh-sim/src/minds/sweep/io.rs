//! The files of a sweep folder: `plan.json` (the whole sweep, the same for
//! every shard), one folder per run with `params.json`, `timeseries.csv`
//! and `result.json` (written last, by rename, so a run killed half way is
//! run again), and the merge's `sweep.json` and `sweep.csv`.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::super::result::{MindsOptions, RESULT_FILE, SERIES_FILE, run_minds, series_csv};
use super::super::scenario::MindsScenario;
use super::error::SweepError;
use super::merge::{RunFigures, SweepSummary, runs_csv, summarize};
use super::params::apply;
use super::plan::{Plan, RunSpec, Shard};

/// The sweep's plan, in the sweep folder.
pub const PLAN_FILE: &str = "plan.json";
/// A run's settings and seed, in its folder.
pub const PARAMS_FILE: &str = "params.json";
/// The merge's summary.
pub const SWEEP_JSON: &str = "sweep.json";
/// The merge's table of runs.
pub const SWEEP_CSV: &str = "sweep.csv";

/// Largest `result.json` a merge reads: a run's is under 2 KB; anything
/// near a megabyte is not one.
const MAX_RESULT_BYTES: u64 = 1 << 20;

/// Largest `params.json`: four settings and an id, under 1 KB.
const MAX_PARAMS_BYTES: u64 = 64 << 10;

/// Largest `plan.json`: `MAX_RUNS` runs of at most a few hundred bytes each
/// (id, settings, seed) come to about 6 MB.
const MAX_PLAN_BYTES: u64 = 16 << 20;

/// What became of one run of the shard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunState {
    /// Its world ran, in this long.
    Ran(Duration),
    /// Its `result.json` was already there.
    Skipped,
}

/// What a `sweep` call did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SweepReport {
    /// Runs of the whole sweep.
    pub runs: usize,
    /// Of them, this shard's.
    pub shard_runs: usize,
    /// Of those, run now.
    pub ran: usize,
    /// Of those, finished before.
    pub skipped: usize,
}

/// Reads at most `max` bytes of `path` as text; a missing file, a larger
/// one or an unreadable one is an error naming it.
fn read_bounded(path: &Path, max: u64) -> Result<String, SweepError> {
    let file = fs::File::open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => SweepError::file(path, "missing"),
        _ => SweepError::file(path, e),
    })?;
    let mut text = String::new();
    file.take(max + 1)
        .read_to_string(&mut text)
        .map_err(|e| SweepError::file(path, e))?;
    if text.len() as u64 > max {
        return Err(SweepError::file(path, format!("larger than {max} bytes")));
    }
    Ok(text)
}

/// Writes `text` to `path` through a temporary file and a rename, so a
/// reader never sees half of it.
fn write_atomic(path: &Path, text: &str) -> Result<(), SweepError> {
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    fs::write(&tmp, text).map_err(|e| SweepError::file(&tmp, e))?;
    fs::rename(&tmp, path).map_err(|e| SweepError::file(path, e))
}

fn pretty<T: serde::Serialize>(value: &T, path: &Path) -> Result<String, SweepError> {
    let mut json = serde_json::to_string_pretty(value).map_err(|e| SweepError::file(path, e))?;
    json.push('\n');
    Ok(json)
}

/// Reads `DIR/plan.json`.
pub fn read_plan(dir: &Path) -> Result<Plan, SweepError> {
    let path = dir.join(PLAN_FILE);
    let text = read_bounded(&path, MAX_PLAN_BYTES)?;
    serde_json::from_str(&text)
        .map_err(|e| SweepError::file(&path, format!("not a sweep plan: {e}")))
}

/// Runs this shard's runs of `plan` over `base` into `dir`: writes
/// `plan.json` (or checks that the one there is the same sweep), skips
/// every run whose `result.json` exists, and tells `on_run` about each.
pub fn run_sweep(
    base: &MindsScenario,
    plan: &Plan,
    shard: Shard,
    dir: &Path,
    on_run: &mut dyn FnMut(&RunSpec, RunState),
) -> Result<SweepReport, SweepError> {
    fs::create_dir_all(dir).map_err(|e| SweepError::file(dir, e))?;
    let plan_path = dir.join(PLAN_FILE);
    if plan_path.exists() {
        let there = read_plan(dir)?;
        if there != *plan {
            return Err(SweepError::file(
                &plan_path,
                format!(
                    "holds another sweep ({}, {} runs); give another --out",
                    there.scenario,
                    there.runs.len()
                ),
            ));
        }
    } else {
        write_atomic(&plan_path, &pretty(plan, &plan_path)?)?;
    }
    let mut report = SweepReport {
        runs: plan.runs.len(),
        shard_runs: 0,
        ran: 0,
        skipped: 0,
    };
    for run in plan.runs.iter().filter(|r| shard.holds(r.index)) {
        report.shard_runs += 1;
        let run_dir = dir.join(&run.id);
        let result = run_dir.join(RESULT_FILE);
        if result.exists() {
            report.skipped += 1;
            on_run(run, RunState::Skipped);
            continue;
        }
        let started = Instant::now();
        let scenario = apply(base, &run.params)?;
        let options = MindsOptions {
            seed: run.seed,
            seeds: 1,
            twin: false,
        };
        let outcome =
            run_minds(&scenario, options, &mut |_, _| {}).map_err(|cause| SweepError::Run {
                id: run.id.clone(),
                cause,
            })?;
        fs::create_dir_all(&run_dir).map_err(|e| SweepError::file(&run_dir, e))?;
        let params = run_dir.join(PARAMS_FILE);
        fs::write(&params, pretty(run, &params)?).map_err(|e| SweepError::file(&params, e))?;
        let series = run_dir.join(SERIES_FILE);
        fs::write(&series, series_csv(&outcome.series))
            .map_err(|e| SweepError::file(&series, e))?;
        write_atomic(&result, &pretty(&outcome.result, &result)?)?;
        report.ran += 1;
        on_run(run, RunState::Ran(started.elapsed()));
    }
    Ok(report)
}

/// Merges the sweep in `dir`: every run of its plan must have its
/// `params.json` (the plan's run) and `result.json`; writes `sweep.json`
/// to `out` (default `DIR/sweep.json`) and `sweep.csv` beside it, and
/// returns the summary and both paths.
pub fn merge_dir(
    dir: &Path,
    out: Option<&Path>,
) -> Result<(SweepSummary, Vec<PathBuf>), SweepError> {
    let plan = read_plan(dir)?;
    let mut figures = Vec::with_capacity(plan.runs.len());
    for run in &plan.runs {
        let run_dir = dir.join(&run.id);
        let params_path = run_dir.join(PARAMS_FILE);
        let text = read_bounded(&params_path, MAX_PARAMS_BYTES)?;
        let params: RunSpec = serde_json::from_str(&text)
            .map_err(|e| SweepError::file(&params_path, format!("not a run's params: {e}")))?;
        if params != *run {
            return Err(SweepError::file(
                &params_path,
                format!("is not run {} of {PLAN_FILE}", run.index),
            ));
        }
        let result_path = run_dir.join(RESULT_FILE);
        let text = read_bounded(&result_path, MAX_RESULT_BYTES)?;
        let f: RunFigures = serde_json::from_str(&text)
            .map_err(|e| SweepError::file(&result_path, format!("not a minds result: {e}")))?;
        figures.push(f);
    }
    let summary = summarize(&plan, &figures);
    let json_path = out.map_or_else(|| dir.join(SWEEP_JSON), Path::to_path_buf);
    let csv_path = match out {
        Some(p) => p.with_extension("csv"),
        None => dir.join(SWEEP_CSV),
    };
    if let Some(parent) = json_path.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent).map_err(|e| SweepError::file(parent, e))?;
    }
    fs::write(&json_path, pretty(&summary, &json_path)?)
        .map_err(|e| SweepError::file(&json_path, e))?;
    fs::write(&csv_path, runs_csv(&plan, &figures)).map_err(|e| SweepError::file(&csv_path, e))?;
    Ok((summary, vec![json_path, csv_path]))
}

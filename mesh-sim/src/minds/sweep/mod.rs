//! `mesh-sim minds sweep` and `merge` (issue 48): one scenario run over the
//! cartesian product of `--param KEY=V1,V2,…` values × seeds, one folder
//! per run, in shards (`--shard I/N`) any batch system's array job can run
//! independently; `merge` joins the runs into means and 95 % intervals per
//! parameter combination.
//!
//! - [`params`]: the sweepable keys and their values.
//! - [`plan`]: the run list, run ids and shards.
//! - [`merge`]: the merge arithmetic and the CSV.
//! - [`io`]: the sweep folder's files.

pub mod error;
pub mod io;
pub mod merge;
pub mod params;
pub mod plan;

pub use error::SweepError;
pub use io::{RunState, SweepReport, merge_dir, read_plan, run_sweep};
pub use merge::SweepSummary;
pub use plan::{Plan, RunSpec, Shard};

use super::scenario::MindsScenario;

/// The plan of a sweep of `base` over `params` (`KEY=V1,V2,…` each) and
/// `seeds` seeds from `seed`, every parameter combination applied and
/// checked by the scenario's rules: all before anything runs or is written.
pub fn prepare(
    base: &MindsScenario,
    params: &[String],
    seed: u64,
    seeds: usize,
) -> Result<Plan, SweepError> {
    let axes = params::parse_params(params)?;
    let plan = Plan::build(&base.name, axes, seed, seeds)?;
    for run in plan.runs.iter().step_by(plan.seeds.max(1)) {
        params::apply(base, &run.params)?;
    }
    Ok(plan)
}

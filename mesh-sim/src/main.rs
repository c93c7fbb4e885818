//! The `mesh-sim` command: `mesh-sim run SCENARIO.toml [--seed N] [--out DIR]
//! [--trace-item N] [--nodes N] [--items N] [--duration-ms MS]` runs a
//! scenario (scaled if asked, with a progress bar on runs over a second), writes `result.json`,
//! `timeseries.csv` and `delivery.svg` into DIR and prints a one-paragraph
//! summary (and the journey of one item if asked);
//! `mesh-sim minds SCENARIO.toml [--seed N] [--out DIR] [--twin] [--seeds N]
//! [--replay TAPE]` runs cognitive cores over the same simulation and writes
//! `result.json` and `timeseries.csv`, and `tape.jsonl` when some minds think
//! with real models (`--replay` answers them from a tape instead)
//! (`mesh_sim::minds`);
//! `mesh-sim minds sweep SCENARIO.toml --param KEY=V1,V2 … [--seeds N]
//! [--seed S] [--shard I/N] --out DIR` runs one folder per (parameters,
//! seed) and `mesh-sim minds merge DIR [--out FILE]` joins them
//! (`mesh_sim::minds::sweep`);
//! `mesh-sim redundancy` prints our payload copies per node per item for
//! issue 4's set-up (the gossipsub side is `cargo bench --bench redundancy`).

use std::io::Write;
use std::path::PathBuf;
use std::process::Command;

use anyhow::Context;
use clap::{Parser, Subcommand};
use mesh_sim::progress::Progress;
use mesh_sim::{Scenario, World, output, redundancy, run_watched};

#[derive(Parser)]
#[command(
    name = "mesh-sim",
    version,
    about = "Discrete-event simulation of Porfiry nodes"
)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a scenario and write result.json, timeseries.csv, delivery.svg.
    Run {
        /// The scenario TOML file.
        scenario: PathBuf,
        /// Seed; defaults to the scenario's own.
        #[arg(long)]
        seed: Option<u64>,
        /// Output folder (created if missing).
        #[arg(long, default_value = "mesh-sim-out")]
        out: PathBuf,
        /// Also print the journey of planned item N (0-based, publish order).
        #[arg(long, value_name = "N")]
        trace_item: Option<usize>,
        /// Scale the scenario to N nodes (random graphs; degree, shares and
        /// the item count stay, group sizes and crash counts follow).
        #[arg(long, value_name = "N")]
        nodes: Option<usize>,
        /// Publish N items in the scenario's publishing window.
        #[arg(long, value_name = "N")]
        items: Option<usize>,
        /// Stretch or squeeze the whole timeline to MS virtual milliseconds.
        #[arg(long, value_name = "MS")]
        duration_ms: Option<u64>,
    },
    /// Run many cognitive cores on one virtual clock, sharing strategies
    /// through the replication engine; write result.json, timeseries.csv.
    /// `minds sweep` and `minds merge` run and join parameter sweeps.
    #[command(args_conflicts_with_subcommands = true)]
    Minds {
        /// `sweep` or `merge`; none runs SCENARIO.
        #[command(subcommand)]
        action: Option<MindsCmd>,
        /// The minds scenario TOML file.
        scenario: Option<PathBuf>,
        /// Seed; defaults to the scenario's own.
        #[arg(long)]
        seed: Option<u64>,
        /// Output folder (created if missing).
        #[arg(long, default_value = "mesh-sim-out")]
        out: PathBuf,
        /// Also run each seed with know-how sharing off and compare.
        #[arg(long)]
        twin: bool,
        /// Run N seeds (seed, seed + 1, …) and add 95 % intervals.
        #[arg(long, value_name = "N", default_value_t = 1)]
        seeds: usize,
        /// Answer the model-backed minds from this tape (a `tape.jsonl` an
        /// earlier run wrote) instead of their models.
        #[arg(long, value_name = "TAPE")]
        replay: Option<PathBuf>,
    },
    /// Our payload copies per node per item: N nodes, degree-k graph.
    Redundancy {
        /// Nodes.
        #[arg(long, default_value_t = 20)]
        nodes: usize,
        /// Friends per node.
        #[arg(long, default_value_t = 6)]
        degree: usize,
        /// Items.
        #[arg(long, default_value_t = 100)]
        items: usize,
        /// Seed.
        #[arg(long, default_value_t = 4)]
        seed: u64,
    },
}

#[derive(Subcommand)]
enum MindsCmd {
    /// Run SCENARIO over every combination of --param values × seeds, one
    /// folder DIR/<run-id>/ each (result.json, params.json,
    /// timeseries.csv); a run whose result.json exists is skipped. Runs are
    /// numbered in a fixed order: the first --param outermost, the last
    /// varying fastest, the seeds innermost.
    Sweep {
        /// The minds scenario TOML file.
        scenario: PathBuf,
        /// A scenario field and its values, as `policy.adversaries=0,0.05,0.2`
        /// (repeat for more keys). Keys: graph (complete, random:DEGREE,
        /// ring:DEGREE, small_world:DEGREE:REWIRE, clusters:COUNT:BRIDGES),
        /// nodes.count, policy.audience (public, friends, club),
        /// policy.adversaries, policy.drift, policy.self_escape,
        /// policy.user_notes, policy.invent, policy.share_at_rating,
        /// policy.adopt, policy.adopt_at_rating, policy.effectiveness.CLASS.
        #[arg(long = "param", value_name = "KEY=V1,V2,…")]
        params: Vec<String>,
        /// First seed; defaults to the scenario's own.
        #[arg(long)]
        seed: Option<u64>,
        /// Seeds per combination: seed, seed + 1, …
        #[arg(long, value_name = "N", default_value_t = 1)]
        seeds: usize,
        /// Run only shard I of N: run r belongs to shard r % N == I, I
        /// counted from 0 (`--shard $SLURM_ARRAY_TASK_ID/8`).
        #[arg(long, value_name = "I/N")]
        shard: Option<String>,
        /// The sweep folder (created if missing; shared by all shards).
        #[arg(long)]
        out: PathBuf,
    },
    /// Join a finished sweep folder into sweep.json (mean and 95 % interval
    /// per parameter combination) and sweep.csv (one row per run).
    Merge {
        /// The sweep folder.
        dir: PathBuf,
        /// Where sweep.json goes (sweep.csv beside it); default DIR/sweep.json.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
}

/// `git describe --always --dirty` of the working tree, or "unknown".
fn git_revision() -> String {
    Command::new("git")
        .args(["describe", "--always", "--dirty", "--abbrev=12"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

/// Prints `text` and a newline; a reader that went away (`| head`) is not
/// an error.
fn print_out(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}").and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

/// `mesh-sim minds`: checks everything before any world starts (a tape
/// to replay included); errors are one line.
fn minds(
    scenario: &std::path::Path,
    seed: Option<u64>,
    out: &std::path::Path,
    twin: bool,
    seeds: usize,
    replay: Option<&std::path::Path>,
) -> anyhow::Result<()> {
    use mesh_sim::minds::{
        MindsOptions, MindsScenario, ModelCalls, TAPE_FILE, result::MAX_SEEDS, run_minds_with,
        write_outcome,
    };
    let s = MindsScenario::load(scenario)?;
    if !(1..=MAX_SEEDS).contains(&seeds) {
        anyhow::bail!("--seeds {seeds}: must be in 1..={MAX_SEEDS}");
    }
    let options = MindsOptions {
        seed: seed.unwrap_or(s.seed),
        seeds,
        twin,
    };
    let calls = match replay {
        Some(_) if s.models.is_empty() => anyhow::bail!(
            "--replay: scenario {:?} gives no mind a model ([[models]]); there is nothing to replay",
            s.name
        ),
        Some(tape) => ModelCalls::replay(tape, &s, &options)?,
        None if s.models.is_empty() => ModelCalls::live(),
        None => {
            std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
            ModelCalls::record(&out.join(TAPE_FILE), &s, &options)?
        }
    };
    let worlds = seeds * if twin { 2 } else { 1 };
    let total = s.duration_ms.saturating_mul(worlds as u64);
    let mut progress = Progress::new(total);
    let mut ticks = 0u64;
    let outcome = run_minds_with(&s, options, &calls, &mut |world, t| {
        ticks += 1;
        progress.update(s.duration_ms * world as u64 + t, ticks);
    });
    progress.finish();
    // One line: a tape that stops matching says where, and nothing more.
    let outcome = outcome.map_err(|e| anyhow::anyhow!("running {}: {e}", s.name))?;
    let mut files = write_outcome(out, &outcome)?;
    if let ModelCalls::Live(Some(tape)) = &calls {
        files.push(
            tape.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .path()
                .to_owned(),
        );
    }
    let r = &outcome.result;
    let f = &r.figures;
    let mut text = format!(
        "{}: {} minds, {} ticks, {:.1} % stagnant, {} episodes, mean ticks to escape {}, {} strategies shared, {} wire bytes",
        s.name,
        f.minds,
        f.ticks,
        f.stagnant_tick_share * 100.0,
        f.episodes,
        f.mean_ticks_to_escape
            .map_or("-".into(), |m| format!("{m:.2}")),
        f.strategies_shared,
        f.wire_bytes
    );
    if let Some(t) = &r.twin {
        text += &format!(
            "\ntwin: sharing off: mean ticks to escape {}; escape ratio on/off {}",
            t.sharing_off
                .mean_ticks_to_escape
                .map_or("-".into(), |m| format!("{m:.2}")),
            t.escape_ratio.map_or("-".into(), |m| format!("{m:.3}"))
        );
    }
    for file in files {
        text += &format!("\nwrote {}", file.display());
    }
    print_out(&text)
}

/// `mesh-sim minds sweep` and `merge`: every argument is checked before a
/// file is written.
fn minds_sweep(action: MindsCmd) -> anyhow::Result<()> {
    use mesh_sim::minds::MindsScenario;
    use mesh_sim::minds::sweep::{RunState, Shard, merge_dir, prepare, run_sweep};
    match action {
        MindsCmd::Sweep {
            scenario,
            params,
            seed,
            seeds,
            shard,
            out,
        } => {
            let s = MindsScenario::load(&scenario)?;
            let shard = shard.as_deref().map_or(Ok(Shard::ALL), Shard::parse)?;
            let plan = prepare(&s, &params, seed.unwrap_or(s.seed), seeds)?;
            let total = plan.runs.len();
            let report = run_sweep(&s, &plan, shard, &out, &mut |run, state| {
                let line = match state {
                    RunState::Ran(took) => format!(
                        "run {}/{total} {}: {:.1} s",
                        run.index + 1,
                        run.id,
                        took.as_secs_f64()
                    ),
                    RunState::Skipped => {
                        format!("run {}/{total} {}: done before", run.index + 1, run.id)
                    }
                };
                // Progress only: a reader that went away stops nothing.
                let _ = print_out(&line);
            })?;
            print_out(&format!(
                "{}: shard {}/{}: {} of {} runs ran, {} done before; wrote {}",
                s.name,
                shard.index,
                shard.count,
                report.ran,
                report.shard_runs,
                report.skipped,
                out.display()
            ))
        }
        MindsCmd::Merge { dir, out } => {
            let (summary, files) = merge_dir(&dir, out.as_deref())?;
            let mut text = format!(
                "{}: {} runs, {} parameter combinations × {} seeds",
                summary.scenario,
                summary.runs,
                summary.combinations.len(),
                summary.seeds
            );
            for file in files {
                text += &format!("\nwrote {}", file.display());
            }
            print_out(&text)
        }
    }
}

fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    match Cli::parse().command {
        Cmd::Run {
            scenario,
            seed,
            out,
            trace_item,
            nodes,
            items,
            duration_ms,
        } => {
            let mut s = Scenario::load(&scenario)?;
            if let Some(n) = nodes {
                s = s.with_nodes(n).context("--nodes")?;
            }
            if let Some(n) = items {
                s = s.with_items(n).context("--items")?;
            }
            if let Some(ms) = duration_ms {
                s = s.with_duration(ms).context("--duration-ms")?;
            }
            let seed = seed.unwrap_or(s.seed);
            let world = World::build(&s, seed)?;
            if let Some(i) = trace_item
                && i >= world.items.len()
            {
                anyhow::bail!(
                    "--trace-item {i}: the scenario plans {} items",
                    world.items.len()
                );
            }
            let mut progress = Progress::new(s.duration_ms);
            let run = run_watched(&s, seed, &world, trace_item, &mut |now, events| {
                progress.update(now, events)
            });
            progress.finish();
            let mut outcome = run.with_context(|| format!("running {}", s.name))?;
            outcome.report.git_revision = git_revision();
            let files = output::write_all(&out, &outcome)?;
            let mut text = outcome.report.summary();
            for f in files {
                text += &format!("\nwrote {}", f.display());
            }
            if let Some(i) = trace_item {
                text += &format!("\njourney of item {i}:");
                for line in &outcome.trace {
                    text += &format!("\n  {line}");
                }
            }
            print_out(&text)?;
        }
        Cmd::Minds {
            action: Some(action),
            ..
        } => minds_sweep(action)?,
        Cmd::Minds {
            action: None,
            scenario,
            seed,
            out,
            twin,
            seeds,
            replay,
        } => {
            let Some(scenario) = scenario else {
                anyhow::bail!("mesh-sim minds: give SCENARIO.toml, or `sweep` or `merge`");
            };
            minds(&scenario, seed, &out, twin, seeds, replay.as_deref())?;
        }
        Cmd::Redundancy {
            nodes,
            degree,
            items,
            seed,
        } => {
            let setup = redundancy::Setup {
                nodes,
                degree,
                items,
                seed,
                ..redundancy::Setup::issue4()
            };
            let world = redundancy::world(&setup)?;
            let f = redundancy::ours(&setup, &world)?;
            print_out(&format!(
                "ours: {nodes} nodes, degree {degree}, {items} items: {:.3} payload copies per node per item \
                 ({} copies for {} of {} deliveries), {:.0} wire bytes per node per item",
                f.per_node_per_item, f.copies, f.deliveries, f.due, f.wire_bytes_per_node_per_item
            ))?;
        }
    }
    Ok(())
}

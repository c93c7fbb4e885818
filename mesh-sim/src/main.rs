//! The `mesh-sim` command: `mesh-sim run SCENARIO.toml [--seed N] [--out DIR]
//! [--trace-item N] [--nodes N] [--items N] [--duration-ms MS]` runs a
//! scenario (scaled if asked, with a progress bar on runs over a second), writes `result.json`,
//! `timeseries.csv` and `delivery.svg` into DIR and prints a one-paragraph
//! summary (and the journey of one item if asked);
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

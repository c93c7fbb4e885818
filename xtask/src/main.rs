//! `cargo xtask`: the README's two commands on a fresh machine. `cargo xtask
//! run` and `cargo xtask test` first install what is missing (Debian
//! packages, cargo tools, pytest, the test models) and then build and run;
//! `setup` does the set-up alone (`--dry-run` only lists it), `checks`
//! is CI's checks before its tests (`.ci/run`). Built without any porfiry crate, so it compiles before the
//! engine's C++ toolchain is there (docs/architecture.md, "xtask").

mod fetch;
mod install;
mod models;
mod old_binary;
mod plan;
mod probe;
mod process;
mod setup;
mod tasks;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};

use crate::plan::Purpose;

/// Set-up, build and test commands for the Porfiry workspace.
#[derive(Parser)]
#[command(name = "cargo xtask", bin_name = "cargo xtask", version)]
struct Cli {
    #[command(subcommand)]
    command: Task,
}

#[derive(Subcommand)]
enum Task {
    /// Install the build needs, then `cargo run --release -p porfiry-node -- run ARGS`.
    Run {
        /// Arguments for `porfiry run` (after `--`).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<OsString>,
    },
    /// Install the tests' needs and models, then `cargo nextest run --workspace ARGS`.
    Test {
        /// Arguments for `cargo nextest run` (after `--`).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<OsString>,
    },
    /// Only the set-up: install what `run`, `test` or CI needs.
    Setup {
        /// What to prepare the machine for.
        #[arg(long = "for", value_enum, default_value = "test")]
        purpose: Purpose,
        /// Print what is missing and how it would be installed; install nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// CI's checks before its tests: the set-up for CI, then fmt, clippy
    /// and cargo deny (`.ci/run` then runs `cargo xtask test`).
    Checks,
}

fn main() -> ExitCode {
    match dispatch(Cli::parse().command) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("cargo xtask: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn dispatch(task: Task) -> Result<ExitCode> {
    let root = workspace_root()?;
    match task {
        Task::Run { args } => tasks::run(&root, &args),
        Task::Test { args } => tasks::test(&root, &args),
        Task::Setup { purpose, dry_run } => {
            setup::setup(purpose, dry_run)?;
            Ok(ExitCode::SUCCESS)
        }
        Task::Checks => tasks::checks(&root),
    }
}

/// The workspace root: the folder above this crate's.
fn workspace_root() -> Result<PathBuf> {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .context("xtask's manifest folder has no parent")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Task {
        Cli::try_parse_from(std::iter::once("xtask").chain(args.iter().copied()))
            .unwrap()
            .command
    }

    #[test]
    fn arguments_after_the_task_pass_through() {
        let Task::Test { args } = parse(&["test", "--", "-p", "porfiry-skills"]) else {
            panic!("not test");
        };
        assert_eq!(args, ["-p", "porfiry-skills"]);
        let Task::Run { args } = parse(&["run", "--llm-url", "http://x"]) else {
            panic!("not run");
        };
        assert_eq!(args, ["--llm-url", "http://x"]);
    }

    #[test]
    fn setup_defaults_to_test_and_takes_for_and_dry_run() {
        assert!(matches!(
            parse(&["setup"]),
            Task::Setup {
                purpose: Purpose::Test,
                dry_run: false
            }
        ));
        assert!(matches!(
            parse(&["setup", "--for", "ci", "--dry-run"]),
            Task::Setup {
                purpose: Purpose::Ci,
                dry_run: true
            }
        ));
        assert!(Cli::try_parse_from(["xtask", "setup", "--for", "deploy"]).is_err());
    }

    #[test]
    fn the_workspace_root_holds_the_workspace_manifest() {
        let root = workspace_root().unwrap();
        let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
        assert!(
            manifest.contains("\"xtask\""),
            "xtask is not a workspace member"
        );
    }
}

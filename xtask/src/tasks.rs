//! The commands after the set-up: `run` builds and runs the node, `test`
//! runs nextest with the models named, `checks` runs CI's checks before
//! its tests.

use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, ExitCode};

use anyhow::Result;

use crate::models::{self, GEMMA_ENV, SMOLLM2_ENV};
use crate::old_binary::{self, OLD_BINARY_ENV, OLD_COMMIT};
use crate::plan::{Model, Purpose};
use crate::process::{self, cargo};
use crate::setup::setup;

/// `cargo xtask run`: the build needs, then `cargo run --release -p
/// porfiry-node -- run ARGS` in the caller's folder, its exit code handed on.
pub fn run(root: &Path, args: &[OsString]) -> Result<ExitCode> {
    setup(Purpose::Run, false)?;
    let mut cmd = cargo();
    cmd.arg("run")
        .arg("--manifest-path")
        .arg(root.join("Cargo.toml"))
        .args(["--release", "-p", "porfiry-node", "--", "run"])
        .args(args);
    Ok(process::exit_code(process::status(&mut cmd)?))
}

/// `cargo xtask test`: the tests' needs, then [`nextest`].
pub fn test(root: &Path, args: &[OsString]) -> Result<ExitCode> {
    setup(Purpose::Test, false)?;
    Ok(process::exit_code(process::status(&mut nextest(
        root, args,
    )?)?))
}

/// The test entry: `cargo nextest run --workspace ARGS` in the workspace
/// root, with `PORFIRY_TEST_GGUF` and `PORFIRY_TEST_GEMMA_GGUF` naming the
/// cached models and `PORFIRY_OLD_BINARY` the cached old `porfiry`.
pub fn nextest(root: &Path, args: &[OsString]) -> Result<Command> {
    let dir = models::cache_dir_from_env()?;
    let old = old_binary::binary_path(&old_binary::cache_dir_from_env()?, OLD_COMMIT);
    let mut cmd = cargo();
    cmd.current_dir(root)
        .args(nextest_args(args))
        .env(SMOLLM2_ENV, models::model_path(&dir, Model::SmolLm2))
        .env(GEMMA_ENV, models::model_path(&dir, Model::Gemma))
        .env(OLD_BINARY_ENV, old);
    Ok(cmd)
}

/// `nextest run --workspace ARGS`, without `--workspace` when ARGS pick
/// packages themselves: cargo takes `--workspace -p X` as the whole
/// workspace, so `cargo xtask test -- -p X` would otherwise test everything.
/// Only the arguments before a `--` (those after it go to the test
/// binaries) are looked at.
pub fn nextest_args(args: &[OsString]) -> Vec<OsString> {
    let picks_packages = args
        .iter()
        .map(|arg| arg.to_string_lossy())
        .take_while(|arg| arg != "--")
        .any(|arg| {
            arg == "--package"
                || arg.starts_with("--package=")
                || arg.starts_with("-p")
                || arg == "--workspace"
                || arg == "--all"
        });
    let mut out: Vec<OsString> = vec!["nextest".into(), "run".into()];
    if !picks_packages {
        out.push("--workspace".into());
    }
    out.extend(args.iter().cloned());
    out
}

/// `cargo xtask checks`: the set-up for CI, then formatting, lints and
/// the dependency graph; the first failure stops it. `.ci/run` runs the
/// tests after it with the README's own command, `cargo xtask test`.
pub fn checks(root: &Path) -> Result<ExitCode> {
    setup(Purpose::Ci, false)?;
    let step = |title: &str, mut cmd: Command| -> Result<()> {
        println!("== {title}");
        cmd.current_dir(root);
        process::checked(&mut cmd)
    };
    let mut fmt = cargo();
    fmt.args(["fmt", "--all", "--", "--check"]);
    step("cargo fmt", fmt)?;
    let mut clippy = cargo();
    clippy.args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]);
    step("cargo clippy", clippy)?;
    let mut deny = cargo();
    deny.args(["deny", "check", "licenses", "bans", "sources"]);
    step(
        "cargo deny (licences, bans, sources; advisories need the network)",
        deny,
    )?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    #[test]
    fn the_test_entry_names_the_models_and_the_old_binary() {
        let cmd = nextest(Path::new("/src"), &[]).unwrap();
        let env = |name: &str| {
            cmd.get_envs()
                .find(|(key, _)| *key == name)
                .and_then(|(_, value)| value)
                .map(Path::new)
                .unwrap_or_else(|| panic!("{name} is not set"))
        };
        assert!(env(SMOLLM2_ENV).ends_with(models::SMOLLM2_FILE));
        assert!(env(GEMMA_ENV).ends_with(models::GEMMA_FILE));
        assert!(
            env(OLD_BINARY_ENV).ends_with(Path::new(OLD_COMMIT).join("porfiry")),
            "{:?}",
            env(OLD_BINARY_ENV)
        );
    }

    #[test]
    fn the_test_entry_is_the_whole_workspace_unless_packages_are_picked() {
        assert_eq!(nextest_args(&[]), args(&["nextest", "run", "--workspace"]));
        assert_eq!(
            nextest_args(&args(&["--no-fail-fast", "mesh"])),
            args(&["nextest", "run", "--workspace", "--no-fail-fast", "mesh"])
        );
        for picked in [
            &["-p", "porfiry-skills"][..],
            &["-pporfiry-skills"],
            &["--package", "porfiry-skills"],
            &["--package=porfiry-skills"],
        ] {
            let mut expected = args(&["nextest", "run"]);
            expected.extend(args(picked));
            assert_eq!(nextest_args(&args(picked)), expected, "{picked:?}");
        }
        // After `--` the words belong to the test binaries.
        assert_eq!(
            nextest_args(&args(&["--", "-p"])),
            args(&["nextest", "run", "--workspace", "--", "-p"])
        );
    }
}

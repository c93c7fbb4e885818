//! Installs a plan's steps on this machine: one `apt-get update` and one
//! `apt-get install` for every Debian package (through `sudo` unless root),
//! then rustup components, cargo tools, pip packages, the models and the
//! old binary.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::plan::Step;
use crate::probe::find_in_path;
use crate::setup::Installer;
use crate::{fetch, old_binary, process};

/// The installer that changes this machine.
pub struct System;

impl Installer for System {
    fn install(&mut self, steps: &[Step], model_dir: &Path) -> Result<()> {
        let packages: Vec<&str> = steps
            .iter()
            .filter_map(|step| match step {
                Step::Apt { package, .. } => Some(*package),
                _ => None,
            })
            .collect();
        if !packages.is_empty() {
            apt_install(&packages)?;
        }
        for step in steps {
            match step {
                Step::Apt { .. } => {}
                Step::RustupComponent { name, .. } => {
                    process::checked(Command::new("rustup").args(["component", "add", name]))?;
                }
                Step::CargoInstall { krate, .. } => {
                    process::checked(process::cargo().args(["install", krate, "--locked"]))?;
                }
                Step::Pip { package, .. } => {
                    process::checked(
                        Command::new("python3").args(["-m", "pip", "install", "-q", package]),
                    )?;
                }
                Step::FetchModel(model) => fetch::fetch(*model, model_dir)?,
                Step::BuildOldBinary => {
                    let dest = old_binary::binary_path(
                        &old_binary::cache_dir_from_env()?,
                        old_binary::OLD_COMMIT,
                    );
                    // Not fatal: a clone that cannot get the old commit (a
                    // shallow clone offline, say) still runs every other
                    // test; the mixed-version and schema-upgrade tests then say they were skipped.
                    if let Err(e) =
                        old_binary::build(&crate::workspace_root()?, old_binary::OLD_COMMIT, &dest)
                    {
                        eprintln!(
                            "xtask: WARNING: the old porfiry for the mixed-version and schema-upgrade tests was not built, so they will be skipped: {e:#}"
                        );
                    }
                }
            }
        }
        Ok(())
    }
}

/// `apt-get update`, then `apt-get install -y -q` of `packages`, through
/// `sudo` when not root.
fn apt_install(packages: &[&str]) -> Result<()> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    if find_in_path("apt-get", &path).is_none() {
        bail!(
            "apt-get is missing (not Debian or Ubuntu?): install {} with this system's package manager",
            packages.join(" ")
        );
    }
    let sudo = !is_root()?;
    if sudo && find_in_path("sudo", &path).is_none() {
        bail!(
            "installing {} needs root, and sudo is missing: run as root",
            packages.join(" ")
        );
    }
    let apt = || {
        if sudo {
            // sudo resets the environment: `env` sets the variable inside it.
            let mut cmd = Command::new("sudo");
            cmd.args(["env", "DEBIAN_FRONTEND=noninteractive", "apt-get"]);
            cmd
        } else {
            let mut cmd = Command::new("apt-get");
            cmd.env("DEBIAN_FRONTEND", "noninteractive");
            cmd
        }
    };
    process::checked(apt().args(["update", "-q"]))?;
    process::checked(apt().args(["install", "-y", "-q"]).args(packages))
}

/// Whether this process runs as root (`id -u` prints 0).
fn is_root() -> Result<bool> {
    let out = Command::new("id")
        .arg("-u")
        .output()
        .context("could not run `id -u`")?;
    Ok(String::from_utf8_lossy(&out.stdout).trim() == "0")
}

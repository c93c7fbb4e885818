//! `porfiry restore FILE --data-dir DIR`: makes the node of a backup again
//! — the same identity key (so the same peer id, and its friends still know
//! it), the same database, the person's skills, and the settings file it
//! ran with, as `DIR/porfiry.toml`. Started with `porfiry run`, it catches
//! up with its friends for what it missed, as any node back online does.
//! The reading, checking and unpacking are `porfiry_backup::restore_into`'s
//! (nothing is written unless the whole backup opens); this command asks
//! the passphrase and says what it made. DIR must not exist or be empty.

use std::path::{Path, PathBuf};

use anyhow::bail;
use clap::Args;

use crate::commands::passphrase::{PassphraseArgs, Purpose, passphrase};
use porfiry_backup::check_target;
use porfiry_mesh::data_dir::DataDir;

/// Flags of `porfiry restore` (the data dir is the global `--data-dir`).
#[derive(Debug, Clone, Args)]
pub struct RestoreArgs {
    /// The backup file `porfiry backup` wrote.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Where the passphrase comes from.
    #[command(flatten)]
    pub passphrase: PassphraseArgs,
}

/// `porfiry restore`: `dir` is the `--data-dir` given (required here: a
/// restore never lands in a default place by surprise).
pub fn restore(dir: Option<&Path>, args: &RestoreArgs) -> anyhow::Result<String> {
    let Some(dir) = dir else {
        bail!("restore needs --data-dir DIR: the (empty) folder to make the node in");
    };
    check_target(dir)?;
    let pass = passphrase(&args.passphrase, Purpose::Open)?;
    restore_into(&args.file, pass.as_bytes(), &DataDir::new(dir))
}

/// Restores `file` (sealed with `pass`) into `dir`; returns the line to print.
pub fn restore_into(file: &Path, pass: &[u8], dir: &DataDir) -> anyhow::Result<String> {
    let restored = porfiry_backup::restore_into(file, pass, dir)?;
    let settings = match &restored.settings {
        Some(path) => format!(
            "; its settings file is {} (run it with --config, or copy it to {})",
            path.display(),
            crate::commands::run_config::DEFAULT_CONFIG_PATH
        ),
        None => String::new(),
    };
    Ok(format!(
        "restored node {} into {} (backup of {}, schema version {}){settings}",
        restored.manifest.peer_id,
        dir.root().display(),
        restored.manifest.made_by,
        restored.schema
    ))
}

#[cfg(test)]
#[path = "backup_tests.rs"]
mod tests;

//! `porfiry backup FILE`: one encrypted file holding everything that makes
//! this node itself — the identity key, a consistent copy of the database
//! taken while the node runs, the person's skills, and the settings file
//! `run` reads (`--config`, else /etc/porfiry/porfiry.toml when it exists).
//! What goes in, the format and the encryption are `porfiry_backup`'s
//! (shared with the family page's download); this command asks the
//! passphrase, checks the settings file and says what it wrote. The file is
//! written beside FILE under a temporary name and renamed into place when
//! whole; an existing FILE is never replaced.

use std::path::{Path, PathBuf};

use anyhow::bail;
use clap::Args;

use crate::commands::passphrase::{PassphraseArgs, Purpose, passphrase};
use porfiry_backup::{KdfCost, Source, backup_to_file, check_source};
use porfiry_mesh::data_dir::DataDir;

/// Flags of `porfiry backup`.
#[derive(Debug, Clone, Args)]
pub struct BackupArgs {
    /// The backup file to write (must not exist yet).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Where the passphrase comes from.
    #[command(flatten)]
    pub passphrase: PassphraseArgs,
    /// The settings file to take along. Default: /etc/porfiry/porfiry.toml
    /// when it exists.
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
}

/// `porfiry backup`: asks the passphrase and writes the file; the settings
/// file is `--config`'s, else `default_config` when it exists.
pub fn backup(dir: &DataDir, args: &BackupArgs, default_config: &Path) -> anyhow::Result<String> {
    check_source(dir)?;
    if args.file.exists() {
        bail!(
            "{} already exists; nothing was written",
            args.file.display()
        );
    }
    let settings = match &args.config {
        Some(given) => Some(given.clone()),
        None => default_config
            .exists()
            .then(|| default_config.to_path_buf()),
    };
    let pass = passphrase(&args.passphrase, Purpose::Seal)?;
    let cost = KdfCost::default();
    write_backup(dir, &args.file, pass.as_bytes(), cost, settings.as_deref())
}

/// Writes the backup of `dir` (and the `settings` file, if any) to `file`,
/// sealed with `pass` at `cost`; returns the line to print.
pub fn write_backup(
    dir: &DataDir,
    file: &Path,
    pass: &[u8],
    cost: KdfCost,
    settings: Option<&Path>,
) -> anyhow::Result<String> {
    check_source(dir)?;
    // Checked as a settings file before anything is written.
    if let Some(path) = settings {
        crate::commands::run_config::read_table(path)?;
    }
    let source = Source {
        dir,
        settings,
        made_by: crate::cli::VERSION,
    };
    let written = backup_to_file(&source, file, pass, cost)?;
    Ok(format!(
        "backed up node {} to {} ({} bytes: identity key, database of {} bytes, {} skill files{})",
        written.manifest.peer_id,
        file.display(),
        written.bytes,
        written.db_bytes,
        written.skill_files,
        if written.settings {
            ", settings file"
        } else {
            ""
        }
    ))
}

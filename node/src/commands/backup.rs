//! `porfiry backup FILE`: one encrypted file holding everything that makes
//! this node itself — the identity key (its friendships), a consistent copy
//! of the database taken with SQLite's online backup while the node runs
//! (memory, friends, settings, the model registry, which holds no secrets:
//! it names environment variables, never keys), the person's skills, and
//! the settings file `run` reads (`--config`, else /etc/porfiry/porfiry.toml
//! when it exists).
//! Not in it: model files (large; `porfiry model pull` fetches them again),
//! the API token (a new one is made on the first start) and runtime files.
//!
//! Inside the encryption ([`crate::commands::backup_crypt`]) is a tar
//! archive: `manifest.json`, `identity.key`, `porfiry.db`, `skills/…` and
//! `porfiry.toml` when there is a settings file. The
//! file is written beside FILE under a temporary name and renamed into
//! place when whole; an existing FILE is never replaced.

use std::io::{BufWriter, Write as _};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context as _, bail};
use clap::Args;
use serde::{Deserialize, Serialize};

use crate::commands::backup_crypt::{KdfCost, Sealer};
use crate::commands::passphrase::{PassphraseArgs, Purpose, passphrase};
use porfiry_mesh::data_dir::{DB_FILE, DataDir, IDENTITY_FILE, SKILLS_DIR};
use porfiry_protocol::NodeKey;

/// The manifest's name inside the archive.
pub const MANIFEST: &str = "manifest.json";
/// The settings file's name inside the archive (and in a restored data dir).
pub const SETTINGS: &str = "porfiry.toml";
/// The archive layout this version writes and reads.
pub const FORMAT: u32 = 1;
/// How long the snapshot waits for a writer's lock before giving up: 30 s,
/// far above any one write of the node's (milliseconds).
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);
/// Pause before trying a busy source again (SQLite's backup answers BUSY
/// rather than waiting): 50 ms, a few of the node's writes.
const BUSY_PAUSE: Duration = Duration::from_millis(50);
/// Most files taken from the skills folder: 10,000. A person's skills are
/// tens of files; a folder with more is not skills, and is refused rather
/// than archived without bound.
pub const MAX_SKILL_FILES: usize = 10_000;

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

/// What a backup says about itself.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Manifest {
    /// [`FORMAT`].
    pub format: u32,
    /// The node's peer id (its identity key's).
    pub peer_id: String,
    /// When it was made (ms since the Unix epoch).
    pub made_ms: u64,
    /// `porfiry --version` of the binary that made it.
    pub made_by: String,
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

/// Refuses a data dir without a node before the passphrase is asked.
fn check_source(dir: &DataDir) -> anyhow::Result<()> {
    if !dir.identity_path().exists() || !dir.db_path().exists() {
        bail!("no node in {}: nothing to back up", dir.root().display());
    }
    Ok(())
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
    // Read, and checked as a settings file, before anything is written.
    let settings = match settings {
        Some(path) => {
            crate::commands::run_config::read_table(path)?;
            Some(std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?)
        }
        None => None,
    };
    let key = NodeKey::load(&dir.identity_path())?;
    let identity = std::fs::read(dir.identity_path())
        .with_context(|| format!("cannot read {}", dir.identity_path().display()))?;
    let scratch = tempfile::tempdir().context("cannot make a scratch folder")?;
    let snapshot = scratch.path().join(DB_FILE);
    snapshot_db(&dir.db_path(), &snapshot)?;
    let skills = skill_files(&dir.skills_dir())?;
    let manifest = Manifest {
        format: FORMAT,
        peer_id: key.peer_id().to_string(),
        made_ms: porfiry_mesh::clock::now_ms(),
        made_by: crate::cli::VERSION.to_owned(),
    };
    let parent = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut out = tempfile::Builder::new()
        .prefix(".porfiry-backup-")
        .tempfile_in(&parent)
        .with_context(|| format!("cannot write in {}", parent.display()))?;
    let sealer = Sealer::new(BufWriter::new(out.as_file_mut()), pass, cost)?;
    let mut tar = tar::Builder::new(sealer);
    append(&mut tar, MANIFEST, &serde_json::to_vec_pretty(&manifest)?)?;
    append(&mut tar, IDENTITY_FILE, &identity)?;
    let db = std::fs::File::open(&snapshot)?;
    let db_bytes = db.metadata()?.len();
    let mut header = file_header(db_bytes);
    tar.append_data(&mut header, DB_FILE, db)?;
    if let Some(text) = &settings {
        append(&mut tar, SETTINGS, text)?;
    }
    for (relative, path) in &skills {
        let bytes =
            std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        append(&mut tar, &format!("{SKILLS_DIR}/{relative}"), &bytes)?;
    }
    let sealer = tar.into_inner()?;
    sealer.finish()?.flush()?;
    out.as_file().sync_all()?;
    let size = out.as_file().metadata()?.len();
    out.persist_noclobber(file)
        .map_err(|e| e.error)
        .with_context(|| format!("cannot put the backup at {}", file.display()))?;
    Ok(format!(
        "backed up node {} to {} ({size} bytes: identity key, database of {db_bytes} bytes, {} skill files{})",
        manifest.peer_id,
        file.display(),
        skills.len(),
        if settings.is_some() {
            ", settings file"
        } else {
            ""
        }
    ))
}

/// A consistent copy of the live database, in one step (one read
/// transaction: writers go on under WAL), checked before it is sealed.
pub fn snapshot_db(live: &Path, copy: &Path) -> anyhow::Result<()> {
    use rusqlite::OpenFlags;
    // Read-only: a backup run by another user (root, of the service's
    // files) must create nothing in the data dir.
    let source = rusqlite::Connection::open_with_flags(
        live,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .with_context(|| format!("cannot open {}", live.display()))?;
    source.busy_timeout(BUSY_TIMEOUT)?;
    let mut target = rusqlite::Connection::open(copy)?;
    {
        let backup = rusqlite::backup::Backup::new(&source, &mut target)?;
        // Every page in one step (one read transaction), so the copy is one
        // snapshot; a busy source is tried again after a short pause.
        backup
            .run_to_completion(std::ffi::c_int::MAX, BUSY_PAUSE, None)
            .with_context(|| format!("the online backup of {} failed", live.display()))?;
    }
    let verdict: String = target.query_row("PRAGMA integrity_check", [], |r| r.get(0))?;
    if verdict != "ok" {
        bail!("the database copy fails its integrity check: {verdict}");
    }
    target.pragma_update(None, "journal_mode", "DELETE")?;
    Ok(())
}

/// The skills folder's regular files, as (path inside `skills/`, path);
/// links and other special files are left out.
fn skill_files(root: &Path) -> anyhow::Result<Vec<(String, PathBuf)>> {
    let mut found = Vec::new();
    if !root.exists() {
        return Ok(found);
    }
    let mut pending = vec![root.to_path_buf()];
    while let Some(folder) = pending.pop() {
        let listing = std::fs::read_dir(&folder)
            .with_context(|| format!("cannot list {}", folder.display()))?;
        for entry in listing {
            let entry = entry?;
            let kind = entry.file_type()?;
            if kind.is_dir() {
                pending.push(entry.path());
            } else if kind.is_file() {
                let path = entry.path();
                let relative = path
                    .strip_prefix(root)?
                    .to_str()
                    .with_context(|| format!("{} is not UTF-8", path.display()))?
                    .to_owned();
                found.push((relative, path));
                if found.len() > MAX_SKILL_FILES {
                    bail!(
                        "{} holds over {MAX_SKILL_FILES} files: not skills",
                        root.display()
                    );
                }
            }
        }
    }
    found.sort();
    Ok(found)
}

/// A private regular file's tar header.
fn file_header(size: u64) -> tar::Header {
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(tar::EntryType::Regular);
    header.set_size(size);
    header.set_mode(0o600);
    header.set_mtime(0);
    header.set_cksum();
    header
}

/// Appends one file from memory.
fn append<W: std::io::Write>(
    tar: &mut tar::Builder<W>,
    path: &str,
    bytes: &[u8],
) -> anyhow::Result<()> {
    let mut header = file_header(bytes.len() as u64);
    tar.append_data(&mut header, path, bytes)?;
    Ok(())
}

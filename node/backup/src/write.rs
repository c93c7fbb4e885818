//! Making a backup: one sealed file holding everything that makes a node
//! itself — the identity key (its friendships), a consistent copy of the
//! database taken with SQLite's online backup while the node runs (memory,
//! friends, settings, the model registry, which holds no secrets: it names
//! environment variables, never keys), the person's skills, and the
//! settings file the node runs with, when the caller names one.
//! Not in it: model files (large; `porfiry model pull` fetches them again),
//! the API token (a new one is made on the first start) and runtime files.
//!
//! Memory stays bounded whatever the database's size: the snapshot goes to
//! a scratch file and streams through tar and the sealer ([`crate::crypt`])
//! in 64 KiB chunks into the caller's writer — a file beside the target
//! ([`backup_to_file`], `porfiry backup`) or an unnamed temporary file
//! ([`backup_to_temp_file`], the API's download).

use std::fs::File;
use std::io::{self, BufWriter, Read as _, Seek as _, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use porfiry_mesh::data_dir::{DB_FILE, DataDir, IDENTITY_FILE, SKILLS_DIR};
use porfiry_protocol::NodeKey;

use crate::archive::{FORMAT, MANIFEST, Manifest, SETTINGS, file_header};
use crate::crypt::{KdfCost, Sealer};
use crate::error::BackupError;

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
/// Largest settings file taken: 1 MiB, the most `porfiry run` reads as
/// one. A settings file is a few hundred bytes.
pub const MAX_SETTINGS_BYTES: u64 = 1 << 20;

/// What a backup is made of.
#[derive(Debug, Clone, Copy)]
pub struct Source<'a> {
    /// The node's data dir (it may be running).
    pub dir: &'a DataDir,
    /// The settings file to take along, if any (the caller has checked it
    /// is one; it is stored as it is).
    pub settings: Option<&'a Path>,
    /// The version of the program making it, for the manifest.
    pub made_by: &'a str,
}

/// What went into a backup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// Its manifest.
    pub manifest: Manifest,
    /// The sealed file's length in bytes.
    pub bytes: u64,
    /// The database snapshot's size in bytes.
    pub db_bytes: u64,
    /// How many skill files.
    pub skill_files: usize,
    /// Whether a settings file is in it.
    pub settings: bool,
}

/// Refuses a data dir without a node (before a passphrase is asked).
pub fn check_source(dir: &DataDir) -> Result<(), BackupError> {
    if !dir.identity_path().exists() || !dir.db_path().exists() {
        return Err(BackupError::NoNode(dir.root().to_path_buf()));
    }
    Ok(())
}

/// Seals the backup of `source` with `pass` at `cost` into `out`; returns
/// `out` (flushed) and what went in. Everything is read and checked before
/// the first byte is sealed.
pub fn write_backup<W: Write>(
    source: &Source<'_>,
    out: W,
    pass: &[u8],
    cost: KdfCost,
) -> Result<(W, Written), BackupError> {
    let dir = source.dir;
    check_source(dir)?;
    let settings = source.settings.map(read_settings).transpose()?;
    let key = NodeKey::load(&dir.identity_path())?;
    let identity = std::fs::read(dir.identity_path())
        .map_err(|e| BackupError::file("read", dir.identity_path(), e))?;
    let scratch = tempfile::tempdir()
        .map_err(|e| BackupError::file("make a scratch folder in", std::env::temp_dir(), e))?;
    let snapshot = scratch.path().join(DB_FILE);
    snapshot_db(&dir.db_path(), &snapshot)?;
    let skills = skill_files(&dir.skills_dir())?;
    let manifest = Manifest {
        format: FORMAT,
        peer_id: key.peer_id().to_string(),
        made_ms: porfiry_mesh::clock::now_ms(),
        made_by: source.made_by.to_owned(),
    };
    let db = File::open(&snapshot).map_err(|e| BackupError::file("read", &snapshot, e))?;
    let db_bytes = db
        .metadata()
        .map_err(|e| BackupError::file("read", &snapshot, e))?
        .len();

    let counted = Counted { out, bytes: 0 };
    let sealer = Sealer::new(BufWriter::new(counted), pass, cost).map_err(BackupError::Write)?;
    let mut tar = tar::Builder::new(sealer);
    let manifest_json = serde_json::to_vec_pretty(&manifest).map_err(BackupError::Manifest)?;
    append(&mut tar, MANIFEST, &manifest_json)?;
    append(&mut tar, IDENTITY_FILE, &identity)?;
    tar.append_data(&mut file_header(db_bytes), DB_FILE, db)
        .map_err(BackupError::Write)?;
    if let Some(text) = &settings {
        append(&mut tar, SETTINGS, text)?;
    }
    for (relative, path) in &skills {
        let bytes = std::fs::read(path).map_err(|e| BackupError::file("read", path, e))?;
        append(&mut tar, &format!("{SKILLS_DIR}/{relative}"), &bytes)?;
    }
    let sealer = tar.into_inner().map_err(BackupError::Write)?;
    let counted = sealer
        .finish()
        .map_err(BackupError::Write)?
        .into_inner()
        .map_err(|e| BackupError::Write(e.into_error()))?;
    let written = Written {
        manifest,
        bytes: counted.bytes,
        db_bytes,
        skill_files: skills.len(),
        settings: settings.is_some(),
    };
    Ok((counted.out, written))
}

/// Writes the backup to `file`, which must not exist: beside it under a
/// temporary name, synced, then renamed into place when whole. An existing
/// file is never replaced.
pub fn backup_to_file(
    source: &Source<'_>,
    file: &Path,
    pass: &[u8],
    cost: KdfCost,
) -> Result<Written, BackupError> {
    check_source(source.dir)?;
    let parent = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut out = tempfile::Builder::new()
        .prefix(".porfiry-backup-")
        .tempfile_in(&parent)
        .map_err(|e| BackupError::file("write in", &parent, e))?;
    let (_, written) = write_backup(source, out.as_file_mut(), pass, cost)?;
    out.as_file()
        .sync_all()
        .map_err(|e| BackupError::file("write", out.path(), e))?;
    out.persist_noclobber(file)
        .map_err(|e| BackupError::file("put the backup at", file, e.error))?;
    Ok(written)
}

/// Writes the backup to an unnamed temporary file in `folder` (it has no
/// name, so nothing is left behind however the process ends; its space is
/// freed when the file is closed) and rewinds it for reading.
pub fn backup_to_temp_file(
    source: &Source<'_>,
    folder: &Path,
    pass: &[u8],
    cost: KdfCost,
) -> Result<(File, Written), BackupError> {
    check_source(source.dir)?;
    let out =
        tempfile::tempfile_in(folder).map_err(|e| BackupError::file("write in", folder, e))?;
    let (mut out, written) = write_backup(source, out, pass, cost)?;
    out.rewind()
        .map_err(|e| BackupError::file("read back a backup in", folder, e))?;
    Ok((out, written))
}

/// A consistent copy of the live database, in one step (one read
/// transaction: writers go on under WAL), checked before it is sealed.
pub fn snapshot_db(live: &Path, copy: &Path) -> Result<(), BackupError> {
    use rusqlite::OpenFlags;
    let failed = |error| BackupError::Snapshot {
        path: live.to_path_buf(),
        error,
    };
    // Read-only: a backup run by another user (root, of the service's
    // files) must create nothing in the data dir.
    let source = rusqlite::Connection::open_with_flags(
        live,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(failed)?;
    source.busy_timeout(BUSY_TIMEOUT).map_err(failed)?;
    let mut target = rusqlite::Connection::open(copy).map_err(failed)?;
    {
        let backup = rusqlite::backup::Backup::new(&source, &mut target).map_err(failed)?;
        // Every page in one step (one read transaction), so the copy is one
        // snapshot; a busy source is tried again after a short pause.
        backup
            .run_to_completion(std::ffi::c_int::MAX, BUSY_PAUSE, None)
            .map_err(failed)?;
    }
    let verdict: String = target
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .map_err(failed)?;
    if verdict != "ok" {
        return Err(BackupError::Integrity(verdict));
    }
    target
        .pragma_update(None, "journal_mode", "DELETE")
        .map_err(failed)?;
    Ok(())
}

/// The settings file's bytes (at most [`MAX_SETTINGS_BYTES`]).
fn read_settings(path: &Path) -> Result<Vec<u8>, BackupError> {
    let mut bytes = Vec::new();
    File::open(path)
        .and_then(|f| f.take(MAX_SETTINGS_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| BackupError::file("read", path, e))?;
    if bytes.len() as u64 > MAX_SETTINGS_BYTES {
        return Err(BackupError::SettingsTooLarge(path.to_path_buf()));
    }
    Ok(bytes)
}

/// The skills folder's regular files, as (path inside `skills/`, path);
/// links and other special files are left out.
fn skill_files(root: &Path) -> Result<Vec<(String, PathBuf)>, BackupError> {
    let mut found = Vec::new();
    if !root.exists() {
        return Ok(found);
    }
    let mut pending = vec![root.to_path_buf()];
    while let Some(folder) = pending.pop() {
        let list = |e| BackupError::file("list", &folder, e);
        for entry in std::fs::read_dir(&folder).map_err(list)? {
            let entry = entry.map_err(list)?;
            let kind = entry.file_type().map_err(list)?;
            if kind.is_dir() {
                pending.push(entry.path());
            } else if kind.is_file() {
                let path = entry.path();
                let relative = path
                    .strip_prefix(root)
                    .ok()
                    .and_then(Path::to_str)
                    .ok_or_else(|| BackupError::NotUtf8(path.clone()))?
                    .to_owned();
                found.push((relative, path));
                if found.len() > MAX_SKILL_FILES {
                    return Err(BackupError::TooManySkills(root.to_path_buf()));
                }
            }
        }
    }
    found.sort();
    Ok(found)
}

/// Appends one file from memory.
fn append<W: Write>(
    tar: &mut tar::Builder<W>,
    path: &str,
    bytes: &[u8],
) -> Result<(), BackupError> {
    let mut header = file_header(bytes.len() as u64);
    tar.append_data(&mut header, path, bytes)
        .map_err(BackupError::Write)
}

/// A writer that counts the bytes it passes on.
struct Counted<W> {
    out: W,
    bytes: u64,
}

impl<W: Write> Write for Counted<W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let n = self.out.write(data)?;
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

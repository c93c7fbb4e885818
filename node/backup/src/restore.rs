//! Restoring a backup: the node of a backup made again in an empty data dir
//! — the same identity key (so the same peer id, and its friends still know
//! it), the same database (friends, memory, settings), the person's skills,
//! and the settings file it ran with, as `DIR/porfiry.toml`.
//!
//! Nothing is written unless the whole backup opens: a first pass reads and
//! authenticates every byte and checks every name in the archive; only then
//! is it unpacked into a staging folder beside DIR, checked (the key's peer
//! id against the manifest, the database's integrity and schema), and
//! renamed into place. DIR must not exist or be empty.

use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};

use porfiry_mesh::data_dir::{DB_FILE, DataDir, IDENTITY_FILE};
use porfiry_protocol::NodeKey;

use crate::archive::{FORMAT, MANIFEST, Manifest, SETTINGS, allowed_name};
use crate::crypt::Opener;
use crate::error::BackupError;

/// Largest manifest read: 64 KiB (it is a few hundred bytes).
const MAX_MANIFEST_BYTES: u64 = 64 * 1024;

/// What a restore made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restored {
    /// The backup's manifest (its peer id is the restored node's).
    pub manifest: Manifest,
    /// The restored database's schema version (after any migration).
    pub schema: u32,
    /// The settings file, when the backup held one (`DIR/porfiry.toml`).
    pub settings: Option<PathBuf>,
}

/// Refuses a target that holds anything.
pub fn check_target(dir: &Path) -> Result<(), BackupError> {
    if dir.join(IDENTITY_FILE).exists() {
        return Err(BackupError::Occupied(dir.to_path_buf()));
    }
    let not_empty = match std::fs::read_dir(dir) {
        Ok(mut entries) => entries.next().is_some(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => false,
        Err(e) => return Err(BackupError::file("list", dir, e)),
    };
    if not_empty {
        return Err(BackupError::NotEmpty(dir.to_path_buf()));
    }
    Ok(())
}

/// Restores `file` (sealed with `pass`) into `dir`, which must be empty or
/// absent.
pub fn restore_into(file: &Path, pass: &[u8], dir: &DataDir) -> Result<Restored, BackupError> {
    check_target(dir.root())?;
    let fail = |reason: BackupError| BackupError::Refused {
        file: file.to_path_buf(),
        reason: Box::new(reason),
    };
    // Pass 1: every byte authenticated, every name checked; nothing written.
    let manifest = walk(file, pass, None).map_err(fail)?;
    // Pass 2: unpack beside the target, check, rename into place.
    let root = dir.root();
    let parent = match root.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).map_err(|e| BackupError::file("create", &parent, e))?;
    let staging = tempfile::Builder::new()
        .prefix(".porfiry-restore-")
        .tempdir_in(&parent)
        .map_err(|e| BackupError::file("write in", &parent, e))?;
    // The data dir is the owner's alone, whatever the umask.
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(staging.path(), std::fs::Permissions::from_mode(0o700))
        .map_err(|e| BackupError::file("write in", staging.path(), e))?;
    walk(file, pass, Some(staging.path())).map_err(fail)?;
    let staged = DataDir::new(staging.path());
    let key = NodeKey::load(&staged.identity_path()).map_err(|e| fail(e.into()))?;
    if key.peer_id().to_string() != manifest.peer_id {
        return Err(fail(BackupError::KeyMismatch));
    }
    let schema = {
        let store = porfiry_storage::Store::open(staged.db_path()).map_err(|e| fail(e.into()))?;
        store.schema_version().map_err(|e| fail(e.into()))?
    };
    if root.exists() {
        std::fs::remove_dir(root).map_err(|e| BackupError::file("replace", root, e))?;
    }
    let staged_path = staging.keep();
    if let Err(e) = std::fs::rename(&staged_path, root) {
        let _ = std::fs::remove_dir_all(&staged_path);
        return Err(BackupError::file("move the restored node to", root, e));
    }
    let settings = root.join(SETTINGS);
    Ok(Restored {
        manifest,
        schema,
        settings: settings.exists().then_some(settings),
    })
}

/// Reads the whole backup; with `into`, writes its files there. Returns
/// the manifest.
fn walk(file: &Path, pass: &[u8], into: Option<&Path>) -> Result<Manifest, BackupError> {
    let input = std::fs::File::open(file).map_err(|e| BackupError::file("open", file, e))?;
    let opener = Opener::new(BufReader::new(input), pass).map_err(BackupError::reading)?;
    let mut archive = tar::Archive::new(opener);
    let mut manifest: Option<Manifest> = None;
    let (mut has_key, mut has_db) = (false, false);
    for entry in archive.entries().map_err(BackupError::reading)? {
        let mut entry = entry.map_err(BackupError::reading)?;
        let name = entry.path().map_err(BackupError::reading)?.into_owned();
        if !entry.header().entry_type().is_file() {
            return Err(BackupError::UnexpectedKind(name));
        }
        if !allowed_name(&name) {
            return Err(BackupError::UnexpectedName(name));
        }
        has_key |= name == Path::new(IDENTITY_FILE);
        has_db |= name == Path::new(DB_FILE);
        if name == Path::new(MANIFEST) {
            let mut text = String::new();
            (&mut entry)
                .take(MAX_MANIFEST_BYTES)
                .read_to_string(&mut text)
                .map_err(BackupError::reading)?;
            let read: Manifest = serde_json::from_str(&text).map_err(BackupError::Manifest)?;
            if read.format != FORMAT {
                return Err(BackupError::Format(read.format));
            }
            manifest = Some(read);
        }
        match into {
            None => {
                io::copy(&mut entry, &mut io::sink()).map_err(BackupError::reading)?;
            }
            Some(root) => write_private(&root.join(&name), &mut entry)?,
        }
    }
    if !has_key || !has_db {
        return Err(BackupError::Incomplete);
    }
    manifest.ok_or(BackupError::NoManifest)
}

/// Writes one file with mode 0600 (folders 0700): the key and the node's
/// data are the owner's alone.
fn write_private(path: &Path, content: &mut impl Read) -> Result<(), BackupError> {
    use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
    if let Some(folder) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(folder)
            .map_err(|e| BackupError::file("create", folder, e))?;
    }
    let mut out = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| BackupError::file("write", path, e))?;
    // A read failure here is the backup's (it was authenticated in pass 1,
    // so it is the disk or a change since); a write failure is the target's.
    io::copy(content, &mut out).map_err(|e| match crate::crypt::crypt_error(&e) {
        Some(_) => BackupError::reading(e),
        None => BackupError::file("write", path, e),
    })?;
    out.sync_all()
        .map_err(|e| BackupError::file("write", path, e))?;
    Ok(())
}

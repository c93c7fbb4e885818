//! Why a backup could not be made or restored: each one line that names the
//! file and what to do, as `porfiry` prints it and the API answers it.

use std::io;
use std::path::PathBuf;

use crate::archive::FORMAT;
use crate::crypt::{CryptError, crypt_error};
use crate::write::{MAX_SETTINGS_BYTES, MAX_SKILL_FILES};

/// A backup or restore failure.
#[derive(Debug, thiserror::Error)]
pub enum BackupError {
    /// The data dir has no identity key or no database.
    #[error("no node in {0}: nothing to back up")]
    NoNode(PathBuf),
    /// A file or folder could not be read, made or written.
    #[error("cannot {what} {path}: {error}")]
    File {
        /// What was being done: `read`, `write in`, `list`, …
        what: &'static str,
        /// The path.
        path: PathBuf,
        /// Why.
        error: io::Error,
    },
    /// The settings file is too large to be one.
    #[error("{0} is larger than {MAX_SETTINGS_BYTES} bytes; not a settings file")]
    SettingsTooLarge(PathBuf),
    /// The identity key could not be read.
    #[error(transparent)]
    Key(#[from] porfiry_protocol::IdentityError),
    /// SQLite's online backup of the live database failed.
    #[error("the online backup of {path} failed: {error}")]
    Snapshot {
        /// The live database.
        path: PathBuf,
        /// SQLite's reason.
        error: rusqlite::Error,
    },
    /// The snapshot fails `PRAGMA integrity_check`.
    #[error("the database copy fails its integrity check: {0}")]
    Integrity(String),
    /// The skills folder holds more than [`MAX_SKILL_FILES`] files.
    #[error("{0} holds over {MAX_SKILL_FILES} files: not skills")]
    TooManySkills(PathBuf),
    /// A skill file's name is not UTF-8 (tar names must be).
    #[error("{0} is not UTF-8")]
    NotUtf8(PathBuf),
    /// Writing the sealed archive failed (the disk, most often).
    #[error("writing the backup: {0}")]
    Write(io::Error),
    /// Reading the sealed archive failed (not a decryption failure).
    #[error("reading the backup: {0}")]
    Read(io::Error),
    /// The encryption refused the file (passphrase, damage, format).
    #[error(transparent)]
    Crypt(#[from] CryptError),
    /// The archive holds something that is not a regular file.
    #[error("the archive holds {0} of an unexpected kind")]
    UnexpectedKind(PathBuf),
    /// The archive holds a name a backup never has.
    #[error("the archive holds an unexpected name {0}")]
    UnexpectedName(PathBuf),
    /// The identity key or the database is missing from the archive.
    #[error("the archive lacks the identity key or the database")]
    Incomplete,
    /// No manifest in the archive.
    #[error("the archive has no manifest")]
    NoManifest,
    /// The manifest is not one.
    #[error("its manifest: {0}")]
    Manifest(serde_json::Error),
    /// The manifest names another format.
    #[error("backup format {0} (this porfiry reads {FORMAT})")]
    Format(u32),
    /// The restored key is not the one the manifest names.
    #[error("its key does not match its manifest")]
    KeyMismatch,
    /// The restored database does not open.
    #[error(transparent)]
    Store(#[from] porfiry_storage::StorageError),
    /// The restore target holds a node already.
    #[error("{0} already holds a node; restore into an empty folder")]
    Occupied(PathBuf),
    /// The restore target holds something.
    #[error("{0} is not empty; restore into an empty folder")]
    NotEmpty(PathBuf),
    /// The backup file was refused before anything was written.
    #[error("cannot restore {file}: {reason}; nothing was written")]
    Refused {
        /// The backup file.
        file: PathBuf,
        /// Why.
        reason: Box<BackupError>,
    },
}

impl BackupError {
    /// `what` on `path` failed with `error`.
    pub(crate) fn file(what: &'static str, path: impl Into<PathBuf>, error: io::Error) -> Self {
        BackupError::File {
            what,
            path: path.into(),
            error,
        }
    }

    /// An I/O error from reading the sealed archive: the [`CryptError`]
    /// inside it when the encryption refused a chunk.
    pub(crate) fn reading(error: io::Error) -> Self {
        match crypt_error(&error) {
            Some(refused) => BackupError::Crypt(refused.clone()),
            None => BackupError::Read(error),
        }
    }

    /// Whether the disk (or its quota) is full: nothing more can be written.
    pub fn is_disk_full(&self) -> bool {
        let full = |e: &io::Error| {
            matches!(
                e.kind(),
                io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded
            )
        };
        match self {
            BackupError::File { error, .. } | BackupError::Write(error) => full(error),
            BackupError::Snapshot { error, .. } => {
                error.sqlite_error_code() == Some(rusqlite::ErrorCode::DiskFull)
            }
            BackupError::Refused { reason, .. } => reason.is_disk_full(),
            _ => false,
        }
    }
}

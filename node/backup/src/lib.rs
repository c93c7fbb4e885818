//! A node's backup file, in one place for everyone who makes or reads one:
//! `porfiry backup` / `porfiry restore` (the CLI) and the family page's
//! `POST /api/backup` (the API).
//!
//! **What it offers**: [`write_backup`] (into any writer),
//! [`backup_to_file`] (beside a target, renamed when whole) and
//! [`backup_to_temp_file`] (an unnamed file, for a download) make the
//! sealed file of a data dir, running or not; [`restore_into`] makes its
//! node again in an empty data dir; [`passphrase::check`] is the rule a
//! passphrase follows; [`crypt`] is the encryption and [`archive`] the
//! layout inside it.
//! **What it must not do**: ask for a passphrase or parse flags (the CLI
//! does), or serve anything (the API does).

pub mod archive;
pub mod crypt;
pub mod error;
pub mod passphrase;
pub mod restore;
pub mod write;

pub use archive::{FORMAT, MANIFEST, Manifest, SETTINGS};
pub use crypt::{CryptError, KdfCost};
pub use error::BackupError;
pub use passphrase::{MAX_PASSPHRASE_BYTES, MIN_NEW_PASSPHRASE_CHARS, PassphraseError, Purpose};
pub use restore::{Restored, check_target, restore_into};
pub use write::{
    MAX_SKILL_FILES, Source, Written, backup_to_file, backup_to_temp_file, check_source,
    snapshot_db, write_backup,
};

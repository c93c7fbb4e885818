//! The archive inside the encryption (format [`FORMAT`]): a tar of
//! [`MANIFEST`], the identity key, the database snapshot, `skills/…` and,
//! when there was a settings file, [`SETTINGS`]. Its names are checked here
//! for both sides: what [`crate::write`] puts in is exactly what
//! [`crate::restore`] takes out.

use std::path::{Component, Path};

use serde::{Deserialize, Serialize};

use porfiry_mesh::data_dir::{DB_FILE, IDENTITY_FILE, SKILLS_DIR};

/// The manifest's name inside the archive.
pub const MANIFEST: &str = "manifest.json";
/// The settings file's name inside the archive (and in a restored data dir).
pub const SETTINGS: &str = "porfiry.toml";
/// The archive layout this version writes and reads.
pub const FORMAT: u32 = 1;

/// What a backup says about itself.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Manifest {
    /// [`FORMAT`].
    pub format: u32,
    /// The node's peer id (its identity key's).
    pub peer_id: String,
    /// When it was made (ms since the Unix epoch).
    pub made_ms: u64,
    /// The version of the program that made it (`porfiry --version`).
    pub made_by: String,
}

/// Whether `name` is one a backup holds: the manifest, the settings file,
/// the key, the database, or a plain relative path under `skills/`.
pub fn allowed_name(name: &Path) -> bool {
    name == Path::new(MANIFEST)
        || name == Path::new(SETTINGS)
        || name == Path::new(IDENTITY_FILE)
        || name == Path::new(DB_FILE)
        || (name.starts_with(SKILLS_DIR)
            && name.components().count() > 1
            && name.components().all(|c| matches!(c, Component::Normal(_))))
}

/// A private regular file's tar header.
pub(crate) fn file_header(size: u64) -> tar::Header {
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(tar::EntryType::Regular);
    header.set_size(size);
    header.set_mode(0o600);
    header.set_mtime(0);
    header.set_cksum();
    header
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_backups_own_names_are_allowed() {
        for good in [
            "manifest.json",
            "porfiry.toml",
            "identity.key",
            "porfiry.db",
            "skills/mine/SKILL.md",
        ] {
            assert!(allowed_name(Path::new(good)), "{good}");
        }
        for bad in [
            "skills",
            "skills/../identity.key",
            "/etc/passwd",
            "api-token",
            "models/x.gguf",
            "./porfiry.db/x",
        ] {
            assert!(!allowed_name(Path::new(bad)), "{bad}");
        }
    }
}

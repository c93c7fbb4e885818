//! Where a node keeps its files: the data directory and the paths inside it.

use std::path::{Path, PathBuf};

/// File name of the node's SQLite database inside the data dir.
pub const DB_FILE: &str = "porfiry.db";
/// File name of the node's ed25519 secret key inside the data dir (mode 0600).
pub const IDENTITY_FILE: &str = "identity.key";
/// Folder of the user's own skills inside the data dir.
pub const SKILLS_DIR: &str = "skills";
/// Folder `porfiry model pull` downloads model files into.
pub const MODELS_DIR: &str = "models";
/// File a running daemon holds an exclusive lock on, so two `porfiry run`
/// on one data dir (one identity seen twice on the network) cannot happen.
pub const DAEMON_LOCK_FILE: &str = "daemon.lock";

/// The platform data dir + `/porfiry` (e.g. `~/.local/share/porfiry`), or
/// `./porfiry-data` when the platform has none.
pub fn default_data_dir() -> PathBuf {
    dirs::data_dir()
        .map(|d| d.join("porfiry"))
        .unwrap_or_else(|| PathBuf::from("porfiry-data"))
}

/// Paths of one node's files.
#[derive(Debug, Clone)]
pub struct DataDir {
    root: PathBuf,
}

impl DataDir {
    /// Wraps a data dir path; creates nothing.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The data dir itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `<data-dir>/porfiry.db`.
    pub fn db_path(&self) -> PathBuf {
        self.root.join(DB_FILE)
    }

    /// `<data-dir>/identity.key`.
    pub fn identity_path(&self) -> PathBuf {
        self.root.join(IDENTITY_FILE)
    }

    /// `<data-dir>/skills`.
    pub fn skills_dir(&self) -> PathBuf {
        self.root.join(SKILLS_DIR)
    }

    /// `<data-dir>/models`.
    pub fn models_dir(&self) -> PathBuf {
        self.root.join(MODELS_DIR)
    }

    /// `<data-dir>/daemon.lock`.
    pub fn daemon_lock_path(&self) -> PathBuf {
        self.root.join(DAEMON_LOCK_FILE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_live_inside_the_root() {
        let d = DataDir::new("/x/y");
        assert_eq!(d.db_path(), PathBuf::from("/x/y/porfiry.db"));
        assert_eq!(d.identity_path(), PathBuf::from("/x/y/identity.key"));
        assert_eq!(d.skills_dir(), PathBuf::from("/x/y/skills"));
        assert_eq!(d.daemon_lock_path(), PathBuf::from("/x/y/daemon.lock"));
        assert_eq!(d.models_dir(), PathBuf::from("/x/y/models"));
    }
}

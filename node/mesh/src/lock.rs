//! The data dir's daemon lock: one running node per data dir, so one
//! identity is never seen twice on the network.

use crate::data_dir::DataDir;

/// Why the data dir's daemon lock could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another `porfiry run` already holds this data dir.
    #[error("another porfiry run is already using {dir} (it holds {lock})")]
    AlreadyRunning {
        /// The data dir.
        dir: String,
        /// The lock file held.
        lock: String,
    },
    /// The lock file could not be created or locked.
    #[error("cannot lock {path}: {source}")]
    Lock {
        /// The lock file.
        path: String,
        /// The operating system's error.
        source: std::io::Error,
    },
}

/// Takes the data dir's daemon lock, creating the dir if needed. The lock
/// is released when the returned file is dropped (or the process dies, so
/// a SIGKILLed daemon never leaves a stale lock behind).
pub fn lock_data_dir(dir: &DataDir) -> Result<std::fs::File, LockError> {
    let path = dir.daemon_lock_path();
    let io_err = |source| LockError::Lock {
        path: path.display().to_string(),
        source,
    };
    std::fs::create_dir_all(dir.root()).map_err(io_err)?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(io_err)?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(LockError::AlreadyRunning {
            dir: dir.root().display().to_string(),
            lock: path.display().to_string(),
        }),
        Err(std::fs::TryLockError::Error(e)) => Err(io_err(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_on_one_data_dir_is_refused_until_the_first_is_dropped() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::new(tmp.path().join("node"));
        let first = lock_data_dir(&dir).unwrap();
        match lock_data_dir(&dir) {
            Err(LockError::AlreadyRunning { lock, .. }) => assert!(lock.ends_with("daemon.lock")),
            other => panic!("second lock must be refused, got {other:?}"),
        }
        drop(first);
        assert!(lock_data_dir(&dir).is_ok(), "free again once dropped");
    }
}

//! A full disk: telling it apart from other failures, and how much room is
//! left. SQLite answers a write it has no room for with `SQLITE_FULL`; the
//! node then refuses new data with one clear error naming the data dir and
//! the free space, keeps serving what it has, and resumes by itself when
//! space returns (`porfiry_mesh`'s replication loop, the API's 507).

use std::error::Error;
use std::path::Path;

use rusqlite::ErrorCode;

use crate::StorageError;

/// Free space below which a node whose disk filled up waits before taking
/// items again: SQLite needs room for the WAL and a checkpoint as well as
/// the rows, and a few megabytes is a flood's burst, so resuming with less
/// would fail again at once.
pub const RESUME_FREE_BYTES: u64 = 8 << 20;

/// Bytes free to an unprivileged writer on the filesystem holding `path`;
/// `None` where the OS cannot say.
pub fn free_bytes(path: &Path) -> Option<u64> {
    let s = rustix::fs::statvfs(path).ok()?;
    Some(s.f_bavail.saturating_mul(s.f_frsize))
}

/// True if `error`, or any error it wraps, is SQLite's "database or disk is
/// full" (or an I/O error saying there is no space left).
pub fn is_disk_full(error: &(dyn Error + 'static)) -> bool {
    let mut next = Some(error);
    while let Some(e) = next {
        if let Some(s) = e.downcast_ref::<rusqlite::Error>()
            && s.sqlite_error_code() == Some(ErrorCode::DiskFull)
        {
            return true;
        }
        if let Some(s) = e.downcast_ref::<StorageError>()
            && s.is_disk_full()
        {
            return true;
        }
        if let Some(io) = e.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::StorageFull
        {
            return true;
        }
        next = e.source();
    }
    false
}

/// One line for a person: what is full and how much is left.
pub fn full_message(data_dir: &Path) -> String {
    let free = free_bytes(data_dir)
        .map(|b| format!("{} KiB free", b / 1024))
        .unwrap_or_else(|| "free space unknown".into());
    format!(
        "the disk holding {} is full ({free}): nothing new is stored until space is freed; \
         what the node has is still served",
        data_dir.display()
    )
}

impl StorageError {
    /// True if SQLite refused the write for want of room.
    pub fn is_disk_full(&self) -> bool {
        let sqlite = match self {
            StorageError::Sqlite(e)
            | StorageError::Open { source: e, .. }
            | StorageError::Migration { source: e, .. } => e,
            _ => return false,
        };
        sqlite.sqlite_error_code() == Some(ErrorCode::DiskFull)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_full_is_told_apart_through_wrappers() {
        let full = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_FULL),
            None,
        );
        let e = StorageError::Sqlite(full);
        assert!(e.is_disk_full());
        assert!(is_disk_full(&e));
        let other = StorageError::Sqlite(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
            None,
        ));
        assert!(!is_disk_full(&other));
        let io = std::io::Error::from(std::io::ErrorKind::StorageFull);
        assert!(is_disk_full(&io));
    }

    #[test]
    fn free_space_of_a_real_directory_is_known() {
        let dir = tempfile::tempdir().unwrap();
        assert!(free_bytes(dir.path()).is_some());
        assert!(full_message(dir.path()).contains("KiB free"));
    }
}

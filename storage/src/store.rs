//! The [`Store`]: one SQLite connection to `<data-dir>/porfiry.db`, opened
//! safely (never touching a file that is not ours), migrated, and with
//! transactions that nest.
//!
//! The typed table APIs live in their own modules as further `impl Store`
//! blocks.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OpenFlags};

use crate::error::{Result, StorageError};
use crate::limits::{BUSY_TIMEOUT_MS, STATEMENT_CACHE_CAPACITY};
use crate::migrations::{self, APPLICATION_ID, SCHEMA_VERSION, TABLES};

/// The file name of the node's database inside its data directory.
pub const DB_FILE_NAME: &str = "porfiry.db";

/// An open, migrated Porfiry database. `Send` but not `Sync`: share it behind
/// a mutex or give each thread its own `Store` on the same file.
pub struct Store {
    pub(crate) conn: Connection,
    path: PathBuf,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// What the first look at a file found.
enum Kind {
    /// Porfiry's file at this schema version.
    Ours(u32),
    /// An empty file or a new one: safe to lay out our schema.
    Fresh,
}

impl Store {
    /// Opens the database at `path`, creating the file when it is missing
    /// (`porfiry init`). An existing file is treated exactly as [`Store::open`].
    pub fn create(path: impl AsRef<Path>) -> Result<Store> {
        Self::open_with(path.as_ref(), true)
    }

    /// Opens an existing database; a missing file is [`StorageError::Missing`]
    /// and nothing is created (`porfiry status`). Applies pending migrations.
    ///
    /// A file that is not SQLite ([`StorageError::NotADatabase`]), belongs to
    /// another program, or has a newer schema is refused and left unchanged.
    pub fn open(path: impl AsRef<Path>) -> Result<Store> {
        Self::open_with(path.as_ref(), false)
    }

    fn open_with(path: &Path, create: bool) -> Result<Store> {
        let missing = || StorageError::Missing {
            path: path.to_owned(),
        };
        // An unreadable parent (Err) is left for SQLite to report precisely.
        if !create && matches!(path.try_exists(), Ok(false)) {
            return Err(missing());
        }
        if create {
            create_private_file(path);
        }
        let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        if create {
            flags |= OpenFlags::SQLITE_OPEN_CREATE;
        }
        let open_err = |source| StorageError::Open {
            path: path.to_owned(),
            source,
        };
        let conn = Connection::open_with_flags(path, flags).map_err(|e| {
            if !create && e.sqlite_error_code() == Some(ErrorCode::CannotOpen) {
                missing()
            } else {
                open_err(e)
            }
        })?;
        conn.busy_timeout(Duration::from_millis(BUSY_TIMEOUT_MS))
            .map_err(open_err)?;

        // Look before writing anything: these reads fail on a non-SQLite file
        // without changing it, and nothing here creates -wal or -shm files.
        let kind = Self::inspect(&conn, path)?;
        let found = match kind {
            Kind::Ours(v) => v,
            Kind::Fresh => 0,
        };
        if found > SCHEMA_VERSION {
            return Err(StorageError::NewerSchema {
                found,
                supported: SCHEMA_VERSION,
            });
        }

        conn.pragma_update(None, "foreign_keys", true)
            .map_err(open_err)?;
        let mode: String = conn
            .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))
            .map_err(open_err)?;
        if !mode.eq_ignore_ascii_case("wal") {
            // Some filesystems (network mounts) cannot do WAL; SQLite falls
            // back and stays correct, only slower for concurrent readers.
            tracing::warn!(path = %path.display(), mode, "WAL not available");
        }
        // WAL + NORMAL: a crashed process never corrupts the file or loses a
        // commit; a power cut may lose the last commits, never consistency.
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(open_err)?;
        // Savepoint journals in memory: every nested `transaction` (a
        // batch of received items inside the frame's transaction, each
        // merged row) is a savepoint, and with the default file temp store
        // SQLite spills their journals past 64 KiB to a temporary file:
        // 13 % of a catch-up's CPU was those writes (perf, catch_up_10k).
        // They hold the pages one frame's transaction changed (a few MiB
        // at most). Large sorts stay off temp files too: every big ordered
        // read (`items` by `created, id`, notes by date) uses an index.
        conn.pragma_update(None, "temp_store", "MEMORY")
            .map_err(open_err)?;
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE_CAPACITY);
        crate::casefold::register(&conn).map_err(open_err)?;

        let version = migrations::migrate(&conn)?;
        tracing::debug!(path = %path.display(), version, "opened store");
        Ok(Store {
            conn,
            path: path.to_owned(),
        })
    }

    /// Reads the header fields that say whose file this is.
    fn inspect(conn: &Connection, path: &Path) -> Result<Kind> {
        let read = || -> rusqlite::Result<(i32, u32, u64)> {
            let objects: u64 =
                conn.query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0))?;
            let app: i32 = conn.query_row("PRAGMA application_id", [], |r| r.get(0))?;
            let version = migrations::user_version(conn)?;
            Ok((app, version, objects))
        };
        let (app, version, objects) = read().map_err(|e| match e.sqlite_error_code() {
            Some(ErrorCode::NotADatabase) => StorageError::NotADatabase {
                path: path.to_owned(),
            },
            Some(ErrorCode::DatabaseCorrupt) => StorageError::Corrupt {
                path: path.to_owned(),
                detail: e.to_string(),
            },
            _ => StorageError::Open {
                path: path.to_owned(),
                source: e,
            },
        })?;
        match (app, version, objects) {
            (APPLICATION_ID, v, _) => Ok(Kind::Ours(v)),
            (0, 0, 0) => Ok(Kind::Fresh),
            (application_id, _, _) => Err(StorageError::ForeignDatabase {
                path: path.to_owned(),
                application_id,
            }),
        }
    }

    /// Makes this connection refuse writes (`PRAGMA query_only`): for the
    /// read connections of a process whose writes all go through one
    /// writer, so a read closure that tries to write fails loudly instead of
    /// contending for the write lock.
    pub fn set_query_only(&self, on: bool) -> Result<()> {
        self.conn.pragma_update(None, "query_only", on)?;
        Ok(())
    }

    /// SQLite's `PRAGMA data_version` on this connection: it changes
    /// whenever another connection (another process, or another connection
    /// of this one) commits, and never for this connection's own commits.
    /// Asked on a process's one writer, it tells "someone else wrote".
    pub fn data_version(&self) -> Result<i64> {
        Ok(self
            .conn
            .query_row("PRAGMA data_version", [], |r| r.get(0))?)
    }

    /// The database file this store was opened on.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version of the open file (`PRAGMA user_version`).
    pub fn schema_version(&self) -> Result<u32> {
        Ok(migrations::user_version(&self.conn)?)
    }

    /// How many bytes the database holds (`page_count × page_size`; the WAL
    /// not counted, it is folded in at each checkpoint).
    pub fn database_bytes(&self) -> Result<u64> {
        let pages: u64 = self.conn.query_row("PRAGMA page_count", [], |r| r.get(0))?;
        let size: u64 = self.conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
        Ok(pages.saturating_mul(size))
    }

    /// Row count of every table, in [`TABLES`] order (for `porfiry status`).
    pub fn row_counts(&self) -> Result<Vec<(&'static str, u64)>> {
        TABLES
            .iter()
            .map(|&t| {
                let n: u64 =
                    self.conn
                        .query_row(&format!("SELECT count(*) FROM {t}"), [], |r| r.get(0))?;
                Ok((t, n))
            })
            .collect()
    }

    /// Runs `PRAGMA integrity_check`; anything but "ok" is [`StorageError::Corrupt`].
    pub fn check_integrity(&self) -> Result<()> {
        let mut stmt = self.conn.prepare("PRAGMA integrity_check")?;
        let lines = stmt
            .query_map([], |r| r.get::<_, String>(0))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        if lines.len() == 1 && lines[0] == "ok" {
            Ok(())
        } else {
            Err(StorageError::Corrupt {
                path: self.path.clone(),
                detail: lines.join("; "),
            })
        }
    }

    /// Runs `f` atomically: every write it makes through `store` commits
    /// together, or none does (an `Err` or a panic rolls back). Calls nest;
    /// an inner call is a savepoint inside the outer transaction.
    pub fn transaction<R>(&self, f: impl FnOnce(&Store) -> Result<R>) -> Result<R> {
        let outer = self.conn.is_autocommit();
        let (begin, commit, rollback) = if outer {
            ("BEGIN IMMEDIATE", "COMMIT", "ROLLBACK")
        } else {
            (
                "SAVEPOINT porfiry",
                "RELEASE porfiry",
                "ROLLBACK TO porfiry; RELEASE porfiry",
            )
        };
        self.conn.execute_batch(begin)?;
        let mut guard = RollbackGuard {
            conn: &self.conn,
            sql: rollback,
            armed: true,
        };
        let value = f(self)?;
        self.conn.execute_batch(commit)?;
        guard.armed = false;
        Ok(value)
    }
}

impl Store {
    /// Runs `f` in one read snapshot: a deferred transaction, ended after
    /// `f` however it ends. Inside an open transaction (a snapshot already)
    /// `f` just runs.
    pub(crate) fn read_snapshot<R>(&self, f: impl FnOnce() -> Result<R>) -> Result<R> {
        if !self.conn.is_autocommit() {
            return f();
        }
        self.conn.execute_batch("BEGIN")?;
        let mut guard = RollbackGuard {
            conn: &self.conn,
            sql: "ROLLBACK",
            armed: true,
        };
        let value = f();
        // It only read: ending it cannot lose anything.
        self.conn.execute_batch("COMMIT")?;
        guard.armed = false;
        value
    }
}

/// Creates a missing database file readable by its owner only (it holds
/// private notes); SQLite gives the -wal and -shm files the same mode. Any
/// failure here (missing directory, race with another creator) is left for
/// SQLite's open to report or absorb.
fn create_private_file(path: &Path) {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    if let Err(e) = opts.open(path) {
        tracing::debug!(path = %path.display(), error = %e, "not pre-creating database file");
    }
}

/// Rolls an open transaction back unless disarmed: covers `?` returns,
/// a failed COMMIT and panics alike.
struct RollbackGuard<'a> {
    conn: &'a Connection,
    sql: &'static str,
    armed: bool,
}

impl Drop for RollbackGuard<'_> {
    fn drop(&mut self) {
        if self.armed
            && !self.conn.is_autocommit()
            && let Err(e) = self.conn.execute_batch(self.sql)
        {
            tracing::error!(error = %e, "rollback failed");
        }
    }
}

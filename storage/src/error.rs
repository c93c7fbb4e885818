//! Everything that can go wrong in the storage crate, one variant per cause.

use std::path::PathBuf;

/// A storage failure. Opening problems name the file; row problems name the
/// table (and column or key) so a caller can say exactly what was refused.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// `Store::open` was given a path where no database file exists.
    #[error("no database at {path}: run `porfiry init` first")]
    Missing {
        /// The path that was looked for.
        path: PathBuf,
    },
    /// SQLite could not open or create the file (directory missing, no permission, …).
    #[error("cannot open database {path}: {source}")]
    Open {
        /// The database file.
        path: PathBuf,
        /// SQLite's reason.
        #[source]
        source: rusqlite::Error,
    },
    /// The file exists but is not an SQLite database. It was left untouched.
    #[error("{path} is not an SQLite database (left unchanged)")]
    NotADatabase {
        /// The offending file.
        path: PathBuf,
    },
    /// The file is SQLite but damaged.
    #[error(
        "database {path} is corrupt: {detail}; `porfiry doctor --repair` copies what can be read \
         into a new file and keeps this one"
    )]
    Corrupt {
        /// The damaged file.
        path: PathBuf,
        /// SQLite's description (integrity_check output or error text).
        detail: String,
    },
    /// The file is an SQLite database of another program. It was left untouched.
    #[error(
        "{path} is an SQLite database of another program (application_id {application_id:#x}); left unchanged"
    )]
    ForeignDatabase {
        /// The file.
        path: PathBuf,
        /// Its `PRAGMA application_id`.
        application_id: i32,
    },
    /// The file was written by a newer Porfiry; this build cannot read it safely.
    #[error(
        "database schema version {found} is newer than this build supports ({supported}); upgrade porfiry"
    )]
    NewerSchema {
        /// `PRAGMA user_version` of the file.
        found: u32,
        /// The newest version this build knows.
        supported: u32,
    },
    /// A migration step failed; the file stays at the previous version.
    #[error("migration to schema version {version} failed: {source}")]
    Migration {
        /// The version that could not be applied.
        version: u32,
        /// SQLite's reason.
        #[source]
        source: rusqlite::Error,
    },
    /// No row with that key.
    #[error("no row {key} in {table}")]
    NotFound {
        /// The table looked in.
        table: &'static str,
        /// The key, as text (`id 7`, `peer 12D3…`, `key mode`).
        key: String,
    },
    /// A UNIQUE or PRIMARY KEY constraint refused the write.
    #[error("duplicate row in {table}: {detail}")]
    Duplicate {
        /// The table written to.
        table: &'static str,
        /// SQLite's message (names the column).
        detail: String,
    },
    /// Another friend already has that name (ignoring case).
    #[error("the name {name:?} is taken: friend {peer_id} is called {holder:?}")]
    NameTaken {
        /// The name asked for.
        name: String,
        /// The name as the other friend has it.
        holder: String,
        /// That friend's peer id.
        peer_id: String,
    },
    /// A FOREIGN KEY constraint refused the write (a referenced row is missing).
    #[error("{table} refers to a row that does not exist: {detail}")]
    ForeignKey {
        /// The table written to.
        table: &'static str,
        /// SQLite's message.
        detail: String,
    },
    /// A CHECK or NOT NULL constraint refused the write.
    #[error("value refused by {table}: {detail}")]
    Constraint {
        /// The table written to.
        table: &'static str,
        /// SQLite's message (names the constraint).
        detail: String,
    },
    /// A caller passed a value this API refuses before touching SQLite.
    #[error("invalid {what}: {reason}")]
    Invalid {
        /// What was wrong (`tag`, `limit`, `group name`, `item 3`, …).
        what: String,
        /// Why.
        reason: String,
    },
    /// A text value is longer than the column limit.
    #[error("{table}.{column} is {len} bytes, more than the limit of {max}")]
    TooLong {
        /// The table.
        table: &'static str,
        /// The column.
        column: &'static str,
        /// The value's length in bytes.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// A stored value could not be read back into its Rust type (edited by hand?).
    #[error("bad value in {table}.{column}: {reason}")]
    BadColumn {
        /// The table.
        table: &'static str,
        /// The column.
        column: String,
        /// What failed to decode.
        reason: String,
    },
    /// Any other SQLite failure.
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
}

/// Shorthand used throughout the crate.
pub type Result<T, E = StorageError> = std::result::Result<T, E>;

impl StorageError {
    /// Builds an [`StorageError::Invalid`].
    pub(crate) fn invalid(what: impl Into<String>, reason: impl Into<String>) -> Self {
        StorageError::Invalid {
            what: what.into(),
            reason: reason.into(),
        }
    }

    /// Whether this error refuses one row only (bad value, constraint) and
    /// leaves the file and any open transaction usable.
    pub fn is_row_refusal(&self) -> bool {
        matches!(
            self,
            StorageError::NotFound { .. }
                | StorageError::Duplicate { .. }
                | StorageError::NameTaken { .. }
                | StorageError::ForeignKey { .. }
                | StorageError::Constraint { .. }
                | StorageError::Invalid { .. }
                | StorageError::TooLong { .. }
        )
    }

    /// Classifies a failed write to `table`: constraint failures get their own
    /// variants, anything else stays [`StorageError::Sqlite`].
    pub(crate) fn from_write(table: &'static str, err: rusqlite::Error) -> Self {
        use rusqlite::ffi;
        let rusqlite::Error::SqliteFailure(code, msg) = &err else {
            return StorageError::Sqlite(err);
        };
        let detail = msg.clone().unwrap_or_else(|| code.to_string());
        match code.extended_code {
            ffi::SQLITE_CONSTRAINT_UNIQUE | ffi::SQLITE_CONSTRAINT_PRIMARYKEY => {
                StorageError::Duplicate { table, detail }
            }
            ffi::SQLITE_CONSTRAINT_FOREIGNKEY => StorageError::ForeignKey { table, detail },
            ffi::SQLITE_CONSTRAINT_CHECK | ffi::SQLITE_CONSTRAINT_NOTNULL => {
                StorageError::Constraint { table, detail }
            }
            _ => StorageError::Sqlite(err),
        }
    }

    /// Turns a row-decoding failure into [`StorageError::BadColumn`], naming the
    /// column from the statement's column list.
    pub(crate) fn from_read(table: &'static str, columns: &[&str], err: rusqlite::Error) -> Self {
        let (idx, reason) = match &err {
            rusqlite::Error::FromSqlConversionFailure(i, _, e) => (*i, e.to_string()),
            rusqlite::Error::InvalidColumnType(i, _, t) => (*i, format!("unexpected {t}")),
            rusqlite::Error::IntegralValueOutOfRange(i, v) => (*i, format!("{v} out of range")),
            _ => return StorageError::Sqlite(err),
        };
        let column = columns
            .get(idx)
            .map_or_else(|| format!("#{idx}"), |c| (*c).to_owned());
        StorageError::BadColumn {
            table,
            column,
            reason,
        }
    }
}

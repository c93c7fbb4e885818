//! `casefold(text)`: the Unicode-aware lower case SQL compares tags and
//! emotion names with. SQLite's own `lower()` folds ASCII only, so a stored
//! "Архитектура" would never match "архитектура"; this is Rust's
//! `str::to_lowercase`, registered on every connection.

use rusqlite::Connection;
use rusqlite::functions::FunctionFlags;

/// The SQL name of the function.
pub const CASEFOLD_SQL: &str = "casefold";

/// Folds `text` as [`CASEFOLD_SQL`] does in SQL: queries fold their
/// parameters with this so both sides agree.
pub fn casefold(text: &str) -> String {
    text.to_lowercase()
}

/// Registers `casefold(text)` on `conn` (deterministic, so SQLite may use it
/// in indexes and reorder it freely). NULL and non-text values pass as they
/// are.
pub(crate) fn register(conn: &Connection) -> rusqlite::Result<()> {
    conn.create_scalar_function(
        CASEFOLD_SQL,
        1,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            use rusqlite::types::{Value, ValueRef};
            Ok(match ctx.get_raw(0) {
                ValueRef::Text(bytes) => Value::Text(casefold(&String::from_utf8_lossy(bytes))),
                ValueRef::Null => Value::Null,
                ValueRef::Integer(i) => Value::Integer(i),
                ValueRef::Real(r) => Value::Real(r),
                ValueRef::Blob(b) => Value::Blob(b.to_vec()),
            })
        },
    )
}

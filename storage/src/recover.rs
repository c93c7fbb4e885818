//! A damaged database: finding it (`PRAGMA quick_check`) and recovering what
//! can still be read into a new file, table by table, the damaged file left
//! as it is (`porfiry doctor --repair`).
//!
//! The new file gets the current schema ([`Store::create`]); each table's
//! rows are read from the damaged file (attached) in rowid order and
//! written to the new one, the columns both have. A read that hits a damaged
//! page fails; the copy then skips ahead (1, 2, 4, … rowids) until rows read
//! again, so one torn page costs the rows on it, not the rest of the table.
//! A `WITHOUT ROWID` table is copied until its first unreadable row.

use std::path::Path;

use rusqlite::types::Value;
use rusqlite::{Connection, params_from_iter};

use crate::{Result, StorageError, Store};

/// Doublings of the skip past an unreadable row before a table is given up:
/// 2^48 rowids is past any row this node writes.
const MAX_SKIP_DOUBLINGS: u32 = 48;

/// What was recovered of one table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableRecovery {
    /// The table.
    pub table: String,
    /// Rows copied into the new file.
    pub copied: u64,
    /// Unreadable stretches skipped (each cost the rows on a damaged page).
    pub damaged_stretches: u64,
}

impl Store {
    /// `PRAGMA quick_check`: the whole file's pages and records, without the
    /// index cross-checks of `integrity_check` (a few seconds for hundreds
    /// of megabytes). Anything but "ok" is [`StorageError::Corrupt`].
    pub fn quick_check(&self) -> Result<()> {
        let lines: Vec<String> = self
            .conn
            .prepare("PRAGMA quick_check")
            .and_then(|mut s| {
                s.query_map([], |r| r.get::<_, String>(0))?
                    .collect::<rusqlite::Result<Vec<_>>>()
            })
            .map_err(|e| StorageError::Corrupt {
                path: self.path().to_owned(),
                detail: e.to_string(),
            })?;
        if lines.len() == 1 && lines[0] == "ok" {
            Ok(())
        } else {
            Err(StorageError::Corrupt {
                path: self.path().to_owned(),
                detail: lines.join("; "),
            })
        }
    }
}

/// Copies what can be read of `damaged` into a new database at `fresh`
/// (which must not exist). `damaged` is only read.
pub fn recover_into(damaged: &Path, fresh: &Path) -> Result<Vec<TableRecovery>> {
    if fresh.exists() {
        return Err(StorageError::invalid(
            "recovery target",
            format!("{} exists already", fresh.display()),
        ));
    }
    drop(Store::create(fresh)?);
    let conn = Connection::open(fresh)?;
    conn.execute_batch("PRAGMA foreign_keys = OFF")?;
    let source = damaged
        .to_str()
        .ok_or_else(|| StorageError::invalid("database path", "not UTF-8"))?;
    conn.execute("ATTACH DATABASE ?1 AS old", [source])
        .map_err(|e| StorageError::Corrupt {
            path: damaged.to_owned(),
            detail: format!("nothing can be read: {e}"),
        })?;
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM main.sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let mut out = Vec::new();
    for table in tables {
        let r = copy_table(&conn, &table);
        out.push(r);
    }
    Ok(out)
}

fn columns(conn: &Connection, schema: &str, table: &str) -> Vec<String> {
    conn.prepare(&format!(
        "SELECT name FROM pragma_table_info(?1, '{schema}')"
    ))
    .and_then(|mut s| {
        s.query_map([table], |r| r.get(0))?
            .collect::<rusqlite::Result<Vec<String>>>()
    })
    .unwrap_or_default()
}

fn has_rowid(conn: &Connection, table: &str) -> bool {
    conn.query_row(
        "SELECT sql FROM old.sqlite_schema WHERE type = 'table' AND name = ?1",
        [table],
        |r| r.get::<_, String>(0),
    )
    .is_ok_and(|sql| !sql.to_ascii_uppercase().contains("WITHOUT ROWID"))
}

fn copy_table(conn: &Connection, table: &str) -> TableRecovery {
    let mut r = TableRecovery {
        table: table.to_owned(),
        copied: 0,
        damaged_stretches: 0,
    };
    let old = columns(conn, "old", table);
    let cols: Vec<String> = columns(conn, "main", table)
        .into_iter()
        .filter(|c| old.contains(c))
        .collect();
    if cols.is_empty() {
        // No such table in the damaged file (an older schema), or its
        // definition cannot be read.
        return r;
    }
    let list = cols
        .iter()
        .map(|c| format!("\"{c}\""))
        .collect::<Vec<_>>()
        .join(", ");
    let marks = vec!["?"; cols.len()].join(", ");
    let insert = format!("INSERT OR IGNORE INTO main.\"{table}\" ({list}) VALUES ({marks})");
    let rowid = has_rowid(conn, table);
    let select = if rowid {
        format!("SELECT {list}, rowid FROM old.\"{table}\" WHERE rowid > ?1 ORDER BY rowid")
    } else {
        format!("SELECT {list} FROM old.\"{table}\"")
    };
    let mut after: i64 = i64::MIN;
    let mut skip: i64 = 1;
    let mut doublings = 0;
    loop {
        let step = copy_from(conn, &select, &insert, cols.len(), rowid, after);
        r.copied += step.copied;
        match step.failed_after {
            None => break,
            Some(last) => {
                if step.copied > 0 {
                    skip = 1;
                    doublings = 0;
                } else {
                    skip = skip.saturating_mul(2);
                    doublings += 1;
                }
                if step.copied > 0 || after == last {
                    r.damaged_stretches += 1;
                }
                if !rowid || doublings > MAX_SKIP_DOUBLINGS {
                    break;
                }
                after = last.saturating_add(skip);
            }
        }
    }
    r
}

struct Step {
    copied: u64,
    /// The last rowid read before a read failed.
    failed_after: Option<i64>,
}

/// Copies rows after `after` until the end or a failed read.
fn copy_from(
    conn: &Connection,
    select: &str,
    insert: &str,
    n: usize,
    rowid: bool,
    after: i64,
) -> Step {
    let mut step = Step {
        copied: 0,
        failed_after: None,
    };
    let (Ok(mut read), Ok(mut write)) = (conn.prepare(select), conn.prepare(insert)) else {
        step.failed_after = Some(after);
        return step;
    };
    let rows = if rowid {
        read.query([after])
    } else {
        read.query([])
    };
    let Ok(mut rows) = rows else {
        step.failed_after = Some(after);
        return step;
    };
    let mut last = after;
    loop {
        match rows.next() {
            Ok(Some(row)) => {
                let values: rusqlite::Result<Vec<Value>> = (0..n).map(|i| row.get(i)).collect();
                let Ok(values) = values else {
                    step.failed_after = Some(last);
                    return step;
                };
                if rowid {
                    last = row.get(n).unwrap_or(last);
                }
                if write.execute(params_from_iter(values)).is_ok() {
                    step.copied += 1;
                }
            }
            Ok(None) => return step,
            Err(_) => {
                step.failed_after = Some(last);
                return step;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::Note;

    fn notes(path: &Path, n: usize) {
        let s = Store::create(path).unwrap();
        s.transaction(|s| {
            for i in 0..n {
                let text = format!("note {i} {}", "words ".repeat(30));
                s.add(
                    &Note {
                        text,
                        ..Default::default()
                    },
                    1,
                )?;
            }
            Ok(())
        })
        .unwrap();
        // Into the main file: the damage below is to a page of it.
        s.conn
            .execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
            .unwrap();
    }

    #[test]
    fn a_sound_file_is_copied_whole() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("old.db");
        notes(&old, 50);
        let s = Store::open(&old).unwrap();
        s.quick_check().unwrap();
        drop(s);
        let new = dir.path().join("new.db");
        let report = recover_into(&old, &new).unwrap();
        let notes = report.iter().find(|t| t.table == "notes").unwrap();
        assert_eq!((notes.copied, notes.damaged_stretches), (50, 0));
        let s = Store::open(&new).unwrap();
        s.check_integrity().unwrap();
        assert_eq!(s.notes_recent(100).unwrap().len(), 50);
        assert!(
            recover_into(&old, &new).is_err(),
            "never over an existing file"
        );
    }

    #[test]
    fn a_torn_page_costs_its_rows_and_no_more() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("old.db");
        notes(&old, 2_000);
        let len = std::fs::metadata(&old).unwrap().len();
        let page = 4096;
        let at = (len * 6 / 10) / page * page;
        let mut bytes = std::fs::read(&old).unwrap();
        for b in &mut bytes[at as usize..(at + page) as usize] {
            *b = 0xa5;
        }
        std::fs::write(&old, &bytes).unwrap();
        let damaged = Store::open(&old).unwrap();
        assert!(matches!(
            damaged.quick_check(),
            Err(StorageError::Corrupt { .. })
        ));
        drop(damaged);

        let new = dir.path().join("new.db");
        let report = recover_into(&old, &new).unwrap();
        let notes = report.iter().find(|t| t.table == "notes").unwrap();
        assert!(notes.damaged_stretches >= 1, "{notes:?}");
        assert!(
            (1_900..2_000).contains(&notes.copied),
            "one page of rows lost at most: {notes:?}"
        );
        let s = Store::open(&new).unwrap();
        s.check_integrity().unwrap();
        assert_eq!(s.count::<Note>().unwrap(), notes.copied);
        assert_eq!(
            std::fs::read(&old).unwrap(),
            bytes,
            "the damaged file is left as it was"
        );
    }
}

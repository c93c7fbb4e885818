//! `porfiry doctor [--json] [--repair]`: one command a person runs when
//! something is odd. Plain lines, a verdict each (`ok`, `warn`, `fail`):
//! the data dir and its permissions, free disk, the identity, the
//! database (opens, schema, `quick_check`), whether a daemon runs, local
//! model files against free memory, friends seen recently, the default
//! listen port. `--repair` recovers a damaged database into a new file
//! (`porfiry_storage::recover`), keeps the damaged one beside it under a
//! new name, and puts the new one in its place; never with a daemon
//! running, never over anything.

use std::path::{Path, PathBuf};

use porfiry_mesh::data_dir::DataDir;
use porfiry_protocol::NodeKey;
use porfiry_storage::disk::{RESUME_FREE_BYTES, free_bytes};
use porfiry_storage::recover::recover_into;
use porfiry_storage::{PeerStatus, StorageError, Store};
use serde::Serialize;

use super::llm_registry::registry;

/// Free space below which the disk check warns: a node's database grows by
/// its friends' notes, and a quarter of a gigabyte is a few weeks of a busy
/// club; less than [`RESUME_FREE_BYTES`] fails (writes are refused then).
const LOW_FREE_BYTES: u64 = 256 << 20;

/// A friend unseen this long is worth a line: a week covers a phone left
/// off over a holiday.
const FRIEND_SEEN_WITHIN_MS: u64 = 7 * 24 * 3_600_000;

/// How much memory a model takes beyond its file's size (the KV cache and
/// the compute buffers at the context the node uses): a fifth more.
const MODEL_MEMORY_FACTOR: f64 = 1.2;

/// The default listen port a server binds when given none.
const DEFAULT_PORT: u16 = 4001;

/// A check's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Fine.
    Ok,
    /// Worth a look; the node works.
    Warn,
    /// The node cannot work like this.
    Fail,
}

/// One check.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// Its name (`data_dir`, `disk`, `identity`, `database`, `daemon`,
    /// `model`, `friends`, `port`, `repair`).
    pub check: &'static str,
    /// Its verdict.
    pub verdict: Verdict,
    /// What was found, and what to do.
    pub detail: String,
}

/// The whole report (`--json` prints it).
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The worst verdict.
    pub verdict: Verdict,
    /// Every check, in order.
    pub checks: Vec<Check>,
}

impl Report {
    /// The text form: one line per check.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        for c in &self.checks {
            let v = match c.verdict {
                Verdict::Ok => "ok  ",
                Verdict::Warn => "warn",
                Verdict::Fail => "FAIL",
            };
            s.push_str(&format!("{v}  {:<9} {}\n", c.check, c.detail));
        }
        s
    }
}

fn check(check: &'static str, verdict: Verdict, detail: impl Into<String>) -> Check {
    Check {
        check,
        verdict,
        detail: detail.into(),
    }
}

/// Runs every check on `dir`; with `repair`, recovers a damaged database.
pub fn doctor(dir: &DataDir, repair: bool, now_ms: u64) -> Report {
    let mut checks = vec![data_dir_check(dir.root()), disk_check(dir.root())];
    let running = daemon_running(dir);
    checks.push(check(
        "daemon",
        Verdict::Ok,
        if running {
            "a `porfiry run` holds this data dir"
        } else {
            "no daemon runs on this data dir"
        },
    ));
    checks.push(match NodeKey::load(&dir.identity_path()) {
        Ok(k) => check("identity", Verdict::Ok, format!("peer id {}", k.peer_id())),
        Err(e) => check("identity", Verdict::Fail, e.to_string()),
    });
    let (db_check, store) = database_check(&dir.db_path());
    let damaged = db_check.verdict == Verdict::Fail && dir.db_path().exists();
    checks.push(db_check);
    if let Some(store) = &store {
        checks.push(model_check(store));
        checks.push(friends_check(store, now_ms));
    }
    if !running {
        checks.push(port_check());
    }
    if repair {
        drop(store);
        checks.push(if !damaged {
            check("repair", Verdict::Ok, "nothing to repair")
        } else if running {
            check(
                "repair",
                Verdict::Fail,
                "stop the daemon first: the file is in use",
            )
        } else {
            repair_check(&dir.db_path(), now_ms)
        });
    }
    let verdict = checks
        .iter()
        .map(|c| c.verdict)
        .max()
        .unwrap_or(Verdict::Ok);
    Report { verdict, checks }
}

fn data_dir_check(root: &Path) -> Check {
    if !root.is_dir() {
        return check(
            "data_dir",
            Verdict::Fail,
            format!("{} is not a directory: run `porfiry init`", root.display()),
        );
    }
    let probe = root.join(".doctor-probe");
    match std::fs::write(&probe, b"probe").and_then(|()| std::fs::remove_file(&probe)) {
        Ok(()) => check(
            "data_dir",
            Verdict::Ok,
            format!("{} (writable)", root.display()),
        ),
        Err(e) => check(
            "data_dir",
            Verdict::Fail,
            format!("{} cannot be written: {e}", root.display()),
        ),
    }
}

fn disk_check(root: &Path) -> Check {
    match free_bytes(root) {
        None => check("disk", Verdict::Warn, "free space unknown"),
        Some(free) => {
            let mib = free >> 20;
            if free < RESUME_FREE_BYTES {
                check(
                    "disk",
                    Verdict::Fail,
                    format!("{mib} MiB free: the node refuses new data; free some space"),
                )
            } else if free < LOW_FREE_BYTES {
                check("disk", Verdict::Warn, format!("only {mib} MiB free"))
            } else {
                check("disk", Verdict::Ok, format!("{mib} MiB free"))
            }
        }
    }
}

/// Whether a `porfiry run` holds `dir` now (its lock is taken).
fn daemon_running(dir: &DataDir) -> bool {
    let Ok(file) = std::fs::File::open(dir.daemon_lock_path()) else {
        return false;
    };
    matches!(
        file.try_lock_shared(),
        Err(std::fs::TryLockError::WouldBlock)
    )
}

fn database_check(path: &Path) -> (Check, Option<Store>) {
    let store = match Store::open(path) {
        Ok(s) => s,
        Err(e) => return (check("database", Verdict::Fail, e.to_string()), None),
    };
    let version = store.schema_version().unwrap_or_default();
    let size = std::fs::metadata(path).map(|m| m.len() >> 20).unwrap_or(0);
    match store.quick_check() {
        Ok(()) => (
            check(
                "database",
                Verdict::Ok,
                format!(
                    "{} ({size} MiB, schema {version}, quick_check ok)",
                    path.display()
                ),
            ),
            Some(store),
        ),
        Err(e) => (check("database", Verdict::Fail, e.to_string()), None),
    }
}

/// Free memory the kernel would give a new process (`MemAvailable`).
fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn model_check(store: &Store) -> Check {
    let Ok(models) = registry(store) else {
        return check("model", Verdict::Warn, "the model registry cannot be read");
    };
    let files: Vec<(String, PathBuf)> = models
        .iter()
        .filter_map(|m| {
            Some((
                m.name.clone(),
                PathBuf::from(m.endpoint.strip_prefix("file:")?),
            ))
        })
        .collect();
    if files.is_empty() {
        return check("model", Verdict::Ok, "no local model file registered");
    }
    let available = available_memory();
    let mut worst = Verdict::Ok;
    let mut parts = Vec::new();
    for (name, path) in files {
        match std::fs::metadata(&path) {
            Err(e) => {
                worst = Verdict::Fail;
                parts.push(format!("{name}: {} unreadable ({e})", path.display()));
            }
            Ok(m) => {
                let need = (m.len() as f64 * MODEL_MEMORY_FACTOR) as u64;
                match available {
                    Some(a) if need > a => {
                        worst = worst.max(Verdict::Warn);
                        parts.push(format!(
                            "{name}: needs about {} MiB, {} MiB free",
                            need >> 20,
                            a >> 20
                        ));
                    }
                    _ => parts.push(format!("{name}: {} MiB, fits", m.len() >> 20)),
                }
            }
        }
    }
    check("model", worst, parts.join("; "))
}

fn friends_check(store: &Store, now_ms: u64) -> Check {
    let Ok(friends) = store.friends() else {
        return check("friends", Verdict::Warn, "the friends cannot be read");
    };
    let friends: Vec<_> = friends
        .into_iter()
        .filter(|f| f.row.status != PeerStatus::Blacklisted)
        .collect();
    if friends.is_empty() {
        return check(
            "friends",
            Verdict::Ok,
            "no friends yet (`porfiry invite` makes one)",
        );
    }
    let seen = friends
        .iter()
        .filter(|f| {
            f.row
                .last_seen
                .is_some_and(|t| now_ms.saturating_sub(t) <= FRIEND_SEEN_WITHIN_MS)
        })
        .count();
    let verdict = if seen == 0 {
        Verdict::Warn
    } else {
        Verdict::Ok
    };
    check(
        "friends",
        verdict,
        format!("{seen} of {} seen in the last 7 days", friends.len()),
    )
}

fn port_check() -> Check {
    match std::net::TcpListener::bind(("0.0.0.0", DEFAULT_PORT)) {
        Ok(_) => check(
            "port",
            Verdict::Ok,
            format!("tcp {DEFAULT_PORT} is free for `porfiry run`"),
        ),
        Err(e) => check(
            "port",
            Verdict::Warn,
            format!(
                "tcp {DEFAULT_PORT} cannot be bound ({e}): give `porfiry run --listen` another"
            ),
        ),
    }
}

/// Recovers `db` into `<db>.recovered`, keeps the damaged file as
/// `<db>.damaged-<ms>` (its WAL and shared memory beside it) and puts the
/// recovered one in its place.
fn repair_check(db: &Path, now_ms: u64) -> Check {
    let fresh = db.with_extension("db.recovered");
    if fresh.exists() {
        return check(
            "repair",
            Verdict::Fail,
            format!(
                "{} exists from an earlier try: move it away first",
                fresh.display()
            ),
        );
    }
    let report = match recover_into(db, &fresh) {
        Ok(r) => r,
        Err(e) => {
            let _ = std::fs::remove_file(&fresh);
            return check("repair", Verdict::Fail, recovery_failed(&e));
        }
    };
    let kept = db.with_extension(format!("db.damaged-{now_ms}"));
    let moved = std::fs::rename(db, &kept).and_then(|()| {
        for side in ["-wal", "-shm"] {
            let from = PathBuf::from(format!("{}{side}", db.display()));
            if from.exists() {
                std::fs::rename(&from, format!("{}{side}", kept.display()))?;
            }
        }
        std::fs::rename(&fresh, db)
    });
    if let Err(e) = moved {
        return check(
            "repair",
            Verdict::Fail,
            format!(
                "recovered into {} but could not swap the files ({e}); the damaged file is untouched",
                fresh.display()
            ),
        );
    }
    let copied: u64 = report.iter().map(|t| t.copied).sum();
    let damaged: Vec<String> = report
        .iter()
        .filter(|t| t.damaged_stretches > 0)
        .map(|t| t.table.clone())
        .collect();
    check(
        "repair",
        Verdict::Ok,
        format!(
            "{copied} rows recovered into {} (damaged tables: {}); the damaged file is kept as {}",
            db.display(),
            if damaged.is_empty() {
                "none".to_owned()
            } else {
                damaged.join(", ")
            },
            kept.display()
        ),
    )
}

fn recovery_failed(e: &StorageError) -> String {
    format!("nothing could be recovered: {e}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_form_has_a_verdict_per_line_and_the_worst_wins() {
        let r = Report {
            verdict: Verdict::Fail,
            checks: vec![
                check("disk", Verdict::Ok, "900 MiB free"),
                check("database", Verdict::Fail, "corrupt"),
            ],
        };
        let text = r.to_text();
        assert_eq!(
            text,
            "ok    disk      900 MiB free\nFAIL  database  corrupt\n"
        );
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["verdict"], "fail");
        assert_eq!(json["checks"][1]["check"], "database");
    }
}

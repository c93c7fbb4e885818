//! Versioned schema migrations, tracked in `PRAGMA user_version`.
//!
//! Each migration runs in its own `BEGIN IMMEDIATE` transaction together with
//! the version bump, so a crash leaves the file at the previous version and
//! the next open simply retries. Opening an up-to-date file runs nothing.

use rusqlite::Connection;

use crate::error::{Result, StorageError};

/// Marks a file as Porfiry's (`PRAGMA application_id`, ASCII "Porf"), so we
/// never add our tables to another program's database.
pub const APPLICATION_ID: i32 = 0x506F_7266;

/// One schema step.
struct Migration {
    /// The `user_version` the file has after this step.
    version: u32,
    /// SQL run inside the step's transaction.
    sql: &'static str,
}

/// All steps, oldest first; versions increase (4 is left to a step being
/// written beside this one; `migrate` runs every step newer than the file).
const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        sql: include_str!("../migrations/0001_initial.sql"),
    },
    Migration {
        version: 2,
        sql: include_str!("../migrations/0002_peer_audience.sql"),
    },
    Migration {
        version: 3,
        sql: include_str!("../migrations/0003_tick_facts.sql"),
    },
    Migration {
        version: 4,
        sql: include_str!("../migrations/0004_friend_names.sql"),
    },
    Migration {
        version: 5,
        sql: include_str!("../migrations/0005_invitations.sql"),
    },
    Migration {
        version: 6,
        sql: include_str!("../migrations/0006_clubs.sql"),
    },
    Migration {
        version: 7,
        sql: include_str!("../migrations/0007_note_checks.sql"),
    },
    Migration {
        version: 8,
        sql: include_str!("../migrations/0008_cognition_defaults.sql"),
    },
    Migration {
        version: 9,
        sql: include_str!("../migrations/0009_conversations.sql"),
    },
    Migration {
        version: 10,
        sql: include_str!("../migrations/0010_devices.sql"),
    },
    Migration {
        version: 11,
        sql: include_str!("../migrations/0011_mind_pruned.sql"),
    },
    Migration {
        version: 12,
        sql: include_str!("../migrations/0012_mind_knowhow.sql"),
    },
];

/// The newest schema version this build knows.
pub const SCHEMA_VERSION: u32 = 12;

/// Every table of the current schema, in the order `porfiry status` shows them.
pub const TABLES: &[&str] = &[
    "notes",
    "diary_entries",
    "concepts",
    "links",
    "goals",
    "tasks",
    "llm_memory",
    "llm_recent_responses",
    "process_log",
    "agent_log",
    "agent_peers",
    "agent_reputation",
    "llm_registry",
    "stagnation_strategies",
    "thinking_methods",
    "ratings",
    "config",
    "identity",
    "system_prompts",
    "users",
    "users_group",
    "external_services",
    "external_accounts",
    "agent_scripts",
    "agent_tables",
    "items",
    "retractions",
    "invitations",
    "club_changes",
    "clubs",
    "turn_records",
    "chat_messages",
    "device_links",
    "mind_records",
    "mind_versions",
    "mind_conflicts",
    "mind_outbox",
    "mind_applying",
    "mind_pruned",
];

/// Reads `PRAGMA user_version`.
pub(crate) fn user_version(conn: &Connection) -> rusqlite::Result<u32> {
    conn.query_row("PRAGMA user_version", [], |r| r.get(0))
}

/// Applies every migration newer than the file's version, one transaction each.
pub(crate) fn migrate(conn: &Connection) -> Result<u32> {
    debug_assert_eq!(MIGRATIONS.last().map(|m| m.version), Some(SCHEMA_VERSION));
    let current = user_version(conn)?;
    for m in MIGRATIONS.iter().filter(|m| m.version > current) {
        let step = |conn: &Connection| -> rusqlite::Result<bool> {
            conn.execute_batch("BEGIN IMMEDIATE")?;
            // Re-read under the write lock: another process may have migrated.
            let run = user_version(conn)? < m.version;
            if run {
                conn.execute_batch(m.sql)?;
                conn.pragma_update(None, "application_id", APPLICATION_ID)?;
                conn.pragma_update(None, "user_version", m.version)?;
            }
            conn.execute_batch("COMMIT")?;
            Ok(run)
        };
        match step(conn) {
            Ok(true) => tracing::info!(version = m.version, "applied schema migration"),
            Ok(false) => {}
            Err(source) => {
                if !conn.is_autocommit() {
                    // Best effort: the error we report is the migration's.
                    let _ = conn.execute_batch("ROLLBACK");
                }
                return Err(StorageError::Migration {
                    version: m.version,
                    source,
                });
            }
        }
    }
    Ok(user_version(conn)?)
}

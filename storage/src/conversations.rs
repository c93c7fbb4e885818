//! What a conversation needs to outlive the process (migration 9):
//!
//! - `turn_records`: the tool turns of each turn the API answered, keyed by
//!   a hash the API computes, bounded in count and bytes by the caller's
//!   limits, oldest dropped first — the same rule the API's in-memory copy
//!   follows, so what a restart loads is what was held before it;
//! - `chat_messages`: the whole history of the bindings' chat sessions,
//!   each session bounded in messages (oldest dropped) and the sessions in
//!   number (least recently used dropped).
//!
//! The texts are stored as given (JSON for the tool turns, a role word and
//! text per chat message): this crate does not know the chat types.

use crate::error::{Result, StorageError};
use crate::query::int_param;
use crate::store::Store;

/// Longest chat session name: an app's own id for a conversation, not prose.
pub const MAX_CHAT_SESSION_BYTES: usize = 256;

/// The roles a chat message may have (the OpenAI chat format's words; tool
/// results are `user` messages starting `TOOL_RESULT`).
pub const CHAT_ROLES: &[&str] = &["system", "user", "assistant"];

/// A turn record as kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptTurnRecord {
    /// The API's key for it.
    pub key: [u8; 32],
    /// Its tool turns, as JSON.
    pub turns: String,
    /// The size the API budgets it by.
    pub bytes: u64,
}

/// One message of a chat session as kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatLine {
    /// `system`, `user` or `assistant`.
    pub role: String,
    /// Its text.
    pub content: String,
    /// When it was kept, unix milliseconds.
    pub created_ms: u64,
}

/// A chat session as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatSessionRow {
    /// Its name.
    pub session: String,
    /// Messages kept.
    pub messages: u64,
    /// When its first kept message was written.
    pub first_ms: u64,
    /// When its newest message was written.
    pub last_ms: u64,
}

fn check_session(session: &str) -> Result<()> {
    if session.is_empty() || session.len() > MAX_CHAT_SESSION_BYTES {
        return Err(StorageError::invalid(
            "chat session",
            format!("1 to {MAX_CHAT_SESSION_BYTES} bytes"),
        ));
    }
    Ok(())
}

fn count(what: &str, n: usize) -> Result<i64> {
    i64::try_from(n).map_err(|_| StorageError::invalid(what, format!("{n} is out of range")))
}

impl Store {
    /// Keeps a turn record (replacing one under the same key, which counts
    /// as the newest), then drops the oldest records until at most
    /// `max_count` are held and their bytes add up to at most `max_bytes`.
    /// A record over `max_bytes` alone is not kept, and drops no other.
    pub fn put_turn_record(
        &self,
        record: &KeptTurnRecord,
        max_count: usize,
        max_bytes: u64,
    ) -> Result<()> {
        let too_big = record.bytes > max_bytes;
        let bytes = int_param("turn record bytes", record.bytes)?;
        let budget = i64::try_from(max_bytes).unwrap_or(i64::MAX);
        let max_bytes = int_param("turn record budget", max_bytes)?;
        let max_count = count("turn record count", max_count)?;
        self.transaction(|s| {
            s.conn
                .prepare_cached("DELETE FROM turn_records WHERE key = ?")?
                .execute([&record.key[..]])?;
            if too_big {
                return Ok(());
            }
            s.conn
                .prepare_cached(
                    "INSERT INTO turn_records (key, turns, bytes, seq) VALUES \
                     (?1, ?2, ?3, (SELECT coalesce(max(seq), 0) + 1 FROM turn_records))",
                )?
                .execute(rusqlite::params![&record.key[..], record.turns, bytes])?;
            // Only past a bound is the window over every record needed.
            let (n, total): (i64, i64) = s
                .conn
                .prepare_cached("SELECT count(*), coalesce(sum(bytes), 0) FROM turn_records")?
                .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))?;
            if n <= max_count && total <= budget {
                return Ok(());
            }
            s.conn
                .prepare_cached(
                    "DELETE FROM turn_records WHERE key IN (SELECT key FROM (SELECT key, \
                     row_number() OVER newest AS n, sum(bytes) OVER newest AS total \
                     FROM turn_records WINDOW newest AS (ORDER BY seq DESC)) \
                     WHERE n > ?1 OR total > ?2)",
                )?
                .execute(rusqlite::params![max_count, max_bytes])?;
            Ok(())
        })
    }

    /// Drops the turn record under `key`, if kept.
    pub fn delete_turn_record(&self, key: &[u8; 32]) -> Result<()> {
        self.conn
            .prepare_cached("DELETE FROM turn_records WHERE key = ?")?
            .execute([&key[..]])?;
        Ok(())
    }

    /// Every turn record kept, oldest first.
    pub fn turn_records(&self) -> Result<Vec<KeptTurnRecord>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT key, turns, bytes FROM turn_records ORDER BY seq")?;
        let rows = stmt.query_map([], |r| {
            Ok((
                r.get::<_, Vec<u8>>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (key, turns, bytes) = row?;
            let key: [u8; 32] = key.try_into().map_err(|_| StorageError::BadColumn {
                table: "turn_records",
                column: "key".into(),
                reason: "not 32 bytes".into(),
            })?;
            out.push(KeptTurnRecord {
                key,
                turns,
                bytes: u64::try_from(bytes).unwrap_or(0),
            });
        }
        Ok(out)
    }

    /// Appends `lines` (role, text) to chat session `session` at `now_ms`;
    /// then keeps at most `max_messages` of that session (oldest dropped)
    /// and at most `max_sessions` sessions (those whose newest message is
    /// oldest dropped whole). All in one transaction.
    pub fn append_chat_messages(
        &self,
        session: &str,
        lines: &[(&str, &str)],
        now_ms: u64,
        max_messages: usize,
        max_sessions: usize,
    ) -> Result<()> {
        check_session(session)?;
        if let Some((role, _)) = lines.iter().find(|(r, _)| !CHAT_ROLES.contains(r)) {
            return Err(StorageError::invalid(
                "chat message role",
                format!("{role:?}: one of {}", CHAT_ROLES.join(", ")),
            ));
        }
        let now = int_param("time", now_ms)?;
        let max_messages = count("chat messages", max_messages)?;
        let max_sessions = count("chat sessions", max_sessions)?;
        self.transaction(|s| {
            let mut insert = s.conn.prepare_cached(
                "INSERT INTO chat_messages (session, role, content, created_ms) VALUES (?, ?, ?, ?)",
            )?;
            for (role, content) in lines {
                insert.execute(rusqlite::params![session, role, content, now])?;
            }
            s.conn
                .prepare_cached(
                    "DELETE FROM chat_messages WHERE session = ?1 AND id <= \
                     (SELECT id FROM chat_messages WHERE session = ?1 \
                      ORDER BY id DESC LIMIT 1 OFFSET ?2)",
                )?
                .execute(rusqlite::params![session, max_messages])?;
            s.conn
                .prepare_cached(
                    "DELETE FROM chat_messages WHERE session IN (SELECT session FROM \
                     chat_messages GROUP BY session ORDER BY max(id) DESC LIMIT -1 OFFSET ?1)",
                )?
                .execute([max_sessions])?;
            Ok(())
        })
    }

    /// Replaces chat session `session`'s messages with `lines` (a history
    /// the tool loop rebuilt), bounded as [`Store::append_chat_messages`].
    pub fn replace_chat_messages(
        &self,
        session: &str,
        lines: &[(&str, &str)],
        now_ms: u64,
        max_messages: usize,
        max_sessions: usize,
    ) -> Result<()> {
        check_session(session)?;
        self.transaction(|s| {
            s.forget_chat_session(session)?;
            s.append_chat_messages(session, lines, now_ms, max_messages, max_sessions)
        })
    }

    /// The newest `limit` messages of chat session `session` (all with
    /// `None`), oldest first.
    pub fn chat_messages(&self, session: &str, limit: Option<usize>) -> Result<Vec<ChatLine>> {
        let limit = match limit {
            Some(n) => count("limit", n)?,
            None => -1,
        };
        let mut stmt = self.conn.prepare_cached(
            "SELECT role, content, created_ms FROM (SELECT id, role, content, created_ms \
             FROM chat_messages WHERE session = ? ORDER BY id DESC LIMIT ?) ORDER BY id",
        )?;
        let rows = stmt.query_map(rusqlite::params![session, limit], |r| {
            Ok(ChatLine {
                role: r.get(0)?,
                content: r.get(1)?,
                created_ms: u64::try_from(r.get::<_, i64>(2)?).unwrap_or(0),
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Every chat session kept, the most recently written first.
    pub fn chat_sessions(&self) -> Result<Vec<ChatSessionRow>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT session, count(*), min(created_ms), max(created_ms) FROM chat_messages \
             GROUP BY session ORDER BY max(id) DESC",
        )?;
        let rows = stmt.query_map([], |r| {
            let n = |i: usize| -> rusqlite::Result<u64> {
                Ok(u64::try_from(r.get::<_, i64>(i)?).unwrap_or(0))
            };
            Ok(ChatSessionRow {
                session: r.get(0)?,
                messages: n(1)?,
                first_ms: n(2)?,
                last_ms: n(3)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Deletes chat session `session`'s messages; returns how many there were.
    pub fn forget_chat_session(&self, session: &str) -> Result<u64> {
        let n = self
            .conn
            .prepare_cached("DELETE FROM chat_messages WHERE session = ?")?
            .execute([session])?;
        Ok(n as u64)
    }
}

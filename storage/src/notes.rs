//! `notes`: the user's notebook and the distributed chat (seed 003). Local
//! fields (tags, llm_id, hidden, read) never leave the node; notes merged
//! from friends keep their author and item id.

use porfiry_protocol::ItemId;
use rusqlite::types::Value;

use crate::error::{Result, StorageError};
use crate::published::publishable;
use crate::query::{Filter, int_param, resolve_limit};
use crate::record::{Record, Stored, record};
use crate::store::Store;
use crate::values::{NoteSource, Sharing};

record! {
    /// One note: a message from the user, the LLM, the CLI, the system or a friend.
    pub struct Note in "notes" search ["text", "topic"] marks [Tagged] check check_note {
        /// The message (must not be empty).
        pub text: String,
        /// Optional subject line.
        pub topic: Option<String>,
        /// Peers or names mentioned, parsed when the note is written.
        pub mentions: Vec<String> as json,
        /// Hashtags (without `#`), parsed when the note is written.
        pub hashtags: Vec<String> as json,
        /// Who wrote it.
        pub source: NoteSource,
        /// Higher is more urgent; 0 is normal.
        pub priority: i64,
        /// Whether the LLM has read it (local).
        pub read: bool,
        /// Hidden from the user (local).
        pub hidden: bool,
        /// Local tags for attention and filtering.
        pub tags: Vec<String> as tags,
        /// The LLM that wrote it, if one did (local).
        pub llm_id: Option<String>,
        /// The item id of the note this one answers.
        pub reply_to: Option<ItemId> as item_id,
        /// Private, or the audience it is published to.
        pub audience: Sharing,
        /// Set once a local note has been published as an item.
        pub item_id: Option<ItemId> as item_id,
        /// For notes merged from friends: the author's peer id.
        pub origin_author: Option<String>,
        /// For notes merged from friends: the item it came from.
        pub origin_item_id: Option<ItemId> as item_id,
    }
}

publishable!(
    Note,
    "audience <> 'private' AND item_id IS NULL AND origin_item_id IS NULL"
);

fn check_note(n: &Note) -> Result<()> {
    if n.text.trim().is_empty() {
        return Err(StorageError::invalid("note", "text is empty"));
    }
    if let Sharing::Shared(a) = &n.audience
        && let Err(e) = a.check()
    {
        return Err(StorageError::invalid("note audience", e.to_string()));
    }
    if n.origin_author.is_some() != n.origin_item_id.is_some() {
        return Err(StorageError::invalid(
            "note",
            "origin_author and origin_item_id go together",
        ));
    }
    Ok(())
}

/// The condition of [`NoteFilter::except_local`]: not (written here and of
/// the given source). A merged note always has its `origin_author`.
const EXCEPT_LOCAL: &str = "NOT (source = ? AND origin_author IS NULL)";

/// Which notes to list (seed 003's auto-mode filter). Unset fields do not filter.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NoteFilter {
    /// Only this source.
    pub source: Option<NoteSource>,
    /// Leave out the notes written on this node with this source (the
    /// cognitive core leaves out its own, `llm`); notes merged from friends
    /// stay whatever their source.
    pub except_local: Option<NoteSource>,
    /// Only priority at or above this.
    pub min_priority: Option<i64>,
    /// Only read (`true`) or unread (`false`) notes.
    pub read: Option<bool>,
    /// Only hidden or visible notes.
    pub hidden: Option<bool>,
    /// Only notes with this local tag.
    pub tag: Option<String>,
    /// Only notes with this hashtag.
    pub hashtag: Option<String>,
    /// Only notes mentioning this.
    pub mention: Option<String>,
    /// Only notes whose text or topic contains this.
    pub text: Option<String>,
    /// Only notes merged from friends (`true`) or written here (`false`).
    pub from_mesh: Option<bool>,
    /// Only notes by this author (peer id) — merged notes only.
    pub author: Option<String>,
    /// Only notes created at or after this time (Unix ms).
    pub since_ms: Option<u64>,
    /// At most this many (`None` = default list limit).
    pub limit: Option<u32>,
    /// Rows to skip.
    pub offset: u32,
    /// Oldest first instead of newest first.
    pub oldest_first: bool,
}

impl Store {
    /// Sets or clears the read mark ("notes readmark").
    pub fn notes_mark_read(&self, id: i64, read: bool, now_ms: u64) -> Result<()> {
        self.set_columns::<Note>(id, "read = ?", &[&read], now_ms)
    }

    /// Hides the note from the user, or shows it again.
    pub fn notes_set_hidden(&self, id: i64, hidden: bool, now_ms: u64) -> Result<()> {
        self.set_columns::<Note>(id, "hidden = ?", &[&hidden], now_ms)
    }

    /// The `n` most recent notes, newest first.
    pub fn notes_recent(&self, n: u32) -> Result<Vec<Stored<Note>>> {
        self.notes_filter(&NoteFilter {
            limit: Some(n),
            ..Default::default()
        })
    }

    /// Notes matching `q`, newest first unless `q.oldest_first`.
    pub fn notes_filter(&self, q: &NoteFilter) -> Result<Vec<Stored<Note>>> {
        let limit = resolve_limit(q.limit)?;
        let mut f = Filter::default();
        if let Some(s) = q.source {
            f.and("source = ?", [Value::Text(s.as_str().into())]);
        }
        if let Some(s) = q.except_local {
            f.and(EXCEPT_LOCAL, [Value::Text(s.as_str().into())]);
        }
        if let Some(p) = q.min_priority {
            f.and("priority >= ?", [Value::Integer(p)]);
        }
        if let Some(r) = q.read {
            f.and("read = ?", [Value::Integer(r.into())]);
        }
        if let Some(h) = q.hidden {
            f.and("hidden = ?", [Value::Integer(h.into())]);
        }
        if let Some(t) = &q.tag {
            f.json_contains("tags", t);
        }
        if let Some(t) = &q.hashtag {
            f.json_contains("hashtags", t);
        }
        if let Some(m) = &q.mention {
            f.json_contains("mentions", m);
        }
        if let Some(t) = &q.text {
            f.text_in(Note::SEARCH, t);
        }
        match q.from_mesh {
            Some(true) => f.and("origin_author IS NOT NULL", []),
            Some(false) => f.and("origin_author IS NULL", []),
            None => {}
        }
        if let Some(a) = &q.author {
            f.and("origin_author = ?", [Value::Text(a.clone())]);
        }
        if let Some(t) = q.since_ms {
            f.and("created >= ?", [int_param("since_ms", t)?]);
        }
        let order = if q.oldest_first {
            "created, id"
        } else {
            "created DESC, id DESC"
        };
        self.select::<Note>(&f, order, limit, q.offset)
    }

    /// Note counts per priority, highest priority first (seed 003's manual
    /// mode shows these); `unread_only` counts unread notes only, and
    /// `except_local` leaves out the notes written here with that source
    /// (as [`NoteFilter::except_local`]).
    pub fn notes_count_by_priority(
        &self,
        unread_only: bool,
        except_local: Option<NoteSource>,
    ) -> Result<Vec<(i64, u64)>> {
        let mut f = Filter::default();
        if unread_only {
            f.and("read = 0", []);
        }
        if let Some(s) = except_local {
            f.and(EXCEPT_LOCAL, [Value::Text(s.as_str().into())]);
        }
        let sql = format!(
            "SELECT priority, count(*) FROM notes{} GROUP BY priority ORDER BY priority DESC",
            f.where_sql()
        );
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(rusqlite::params_from_iter(&f.params), |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Notes created at or after `since_ms` but those written on this node
    /// with source `except` (the cognitive core counts outside stimuli
    /// without its own notes; a friend's core's notes are stimuli).
    pub fn notes_count_since(&self, since_ms: u64, except: NoteSource) -> Result<u64> {
        let since = i64::try_from(since_ms).unwrap_or(i64::MAX);
        Ok(self.conn.query_row(
            "SELECT count(*) FROM notes WHERE created >= ?1 \
             AND NOT (source = ?2 AND origin_author IS NULL)",
            rusqlite::params![since, except],
            |r| r.get(0),
        )?)
    }

    /// Notes answering the item `item` (their `reply_to`), oldest first, at
    /// most `limit`: the friends' answers to a question the core asked.
    pub fn notes_replying_to(&self, item: &ItemId, limit: u32) -> Result<Vec<Stored<Note>>> {
        let mut f = Filter::default();
        f.and("reply_to = ?", [Value::Blob(item.as_bytes().to_vec())]);
        self.select::<Note>(&f, "created, id", resolve_limit(Some(limit))?, 0)
    }

    /// Deletes notes created before `before_ms` ("cleanup of old notes");
    /// with `read_only`, only those the LLM has read. Returns how many.
    pub fn notes_cleanup(&self, before_ms: u64, read_only: bool) -> Result<usize> {
        let extra = if read_only { " AND read = 1" } else { "" };
        let sql = format!("DELETE FROM notes WHERE created < ?{extra}");
        let before = int_param("before_ms", before_ms)?;
        self.conn
            .prepare_cached(&sql)?
            .execute([before])
            .map_err(|e| StorageError::from_write("notes", e))
    }
}

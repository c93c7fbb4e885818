//! Clubs on disk: the clubs founded here (`clubs`) and every club change
//! accepted (`club_changes`, written by [`Store::insert_items`] in the same
//! transaction as the change's item), from which [`Store::club_book`]
//! rebuilds the [`ClubBook`] the replication engine routes club items by.

use porfiry_protocol::club::{ClubAction, ClubBook, ClubChange, ClubError, ClubRef};
use porfiry_protocol::{Body, ItemId, VerifiedItem};
use rusqlite::params;

use crate::error::{Result, StorageError};
use crate::items::StoredItem;
use crate::query::int_param;
use crate::store::Store;

/// One accepted club change, as `club_changes` keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClubChangeRow {
    /// The `club_change` item.
    pub item_id: ItemId,
    /// Its author's peer id.
    pub author: String,
    /// Its creation time (Unix ms): membership is judged at it.
    pub created_ms: u64,
    /// What it says.
    pub change: ClubChange,
}

impl Store {
    /// Records that this node founded `club` at `now_ms` (so the club is
    /// known before it has any change). Returns false if it was recorded
    /// already.
    pub fn create_club(&self, club: &ClubRef, now_ms: u64) -> Result<bool> {
        club.check()
            .map_err(|e| StorageError::invalid("club", e.to_string()))?;
        let now = int_param("now_ms", now_ms)?;
        let n = self
            .conn
            .prepare_cached(
                "INSERT INTO clubs (club, created) VALUES (?, ?) ON CONFLICT DO NOTHING",
            )?
            .execute(params![club.to_string(), now])?;
        Ok(n > 0)
    }

    /// Every club this node knows: founded here or named by a change held,
    /// in order.
    pub fn known_clubs(&self) -> Result<Vec<ClubRef>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT club FROM clubs UNION SELECT club FROM club_changes ORDER BY 1",
        )?;
        let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
        let mut out = Vec::new();
        for text in rows {
            let text = text.map_err(|e| StorageError::from_read("clubs", &["club"], e))?;
            out.push(parse_club(&text)?);
        }
        Ok(out)
    }

    /// Every change held, of one club or of all, oldest first.
    pub fn club_changes(&self, club: Option<&ClubRef>) -> Result<Vec<ClubChangeRow>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT item_id, club, action, target, author, created FROM club_changes
             WHERE ?1 IS NULL OR club = ?1 ORDER BY created, item_id",
        )?;
        let filter = club.map(ToString::to_string);
        let rows = stmt.query_map([filter], |r| {
            Ok((
                ItemId(r.get(0)?),
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, u64>(5)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (item_id, club, action, target, author, created_ms) = row.map_err(|e| {
                StorageError::from_read(
                    "club_changes",
                    &["item_id", "club", "action", "target", "author", "created"],
                    e,
                )
            })?;
            let action = ClubAction::parse(&action)
                .ok_or_else(|| StorageError::invalid("club_changes.action", action.clone()))?;
            out.push(ClubChangeRow {
                item_id,
                author,
                created_ms,
                change: ClubChange {
                    club: parse_club(&club)?,
                    action,
                    target,
                },
            });
        }
        Ok(out)
    }

    /// The club book of every club known here, rebuilt from the changes
    /// held: what the replication engine is given at start-up.
    pub fn club_book(&self) -> Result<ClubBook> {
        let mut book = ClubBook::new();
        let full = |e: ClubError| StorageError::invalid("club book", e.to_string());
        for club in self.known_clubs()? {
            book.add_club(&club).map_err(full)?;
        }
        for row in self.club_changes(None)? {
            book.insert(row.item_id, row.created_ms, &row.author, &row.change)
                .map_err(full)?;
        }
        Ok(book)
    }

    /// Writes the `club_changes` row of a newly stored club change item
    /// (called inside [`Store::insert_items`]'s transaction).
    pub(crate) fn record_club_change(&self, stored: &StoredItem) -> Result<()> {
        let id = stored.record.id;
        let bad = |reason: String| StorageError::invalid(format!("club change {id}"), reason);
        // Stored bytes are the envelope as verified on receipt; decoding
        // checks them again, which a handful of club changes can afford.
        let item = VerifiedItem::decode(&stored.payload, 0).map_err(|e| bad(e.to_string()))?;
        if item.id() != id {
            return Err(bad("payload does not match the item id".into()));
        }
        let Body::ClubChange(c) = item.body() else {
            return Err(bad("not a club_change body".into()));
        };
        let created = int_param("created_ms", item.created_ms())?;
        self.conn
            .prepare_cached(
                "INSERT INTO club_changes (item_id, club, action, target, author, created)
                 VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (item_id) DO NOTHING",
            )?
            .execute(params![
                id.as_bytes(),
                c.club.to_string(),
                c.action.as_str(),
                c.target,
                item.author_peer_id(),
                created
            ])?;
        Ok(())
    }
}

fn parse_club(text: &str) -> Result<ClubRef> {
    text.parse()
        .map_err(|e: porfiry_protocol::club::ClubRefError| {
            StorageError::invalid("club", e.to_string())
        })
}

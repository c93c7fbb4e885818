//! The family page's reads of the notes table: a feed filtered by whose
//! notes they are and by audience (friends, public, a group, a club, one
//! friend), newest or oldest, and the notes that a feed's replies answer
//! (found by the item id they were published as or merged from). Reads
//! only: the table, its columns and its checks are `notes.rs`'s.

use porfiry_protocol::ItemId;
use rusqlite::types::Value;

use crate::error::Result;
use crate::notes::Note;
use crate::query::{Filter, resolve_limit};
use crate::record::Stored;
use crate::store::Store;
use crate::values::Sharing;

/// Which notes a feed lists. Unset fields do not filter.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FeedQuery {
    /// Only notes merged from friends (`true`) or written here (`false`).
    pub from_mesh: Option<bool>,
    /// Only notes for exactly this audience (`club:NAME@FOUNDER` is one
    /// club, `group:NAME` one group).
    pub audience: Option<Sharing>,
    /// At most this many (`None` = the default list limit).
    pub limit: Option<u32>,
    /// The newest `limit` notes rather than the oldest.
    pub newest: bool,
}

impl Store {
    /// Notes matching `q`, oldest first (the newest `limit` of them with
    /// `q.newest`, else the oldest).
    pub fn notes_feed(&self, q: &FeedQuery) -> Result<Vec<Stored<Note>>> {
        let limit = resolve_limit(q.limit)?;
        let mut f = Filter::default();
        match q.from_mesh {
            Some(true) => f.and("origin_author IS NOT NULL", []),
            Some(false) => f.and("origin_author IS NULL", []),
            None => {}
        }
        if let Some(audience) = &q.audience {
            f.and("audience = ?", [Value::Text(audience.to_string())]);
        }
        let order = if q.newest {
            "created DESC, id DESC"
        } else {
            "created, id"
        };
        let mut notes = self.select::<Note>(&f, order, limit, 0)?;
        if q.newest {
            notes.reverse();
        }
        Ok(notes)
    }

    /// The notes published as, or merged from, one of `items` (a reply's
    /// `reply_to` names its note this way), at most one per item; `items`
    /// beyond the list limit are not looked up.
    pub fn notes_of_items(&self, items: &[ItemId]) -> Result<Vec<Stored<Note>>> {
        let limit = resolve_limit(Some(crate::limits::MAX_LIST_LIMIT))?;
        let items = &items[..items.len().min(limit as usize)];
        if items.is_empty() {
            return Ok(Vec::new());
        }
        let marks = vec!["?"; items.len()].join(", ");
        let blobs = items.iter().map(|i| Value::Blob(i.as_bytes().to_vec()));
        let mut f = Filter::default();
        f.and(
            format!("(item_id IN ({marks}) OR origin_item_id IN ({marks}))"),
            blobs.clone().chain(blobs),
        );
        self.select::<Note>(&f, "created, id", limit, 0)
    }
}

#[cfg(test)]
mod tests {
    use porfiry_protocol::{Audience, ClubRef};

    use super::*;
    use crate::published::Merged;

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::create(dir.path().join("feed.db")).unwrap();
        (dir, store)
    }

    fn add(s: &Store, text: &str, audience: Sharing, at: u64) -> i64 {
        let note = Note {
            text: text.into(),
            audience,
            ..Default::default()
        };
        s.add(&note, at).unwrap()
    }

    fn texts(rows: &[Stored<Note>]) -> Vec<&str> {
        rows.iter().map(|n| n.row.text.as_str()).collect()
    }

    #[test]
    fn a_feed_filters_by_exact_audience_and_takes_the_newest_or_oldest() {
        let (_dir, s) = store();
        let club: ClubRef = "chess@12D3KooWQiz72eyQExYNjKFgUEu7YqqgjPgqMuqXJvcY7PWQ96dW"
            .parse()
            .unwrap();
        let friends = Sharing::Shared(Audience::Friends);
        let chess = Sharing::Shared(Audience::Club(club));
        add(&s, "f1", friends.clone(), 1);
        add(&s, "c1", chess.clone(), 2);
        add(&s, "f2", friends.clone(), 3);
        add(&s, "c2", chess.clone(), 4);
        add(&s, "c3", chess.clone(), 5);
        add(&s, "p", Sharing::Private, 6);
        let q = |audience: Option<Sharing>, limit, newest| FeedQuery {
            audience,
            limit: Some(limit),
            newest,
            ..Default::default()
        };
        let got = s.notes_feed(&q(Some(chess.clone()), 2, true)).unwrap();
        assert_eq!(texts(&got), ["c2", "c3"], "the newest two, oldest first");
        let got = s.notes_feed(&q(Some(chess), 2, false)).unwrap();
        assert_eq!(texts(&got), ["c1", "c2"]);
        let got = s.notes_feed(&q(Some(friends), 10, true)).unwrap();
        assert_eq!(texts(&got), ["f1", "f2"]);
        let group = Sharing::Shared(Audience::Group("family".into()));
        assert!(s.notes_feed(&q(Some(group), 10, true)).unwrap().is_empty());
        assert_eq!(s.notes_feed(&q(None, 10, true)).unwrap().len(), 6);
        let own = FeedQuery {
            from_mesh: Some(true),
            ..q(None, 10, true)
        };
        assert!(s.notes_feed(&own).unwrap().is_empty(), "none merged");
    }

    #[test]
    fn the_notes_of_items_are_found_by_published_or_merged_id() {
        let (_dir, s) = store();
        let own = add(&s, "mine", Sharing::Shared(Audience::Friends), 1);
        let published = ItemId([7; 32]);
        s.mark_published::<Note>(own, &published, 2).unwrap();
        let merged = ItemId([8; 32]);
        let theirs = Note {
            text: "theirs".into(),
            audience: Sharing::Shared(Audience::Friends),
            origin_author: Some("12D3KooWQiz72eyQExYNjKFgUEu7YqqgjPgqMuqXJvcY7PWQ96dW".into()),
            origin_item_id: Some(merged),
            ..Default::default()
        };
        assert!(matches!(
            s.merge_from_item(&theirs, 3).unwrap(),
            Merged::Added(_)
        ));
        let found = s
            .notes_of_items(&[merged, published, ItemId([9; 32])])
            .unwrap();
        assert_eq!(texts(&found), ["mine", "theirs"]);
        assert!(s.notes_of_items(&[]).unwrap().is_empty());
    }
}

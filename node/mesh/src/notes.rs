//! Notes as a node's callers give them: the audience forms (`friends`,
//! `group:NAME`, `peer:FRIEND_NAME`, `club:NAME`, …), the text check and
//! the notebook listing, shared by `porfiry notes` and `NodeHandle`, so the
//! CLI and an embedding app refuse the same input the same way. The
//! audience and text are checked, and the item signed, before the database
//! is written, so a bad call changes nothing.

use porfiry_protocol::item::audience::AudienceError;
use porfiry_storage::{Note, NoteFilter, Sharing, Store, Stored, check_friend_name};

use crate::friends::{FriendsError, resolve_friend};
use crate::sharing::SharingError;

/// The audience `notes post` uses when none is given: friends only, so a
/// note reaches the people the user chose and goes no further unless asked.
pub const DEFAULT_AUDIENCE: &str = "friends";

/// The audiences `notes post` takes, for error messages.
pub const AUDIENCE_FORMS: &str = "expected public, friends, group:NAME, peer:PEER_ID (or peer:FRIEND_NAME), \
     club:NAME (or club:NAME@FOUNDER) or private";

/// Notes read per page by `notes list`: the storage list cap.
pub const LIST_PAGE: u32 = porfiry_storage::limits::MAX_LIST_LIMIT;

/// Why a `notes` command failed.
#[derive(Debug, thiserror::Error)]
pub enum NotesError {
    /// Not an audience.
    #[error("bad audience {given:?}: {reason}")]
    BadAudience {
        /// What was given.
        given: String,
        /// What is wrong with it (the expected forms, or the bad part).
        reason: String,
    },
    /// Nothing to post.
    #[error("the note text is empty")]
    EmptyText,
    /// Not a 64-hex-digit item id.
    #[error("bad item id {given:?}: expected 64 hex digits, as `notes post` printed")]
    BadItemId {
        /// What was given.
        given: String,
    },
    /// No such item in this node's database.
    #[error("no item {0} here")]
    NoSuchItem(String),
    /// Only the author may retract an item.
    #[error("item {0} is not a note of yours: only its author can retract it")]
    NotYours(String),
    /// Opening the node failed.
    #[error(transparent)]
    Open(#[from] FriendsError),
    /// Posting failed (a limit of the item format, or the database).
    #[error(transparent)]
    Post(#[from] SharingError),
    /// Reading failed.
    #[error(transparent)]
    Storage(#[from] porfiry_storage::StorageError),
    /// JSON output failed.
    #[error("cannot print JSON: {0}")]
    Json(#[from] serde_json::Error),
}

/// Why a note cannot go to `devices`: that audience carries the person's
/// memory, which its devices share by themselves.
pub const DEVICES_NOT_FOR_NOTES: &str = "notes are not posted to `devices`: a person's devices share \
     the diary, goals, tasks and notebook by themselves (`porfiry devices`); post to private, \
     friends, a group, a peer or a club";

/// Parses an audience as `notes post --audience` takes it.
pub fn parse_audience(given: &str) -> Result<Sharing, NotesError> {
    if given == "devices" {
        return Err(NotesError::BadAudience {
            given: given.to_owned(),
            reason: DEVICES_NOT_FOR_NOTES.to_owned(),
        });
    }
    given
        .parse::<Sharing>()
        .map_err(|_| NotesError::BadAudience {
            given: given.to_owned(),
            reason: match given.parse::<porfiry_protocol::Audience>() {
                // Say what is wrong with a group name or peer id.
                Err(
                    e @ (AudienceError::BadGroupName(_)
                    | AudienceError::BadPeerId(_)
                    | AudienceError::BadClub(_)),
                ) => e.to_string(),
                _ => AUDIENCE_FORMS.to_owned(),
            },
        })
}

/// Parses an audience where `peer:` may name a friend (`peer:anna`, any
/// case) as well as give its peer id; the name is replaced by the peer id,
/// which is what the item carries (names never leave this node).
pub fn resolve_audience(store: &Store, given: &str) -> Result<Sharing, NotesError> {
    let refused = match parse_audience(given) {
        Ok(sharing) => return Ok(sharing),
        Err(e) => e,
    };
    if let Some(name) = given.strip_prefix("club:")
        && !name.contains('@')
    {
        let club = crate::sharing::clubs::resolve_club(store, name)
            .map_err(|e| NotesError::Post(SharingError::Club(e)))?;
        return Ok(Sharing::Shared(porfiry_protocol::Audience::Club(club)));
    }
    match given.strip_prefix("peer:") {
        Some(who) if check_friend_name(who).is_ok() => {
            let peer = resolve_friend(store, who)?;
            parse_audience(&format!("peer:{peer}"))
        }
        _ => Err(refused),
    }
}

/// Refuses a note text with nothing but whitespace.
pub fn check_text(text: &str) -> Result<(), NotesError> {
    if text.trim().is_empty() {
        return Err(NotesError::EmptyText);
    }
    Ok(())
}

/// Whose notes to list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    /// Written on this node.
    Own,
    /// Merged from friends.
    Friends,
    /// Both.
    #[default]
    All,
}

/// Every note, oldest first, read page by page.
pub fn all_notes(store: &porfiry_storage::Store) -> Result<Vec<Stored<Note>>, NotesError> {
    query_notes(store, Origin::All, None, false)
}

/// Notes of `origin`, oldest first, at most `limit` of them (all without
/// one; the newest `limit` with `newest`, else the oldest), read page by page.
pub fn query_notes(
    store: &porfiry_storage::Store,
    origin: Origin,
    limit: Option<usize>,
    newest: bool,
) -> Result<Vec<Stored<Note>>, NotesError> {
    let from_mesh = match origin {
        Origin::Own => Some(false),
        Origin::Friends => Some(true),
        Origin::All => None,
    };
    let mut all = Vec::new();
    loop {
        let want = limit.map_or(LIST_PAGE as usize, |l| {
            l.saturating_sub(all.len()).min(LIST_PAGE as usize)
        });
        if want == 0 {
            if newest {
                all.reverse();
            }
            return Ok(all);
        }
        let want = u32::try_from(want).unwrap_or(LIST_PAGE);
        let page = store.notes_filter(&NoteFilter {
            limit: Some(want),
            offset: u32::try_from(all.len()).unwrap_or(u32::MAX),
            oldest_first: !newest,
            from_mesh,
            ..Default::default()
        })?;
        let done = page.len() < want as usize;
        all.extend(page);
        if done {
            if newest {
                all.reverse();
            }
            return Ok(all);
        }
    }
}

#[cfg(test)]
mod tests {
    use porfiry_protocol::{Audience, NodeKey};

    use super::*;

    #[test]
    fn audiences_parse_and_bad_ones_say_what_is_wrong() {
        let bob = NodeKey::from_seed([2; 32]).peer_id().to_string();
        assert_eq!(
            parse_audience(&format!("peer:{bob}")).unwrap(),
            Sharing::Shared(Audience::Peer(bob))
        );
        assert_eq!(parse_audience("private").unwrap(), Sharing::Private);
        for (given, says) in [
            (
                "everyone",
                "expected public, friends, group:NAME, peer:PEER_ID (or peer:FRIEND_NAME), \
                 club:NAME (or club:NAME@FOUNDER) or private",
            ),
            ("club:Chess@x", "bad club name \"Chess\""),
            ("peer:bob", "bad peer id \"bob\""),
            ("group:Big", "bad group name \"Big\""),
            ("devices", "notes are not posted to `devices`"),
        ] {
            let e = parse_audience(given).unwrap_err().to_string();
            assert!(e.starts_with(&format!("bad audience {given:?}: ")), "{e}");
            assert!(e.contains(says), "{e}");
        }
    }
}

//! The notes `GET /api/notes` lists and the replies `POST /api/notes`
//! writes, read and written in the node's database by the real adapter:
//! a feed filtered by origin and audience whose replies carry the note
//! they answer, and a reply as a note row with its `reply_to` that the
//! node's publishing pass signs and sends (the mesh's own `post_note`
//! has no reply field).

use std::collections::HashMap;

use porfiry_mesh::node::{NodeError, NoteView, Origin};
use porfiry_mesh::notes::{NotesError, check_text, resolve_audience};
use porfiry_mesh::sharing::{SharingError, clubs, note_text};
use porfiry_protocol::{Audience, ItemId};
use porfiry_storage::{FeedQuery, Note, NoteSource, Sharing, StorageError, Store, Stored};

use crate::backend::NodeApiError;

/// Characters of the answered note a reply shows ("reply to anna: …"):
/// one line on a phone, enough to tell which note it was.
pub const REPLY_EXCERPT_CHARS: usize = 80;

/// A failure of the node's database → 500.
fn storage(error: StorageError) -> NodeApiError {
    NodeApiError::Internal(error.to_string())
}

/// A refusal of the mesh's note checks, as the API says it (bad input →
/// 400, unknown → 404, else 500).
pub fn notes_error(error: NotesError) -> NodeApiError {
    let error = NodeError::from(error);
    if error.is_not_found() {
        NodeApiError::NotFound(error.to_string())
    } else if error.is_bad_input() {
        NodeApiError::BadInput(error.to_string())
    } else {
        NodeApiError::Internal(error.to_string())
    }
}

/// The notes of one feed, oldest first, as JSON: each note as the mesh
/// lists it plus `reply_to` (the answered note's item id, or null) and
/// `reply_to_note` (`{author, author_name, excerpt}` of that note when
/// this node holds it, else null). `audience` is resolved as a post's
/// is (`club:NAME` and `peer:NAME` by name).
pub fn list(
    s: &Store,
    origin: Origin,
    audience: Option<&str>,
    limit: u32,
    newest: bool,
) -> Result<serde_json::Value, NodeApiError> {
    let audience = audience
        .map(|given| resolve_audience(s, given))
        .transpose()
        .map_err(notes_error)?;
    let from_mesh = match origin {
        Origin::Own => Some(false),
        Origin::Friends => Some(true),
        Origin::All => None,
    };
    let notes = s
        .notes_feed(&FeedQuery {
            from_mesh,
            audience,
            limit: Some(limit),
            newest,
        })
        .map_err(storage)?;
    let names: HashMap<String, String> = s
        .friends()
        .map_err(storage)?
        .into_iter()
        .filter(|f| !f.row.name.is_empty())
        .map(|f| (f.row.peer_id, f.row.name))
        .collect();
    let answered: Vec<ItemId> = notes.iter().filter_map(|n| n.row.reply_to).collect();
    let parents: HashMap<ItemId, Stored<Note>> = s
        .notes_of_items(&answered)
        .map_err(storage)?
        .into_iter()
        .filter_map(|n| Some((n.row.origin_item_id.or(n.row.item_id)?, n)))
        .collect();
    let name_of = |author: &Option<String>| author.as_ref().and_then(|a| names.get(a)).cloned();
    let mut out = Vec::with_capacity(notes.len());
    for note in notes {
        let reply_to = note.row.reply_to;
        let mut view = NoteView::from(note);
        view.author_name = name_of(&view.author);
        let mut json =
            serde_json::to_value(&view).map_err(|e| NodeApiError::Internal(e.to_string()))?;
        let parent = reply_to.and_then(|id| parents.get(&id)).map(|p| {
            serde_json::json!({
                "author": p.row.origin_author,
                "author_name": name_of(&p.row.origin_author),
                "excerpt": excerpt(&p.row.text),
            })
        });
        if let Some(object) = json.as_object_mut() {
            object.insert(
                "reply_to".to_owned(),
                reply_to.map(|id| id.to_string()).into(),
            );
            object.insert("reply_to_note".to_owned(), parent.into());
        }
        out.push(json);
    }
    Ok(serde_json::Value::Array(out))
}

/// The first [`REPLY_EXCERPT_CHARS`] characters of `text` on one line,
/// `…` when cut.
pub fn excerpt(text: &str) -> String {
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(REPLY_EXCERPT_CHARS) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}

/// A reply written, not yet signed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenReply {
    /// The note's row id.
    pub id: i64,
    /// Its audience, as listed.
    pub audience: String,
}

/// Writes `text` as the user's reply to the note published as (or merged
/// from) `reply_to`, for `audience` (resolved as `notes post` does), with
/// the checks `post_note` makes: a note's text, a direct message only to
/// a friend, a club note only by a member (`me`, this node's peer id). A
/// reply to a note this node does not hold is refused. The row is left
/// unsigned: the node's publishing pass signs it, `reply_to` included,
/// and sends it to its audience at its next look at the database (a
/// quarter second on a server).
pub fn write_reply(
    s: &Store,
    me: &str,
    text: &str,
    audience: &str,
    reply_to: ItemId,
    now_ms: u64,
) -> Result<WrittenReply, NodeApiError> {
    check_text(text).map_err(notes_error)?;
    let sharing = resolve_audience(s, audience).map_err(notes_error)?;
    if s.notes_of_items(&[reply_to]).map_err(storage)?.is_empty() {
        return Err(NodeApiError::BadInput(format!(
            "reply_to {reply_to}: this node holds no note with that item id"
        )));
    }
    match &sharing {
        Sharing::Shared(Audience::Peer(to)) if s.find_friend(to).map_err(storage)?.is_none() => {
            return Err(notes_error(NotesError::Post(SharingError::NotAFriend(
                to.clone(),
            ))));
        }
        Sharing::Shared(Audience::Club(club)) => clubs::check_member(s, club, me)
            .map_err(|e| notes_error(NotesError::Post(SharingError::Club(e))))?,
        _ => {}
    }
    let parsed = note_text::parse(text);
    let named: Vec<(String, String)> = s
        .friends()
        .map_err(storage)?
        .into_iter()
        .filter(|f| !f.row.name.is_empty())
        .map(|f| (f.row.name, f.row.peer_id))
        .collect();
    let row = Note {
        text: text.to_owned(),
        mentions: note_text::resolve_mentions(parsed.mentions, &named),
        hashtags: parsed.hashtags,
        source: NoteSource::User,
        audience: sharing,
        reply_to: Some(reply_to),
        ..Default::default()
    };
    let id = s.add(&row, now_ms).map_err(storage)?;
    Ok(WrittenReply {
        id,
        audience: row.audience.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_excerpt_is_one_line_cut_at_its_limit() {
        assert_eq!(excerpt("dinner\n at  seven"), "dinner at seven");
        let long = "ж".repeat(REPLY_EXCERPT_CHARS + 5);
        let cut = excerpt(&long);
        assert_eq!(cut.chars().count(), REPLY_EXCERPT_CHARS + 1);
        assert!(cut.ends_with('…'));
        assert_eq!(
            excerpt(&"a".repeat(REPLY_EXCERPT_CHARS)).len(),
            REPLY_EXCERPT_CHARS
        );
    }
}

//! The notes `GET /api/notes` lists, read in the node's database by the
//! real adapter: a feed filtered by origin and audience whose replies
//! carry the note they answer, and the check that a reply `POST
//! /api/notes` takes answers a note this node holds (the reply itself is
//! posted, signed and sent as any note, through the mesh's `post_note`).

use std::collections::HashMap;

use porfiry_mesh::node::{NodeError, NoteView, Origin};
use porfiry_mesh::notes::{NotesError, resolve_audience};
use porfiry_protocol::ItemId;
use porfiry_storage::{FeedQuery, Note, StorageError, Store, Stored};

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
    crate::adapters::node_error(NodeError::from(error))
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

/// Refuses a reply to a note this node does not hold (published here or
/// merged from a friend as `reply_to`): the page only offers replies to
/// listed notes, so anything else is a mistyped or stale id.
pub fn check_reply_target(s: &Store, reply_to: ItemId) -> Result<(), NodeApiError> {
    if s.notes_of_items(&[reply_to]).map_err(storage)?.is_empty() {
        return Err(NodeApiError::BadInput(format!(
            "reply_to {reply_to}: this node holds no note with that item id"
        )));
    }
    Ok(())
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

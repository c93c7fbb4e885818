//! `porfiry notes post|list`: write a note (mentions and hashtags parsed;
//! unless private, signed as an item in the same transaction, for the
//! daemon to send now or at its next start) and read the notebook, where
//! notes merged from friends show their origin.
//!
//! The audience and text are checked, and the item signed, before the
//! database is written, so a bad call changes nothing. The checks
//! ([`parse_audience`], [`check_text`]) and the listing ([`query_notes`])
//! are shared with `NodeHandle`.

use clap::{Args, Subcommand};
use porfiry_protocol::item::audience::AudienceError;
use porfiry_protocol::{ItemId, ItemKind};
use porfiry_storage::{Note, NoteFilter, NoteSource, Sharing, Store, Stored, check_friend_name};

use super::friends::{FriendsError, friend_names, open, resolve_friend};
use crate::data_dir::DataDir;
use crate::sharing::{SharingError, post_note, retract_item};

/// The audience `notes post` uses when none is given: friends only, so a
/// note reaches the people the user chose and goes no further unless asked.
pub const DEFAULT_AUDIENCE: &str = "friends";

/// The audiences `notes post` takes, for error messages.
pub const AUDIENCE_FORMS: &str = "expected public, friends, group:NAME, peer:PEER_ID (or peer:FRIEND_NAME), \
     club:NAME (or club:NAME@FOUNDER) or private";

/// Notes read per page by `notes list`: the storage list cap.
pub const LIST_PAGE: u32 = porfiry_storage::limits::MAX_LIST_LIMIT;

/// `porfiry notes …`
#[derive(Debug, Subcommand)]
pub enum NotesCommand {
    /// Write a note; unless private it is sent to the audience.
    Post(PostArgs),
    /// Withdraw one of your shared notes everywhere: signs a retraction that
    /// friends apply and pass on, and deletes the note here.
    Retract {
        /// The note's item id (hex, as `notes post` printed it).
        #[arg(value_name = "ITEM_ID")]
        item_id: String,
    },
    /// List every note, oldest first; notes from friends name their author.
    List {
        /// Print JSON (one array of note objects).
        #[arg(long)]
        json: bool,
    },
}

/// Arguments of `notes post`.
#[derive(Debug, Args)]
pub struct PostArgs {
    /// Who receives it: public (friends and onward), friends, group:NAME
    /// (friends tagged NAME), peer:PEER_ID or peer:FRIEND_NAME (that one
    /// friend only, never passed on), club:NAME or club:NAME@FOUNDER (the
    /// club's members, relayed member to member), or private (never leaves
    /// this node).
    #[arg(long, value_name = "AUDIENCE", default_value = DEFAULT_AUDIENCE)]
    pub audience: String,
    /// The text (several words are joined with spaces).
    #[arg(value_name = "TEXT", required = true, num_args = 1..)]
    pub text: Vec<String>,
}

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

/// Runs one `notes` command; returns what to print.
pub fn notes(dir: &DataDir, command: &NotesCommand, now_ms: u64) -> Result<String, NotesError> {
    match command {
        NotesCommand::Post(args) => post(dir, args, now_ms),
        NotesCommand::Retract { item_id } => retract(dir, item_id, now_ms),
        NotesCommand::List { json } => list(dir, *json),
    }
}

/// Parses an audience as `notes post --audience` takes it.
pub fn parse_audience(given: &str) -> Result<Sharing, NotesError> {
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

fn post(dir: &DataDir, args: &PostArgs, now_ms: u64) -> Result<String, NotesError> {
    let text = args.text.join(" ");
    check_text(&text)?;
    let (key, store) = open(dir)?;
    let sharing = resolve_audience(&store, &args.audience)?;
    let posted = post_note(
        &store,
        &key,
        &text,
        sharing.clone(),
        NoteSource::Cli,
        now_ms,
    )?;
    Ok(match posted.item {
        Some(item) => format!(
            "posted note {} to {sharing} as item {}",
            posted.id,
            item.id()
        ),
        None => format!("saved private note {}", posted.id),
    })
}

fn retract(dir: &DataDir, item_id: &str, now_ms: u64) -> Result<String, NotesError> {
    let target: ItemId = item_id.trim().parse().map_err(|_| NotesError::BadItemId {
        given: item_id.to_owned(),
    })?;
    let (key, store) = open(dir)?;
    let record = store
        .get_item(&target)?
        .ok_or_else(|| NotesError::NoSuchItem(target.to_string()))?
        .record;
    let me = key.peer_id().to_string();
    if record.author != me || record.kind != ItemKind::Note {
        return Err(NotesError::NotYours(target.to_string()));
    }
    let retraction = retract_item(&store, &key, &record, now_ms)?;
    Ok(format!(
        "retracted item {target} with item {}",
        retraction.id()
    ))
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
    query_notes(store, Origin::All, None)
}

/// Notes of `origin`, oldest first, at most `limit` of them (all without
/// one), read page by page.
pub fn query_notes(
    store: &porfiry_storage::Store,
    origin: Origin,
    limit: Option<usize>,
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
            return Ok(all);
        }
        let want = u32::try_from(want).unwrap_or(LIST_PAGE);
        let page = store.notes_filter(&NoteFilter {
            limit: Some(want),
            offset: u32::try_from(all.len()).unwrap_or(u32::MAX),
            oldest_first: true,
            from_mesh,
            ..Default::default()
        })?;
        let done = page.len() < want as usize;
        all.extend(page);
        if done {
            return Ok(all);
        }
    }
}

/// One note as `notes list --json` prints it: the stored note with the
/// name this node calls its author by (`null` for our own notes and for
/// friends without a name); `origin_author` keeps the peer id.
#[derive(Debug, serde::Serialize)]
struct ListedNote<'a> {
    #[serde(flatten)]
    note: &'a Stored<Note>,
    name: Option<&'a str>,
}

fn list(dir: &DataDir, json: bool) -> Result<String, NotesError> {
    let (_, store) = open(dir)?;
    let notes = all_notes(&store)?;
    let names = friend_names(&store)?;
    let name_of = |n: &Stored<Note>| {
        n.row
            .origin_author
            .as_ref()
            .and_then(|a| names.get(a))
            .map(String::as_str)
    };
    if json {
        let listed: Vec<ListedNote<'_>> = notes
            .iter()
            .map(|n| ListedNote {
                note: n,
                name: name_of(n),
            })
            .collect();
        return Ok(serde_json::to_string_pretty(&listed)?);
    }
    if notes.is_empty() {
        return Ok("no notes yet".into());
    }
    let lines: Vec<String> = notes
        .iter()
        .map(|n| {
            let from = match (name_of(n), &n.row.origin_author) {
                (Some(name), _) => format!("from {name}"),
                (None, Some(a)) => format!("from {a}"),
                (None, None) => "mine".into(),
            };
            format!("#{} [{}] {from}: {}", n.id, n.row.audience, n.row.text)
        })
        .collect();
    Ok(lines.join("\n"))
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
        ] {
            let e = parse_audience(given).unwrap_err().to_string();
            assert!(e.starts_with(&format!("bad audience {given:?}: ")), "{e}");
            assert!(e.contains(says), "{e}");
        }
    }
}

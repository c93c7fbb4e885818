//! `porfiry notes post|list|retract`: write a note (mentions and hashtags
//! parsed; unless private, signed as an item in the same transaction, for
//! the daemon to send now or at its next start) and read the notebook, where
//! notes merged from friends show their origin. The checks and the listing
//! are `porfiry_mesh::notes`', shared with `NodeHandle`.

use clap::{Args, Subcommand};
use porfiry_mesh::data_dir::DataDir;
use porfiry_mesh::friends::{friend_names, open};
use porfiry_mesh::notes::{DEFAULT_AUDIENCE, NotesError, all_notes, check_text, resolve_audience};
use porfiry_mesh::sharing::{post_note, retract_item};
use porfiry_protocol::{ItemId, ItemKind};
use porfiry_storage::{Note, NoteSource, Stored};

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

/// Runs one `notes` command; returns what to print.
pub fn notes(dir: &DataDir, command: &NotesCommand, now_ms: u64) -> Result<String, NotesError> {
    match command {
        NotesCommand::Post(args) => post(dir, args, now_ms),
        NotesCommand::Retract { item_id } => retract(dir, item_id, now_ms),
        NotesCommand::List { json } => list(dir, *json),
    }
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

//! The `notes` set over `notes`, the user's notebook and the friends'
//! chat: list, read, add (private here, or published to an audience through
//! the running node), update, delete, tag, readmark, and cleanup of old
//! notes (seed 003: "инициализация очистки … notes от устаревших записей"). Every added note wakes
//! an idle core ([`CoreEvent::NoteArrived`]).

use porfiry_skills::{ArgSpec, Args, BoxFuture, CallContext, Language, ToolEffect};
use porfiry_storage::{Note, NoteFilter, NoteSource, Sharing, StorageError, Store};

use super::parse::{self, id_arg, offset_arg, update_args};
use super::records::{self, MAX_COUNTED_ROWS, MAX_LIST_LINES, Shown, Total, page, tag_suffix};
use super::set::{Fail, Reply, StoreSet};
use crate::StoreTools;
use crate::texts::store_replies as texts;
use porfiry_mesh::events::CoreEvent;
use porfiry_mesh::node::NotePost;
use porfiry_mesh::sharing::note_text;

/// Fields `notes_update` may change (text and topic only while the note is
/// local: a published note is signed as it was).
const FIELDS: &[&str] = &["text", "topic", "priority"];

/// Which notes `notes_list` shows.
const WHICH: &[&str] = &["all", "unread", "mesh", "own"];

impl Shown for Note {
    fn line(&self, lang: Language) -> String {
        let from = self
            .origin_author
            .clone()
            .unwrap_or_else(|| self.source.to_string());
        let unread = if self.read {
            String::new()
        } else {
            format!(" ({})", texts::unread_mark(lang))
        };
        format!(
            "[p{}] {from}: {}{}{unread}",
            self.priority,
            self.text,
            tag_suffix(&self.tags)
        )
    }

    fn details(&self, lang: Language) -> String {
        let topic = self
            .topic
            .as_ref()
            .map(|t| format!("{t}\n"))
            .unwrap_or_default();
        format!("{topic}{} → {}", self.line(lang), self.audience)
    }
}

/// The `notes` set.
pub(crate) fn set(deps: &StoreTools) -> StoreSet {
    use ToolEffect::{Network, Read, Write};
    StoreSet::new(
        "notes",
        deps,
        vec![
            (
                "list",
                vec![ArgSpec::choice("which", WHICH).optional(), offset_arg()],
                Read,
            ),
            ("read", vec![id_arg()], Read),
            // Network: with an audience the note leaves the node. One tool
            // has one effect, so private notes pass the same check.
            (
                "add",
                vec![ArgSpec::text("text"), ArgSpec::word("audience").optional()],
                Network,
            ),
            ("update", update_args(FIELDS), Write),
            ("delete", vec![id_arg()], Write),
            ("tag", vec![id_arg(), ArgSpec::text("tags")], Write),
            (
                "readmark",
                vec![
                    id_arg(),
                    ArgSpec::choice("state", &["read", "unread"]).optional(),
                ],
                Write,
            ),
            (
                "cleanup",
                vec![
                    ArgSpec::int("older_than_secs"),
                    ArgSpec::choice("which", &["read", "all"]).optional(),
                ],
                Write,
            ),
        ],
        run,
    )
}

fn run<'a>(
    d: &'a StoreTools,
    verb: &'a str,
    args: &'a Args,
    ctx: &'a CallContext,
) -> BoxFuture<'a, Option<Reply>> {
    Box::pin(async move {
        match verb {
            "list" => Some(list(d, ctx, args).await),
            "add" => Some(add(d, ctx, args).await),
            "update" => Some(update(d, ctx, args).await),
            "tag" => Some(tag(d, ctx, args).await),
            "readmark" => Some(readmark(d, ctx, args).await),
            "cleanup" => Some(cleanup(d, ctx, args).await),
            other => records::common_verb::<Note>(d, other, ctx, args).await,
        }
    })
}

async fn list(d: &StoreTools, ctx: &CallContext, args: &Args) -> Reply {
    let lang = ctx.language;
    let offset = parse::offset(lang, args)?;
    let mut filter = NoteFilter {
        offset,
        ..Default::default()
    };
    match args.get("which").unwrap_or("all") {
        "unread" => filter.read = Some(false),
        "mesh" => filter.from_mesh = Some(true),
        "own" => filter.from_mesh = Some(false),
        _ => {}
    }
    let everything = filter
        == NoteFilter {
            offset,
            ..Default::default()
        };
    let (rows, total) =
        d.db.read(move |s| -> Result<_, StorageError> {
            if everything {
                filter.limit = Some(MAX_LIST_LINES as u32);
                let all = s.count::<Note>()?.saturating_sub(u64::from(offset));
                return Ok((s.notes_filter(&filter)?, Total::Known(all)));
            }
            filter.limit = Some(MAX_COUNTED_ROWS);
            let rows = s.notes_filter(&filter)?;
            let n = rows.len() as u64;
            let total = if n >= u64::from(MAX_COUNTED_ROWS) {
                Total::AtLeast(n)
            } else {
                Total::Known(n)
            };
            Ok((rows, total))
        })
        .await??;
    let lines = rows
        .iter()
        .take(MAX_LIST_LINES)
        .map(|r| format!("#{} {}", r.id, r.row.line(lang)))
        .collect();
    Ok(page(lang, lines, offset, total))
}

/// Who wrote a note the caller adds: the core is the LLM.
fn source(core: bool) -> NoteSource {
    if core {
        NoteSource::Llm
    } else {
        NoteSource::User
    }
}

async fn add(d: &StoreTools, ctx: &CallContext, args: &Args) -> Reply {
    let lang = ctx.language;
    let text = parse::non_empty(lang, "text", args.text("text"))?;
    let audience: Sharing = args.get("audience").unwrap_or("private").parse()?;
    let (now, core) = (parse::now(ctx), parse::is_core(ctx));
    let (id, reply) = match audience {
        Sharing::Private => {
            let id =
                d.db.write(move |s| -> Result<i64, StorageError> {
                    let parsed = note_text::parse(&text);
                    let note = Note {
                        text,
                        mentions: parsed.mentions,
                        hashtags: parsed.hashtags,
                        source: source(core),
                        llm_id: records::author(s, core)?,
                        ..Default::default()
                    };
                    s.add(&note, now)
                })
                .await??;
            (id, texts::added(lang, texts::noun(lang, "notes"), id))
        }
        Sharing::Shared(_) => {
            let Some(node) = &d.node else {
                return Err(Fail::Bad(texts::needs_node(lang).to_owned()));
            };
            let shown = audience.to_string();
            let posted = node
                .post_note(NotePost {
                    text,
                    audience,
                    reply_to: None,
                })
                .await
                .map_err(|e| Fail::refused(lang, e))?;
            let id = posted.id;
            // The node stores what it signs as the user's; the local
            // fields say who really wrote it.
            d.db.write(move |s| mark_author(s, id, core, now)).await??;
            (id, texts::note_published(lang, id, &shown))
        }
    };
    d.events.send(CoreEvent::NoteArrived { id });
    Ok(reply)
}

/// Sets a posted note's local source and `llm_id` (never published).
fn mark_author(s: &Store, id: i64, core: bool, now: u64) -> Result<(), StorageError> {
    let mut note = s.get::<Note>(id)?.row;
    note.source = source(core);
    note.llm_id = records::author(s, core)?;
    s.update(id, &note, now)
}

/// Changes text or topic of a local note (re-reading its mentions and
/// hashtags), or any note's priority.
async fn update(d: &StoreTools, ctx: &CallContext, args: &Args) -> Reply {
    let lang = ctx.language;
    let id = parse::id(lang, args, "id")?;
    let field = args.text("field").to_owned();
    let value = args.text("value").trim().to_owned();
    let now = parse::now(ctx);
    d.db.write(move |s| -> Result<(), Fail> {
        let mut note = s.get::<Note>(id)?.row;
        let signed = note.item_id.is_some() || note.origin_item_id.is_some();
        match field.as_str() {
            "priority" => note.priority = parse::whole(lang, &field, &value)?,
            _ if signed => return Err(Fail::Bad(texts::note_not_editable(lang, id))),
            "text" => {
                note.text = parse::non_empty(lang, &field, &value)?;
                let parsed = note_text::parse(&note.text);
                note.mentions = parsed.mentions;
                note.hashtags = parsed.hashtags;
            }
            "topic" => note.topic = (!value.is_empty()).then_some(value),
            other => return Err(parse::unknown_field(lang, other, FIELDS)),
        }
        s.update(id, &note, now)?;
        Ok(())
    })
    .await??;
    Ok(texts::updated(lang, texts::noun(lang, "notes"), id))
}

async fn tag(d: &StoreTools, ctx: &CallContext, args: &Args) -> Reply {
    let lang = ctx.language;
    let id = parse::id(lang, args, "id")?;
    let tags = parse::tags(args.text("tags"))?;
    let now = parse::now(ctx);
    d.db.write(move |s| s.set_tags::<Note>(id, &tags, now))
        .await??;
    Ok(texts::updated(lang, texts::noun(lang, "notes"), id))
}

async fn readmark(d: &StoreTools, ctx: &CallContext, args: &Args) -> Reply {
    let lang = ctx.language;
    let id = parse::id(lang, args, "id")?;
    let read = args.get("state") != Some("unread");
    let now = parse::now(ctx);
    d.db.write(move |s| s.notes_mark_read(id, read, now))
        .await??;
    Ok(texts::note_marked(lang, id, read))
}

/// Deletes notes older than `older_than_secs`; only those already read
/// unless `which` is `all` (an unread note is the user's unanswered word).
async fn cleanup(d: &StoreTools, ctx: &CallContext, args: &Args) -> Reply {
    let lang = ctx.language;
    let secs = args.int("older_than_secs").unwrap_or(-1);
    let secs = u64::try_from(secs).map_err(|_| {
        Fail::Bad(texts::bad_number(
            lang,
            "older_than_secs",
            &secs.to_string(),
        ))
    })?;
    let read_only = args.get("which") != Some("all");
    let before = parse::now(ctx).saturating_sub(secs.saturating_mul(1_000));
    let n =
        d.db.write(move |s| s.notes_cleanup(before, read_only))
            .await??;
    Ok(texts::notes_cleaned(lang, n, read_only))
}

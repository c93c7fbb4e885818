//! The `tags` set: `tags_stats [source]`, how many rows carry each tag in
//! one table or all of them, most used first; `tags_pin|tag|[source]` and
//! `tags_unpin`, attention held by tag (seed 003: pinning "by means of
//! tags") over the pinnable tables.

use porfiry_skills::{ArgSpec, Args, BoxFuture, CallContext, ToolEffect};
use porfiry_storage::{Concept, DiaryEntry, TagSource, Task};

use super::records::{Total, page};
use super::set::{Reply, StoreSet};
use crate::StoreTools;

/// The sources `tags_stats` names, and `all`.
const SOURCES: &[&str] = &[
    "all", "diary", "concepts", "links", "goals", "tasks", "notes", "memory",
];

/// The pinnable sources `tags_pin` names, and `all`.
const PINNABLE: &[&str] = &["all", "diary", "concepts", "tasks"];

/// The `tags` set.
pub(crate) fn set(deps: &StoreTools) -> StoreSet {
    let pin_args = || {
        vec![
            ArgSpec::word("tag"),
            ArgSpec::choice("source", PINNABLE).optional(),
        ]
    };
    StoreSet::new(
        "tags",
        deps,
        vec![
            (
                "stats",
                vec![ArgSpec::choice("source", SOURCES).optional()],
                ToolEffect::Read,
            ),
            ("pin", pin_args(), ToolEffect::Write),
            ("unpin", pin_args(), ToolEffect::Write),
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
            "stats" => Some(stats(d, ctx, args).await),
            "pin" => Some(pin(d, ctx, args, true).await),
            "unpin" => Some(pin(d, ctx, args, false).await),
            _ => None,
        }
    })
}

async fn stats(d: &StoreTools, ctx: &CallContext, args: &Args) -> Reply {
    let sources: Vec<TagSource> = match args.get("source") {
        None | Some("all") => TagSource::ALL.to_vec(),
        // The binding allows only the listed words, each a TagSource.
        Some(one) => vec![one.parse()?],
    };
    let counts = d.db.read(move |s| s.tag_stats(&sources)).await??;
    let total = counts.len() as u64;
    let lines = counts
        .into_iter()
        .map(|(tag, n)| format!("{tag}: {n}"))
        .collect();
    Ok(page(ctx.language, lines, 0, Total::Known(total)))
}

/// `tags_pin|tag|[source]` / `tags_unpin`: every row of the source (or of
/// all pinnable tables) carrying the tag, in one transaction.
async fn pin(d: &StoreTools, ctx: &CallContext, args: &Args, on: bool) -> Reply {
    let lang = ctx.language;
    let tag = args.text("tag").trim_start_matches('#').to_owned();
    let source = args.get("source").unwrap_or("all").to_owned();
    let now = super::parse::now(ctx);
    let wants = move |name: &str| source == "all" || source == name;
    let counts =
        d.db.write(move |s| {
            s.transaction(|s| {
                let mut counts = [0usize; 3];
                if wants("diary") {
                    counts[0] = s.set_pinned_by_tag::<DiaryEntry>(&tag, on, now)?;
                }
                if wants("concepts") {
                    counts[1] = s.set_pinned_by_tag::<Concept>(&tag, on, now)?;
                }
                if wants("tasks") {
                    counts[2] = s.set_pinned_by_tag::<Task>(&tag, on, now)?;
                }
                Ok((tag, counts))
            })
        })
        .await??;
    let (tag, [diary, concepts, tasks]) = counts;
    let noun = |t| crate::texts::store_replies::noun(lang, t);
    Ok(crate::texts::store_replies::pinned_by_tag(
        lang,
        &tag,
        &[
            (noun("diary_entries"), diary),
            (noun("concepts"), concepts),
            (noun("tasks"), tasks),
        ],
        on,
    ))
}

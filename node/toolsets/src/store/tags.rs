//! The `tags` set: `tags_stats [source]`, how many rows carry each tag in
//! one table or all of them, most used first.

use porfiry_skills::{ArgSpec, Args, BoxFuture, CallContext, ToolEffect};
use porfiry_storage::TagSource;

use super::records::{Total, page};
use super::set::{Reply, StoreSet};
use crate::StoreTools;

/// The sources `tags_stats` names, and `all`.
const SOURCES: &[&str] = &[
    "all", "diary", "concepts", "links", "goals", "tasks", "notes", "memory",
];

/// The `tags` set.
pub(crate) fn set(deps: &StoreTools) -> StoreSet {
    StoreSet::new(
        "tags",
        deps,
        vec![(
            "stats",
            vec![ArgSpec::choice("source", SOURCES).optional()],
            ToolEffect::Read,
        )],
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

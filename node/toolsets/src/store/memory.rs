//! The `memory` set over `llm_memory`, the LLM's notebook of working ideas
//! and plans: list, add `text [tags]`, delete.

use porfiry_skills::{ArgSpec, Args, BoxFuture, CallContext, Language, ToolEffect};
use porfiry_storage::MemoryEntry;

use super::parse::{self, id_arg, offset_arg, tag_arg};
use super::records::{self, Shown, tag_suffix};
use super::set::{Reply, StoreSet};
use crate::StoreTools;

impl Shown for MemoryEntry {
    fn line(&self, _lang: Language) -> String {
        match &self.title {
            Some(t) => format!("{t}: {}{}", self.content, tag_suffix(&self.tags)),
            None => format!("{}{}", self.content, tag_suffix(&self.tags)),
        }
    }

    fn set_author(&mut self, llm: Option<String>) {
        self.llm_id = llm;
    }
}

/// The `memory` set.
pub(crate) fn set(deps: &StoreTools) -> StoreSet {
    use ToolEffect::{Read, Write};
    StoreSet::new(
        "memory",
        deps,
        vec![
            ("list", vec![tag_arg(), offset_arg()], Read),
            (
                "add",
                vec![ArgSpec::text("text"), ArgSpec::text("tags").optional()],
                Write,
            ),
            ("delete", vec![id_arg()], Write),
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
        Some(match verb {
            "list" => records::list_args::<MemoryEntry>(d, ctx, args).await,
            "add" => add(d, ctx, args).await,
            "delete" => records::delete::<MemoryEntry>(d, ctx, args).await,
            _ => return None,
        })
    })
}

async fn add(d: &StoreTools, ctx: &CallContext, args: &Args) -> Reply {
    let page = MemoryEntry {
        content: parse::non_empty(ctx.language, "text", args.text("text"))?,
        tags: parse::tags(args.text("tags"))?,
        ..Default::default()
    };
    records::add(d, ctx, page).await
}

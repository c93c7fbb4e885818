//! The `diary` set over `diary_entries` (seed 003, "cognitive diary"):
//! list, search, read, add `text [tags]`, update, delete, pin, unpin.

use porfiry_skills::{ArgSpec, Args, BoxFuture, CallContext, Language, ToolEffect};
use porfiry_storage::{DiaryEntry, ListQuery};

use super::parse::{self, id_arg, offset_arg, tag_arg, update_args};
use super::records::{self, Shown, tag_suffix};
use super::set::{Fail, Reply, StoreSet};
use crate::StoreTools;

/// Fields `diary_update` may change.
const FIELDS: &[&str] = &["text", "tags", "priority"];

impl Shown for DiaryEntry {
    fn line(&self, lang: Language) -> String {
        let pin = records::pin_suffix(lang, self.pinned);
        format!("{}{}{pin}", self.text, tag_suffix(&self.tags))
    }

    fn details(&self, lang: Language) -> String {
        format!("{} (p{})", self.line(lang), self.priority)
    }

    fn set_author(&mut self, llm: Option<String>) {
        self.llm_id = llm;
    }

    fn set_field(&mut self, lang: Language, field: &str, value: &str) -> Result<(), Fail> {
        match field {
            "text" => self.text = parse::non_empty(lang, field, value)?,
            "tags" => self.tags = parse::tags(value)?,
            "priority" => self.priority = parse::whole(lang, field, value)?,
            other => return Err(parse::unknown_field(lang, other, FIELDS)),
        }
        Ok(())
    }
}

/// The `diary` set.
pub(crate) fn set(deps: &StoreTools) -> StoreSet {
    use ToolEffect::{Read, Write};
    StoreSet::new(
        "diary",
        deps,
        vec![
            ("list", vec![tag_arg(), offset_arg()], Read),
            ("search", vec![ArgSpec::text("query")], Read),
            ("read", vec![id_arg()], Read),
            (
                "add",
                vec![ArgSpec::text("text"), ArgSpec::text("tags").optional()],
                Write,
            ),
            ("update", update_args(FIELDS), Write),
            ("delete", vec![id_arg()], Write),
            ("pin", vec![id_arg()], Write),
            ("unpin", vec![id_arg()], Write),
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
            "search" => {
                let q = ListQuery {
                    text: Some(args.text("query").to_owned()),
                    ..Default::default()
                };
                Some(records::list::<DiaryEntry>(d, ctx.language, q, 0).await)
            }
            "add" => Some(add(d, ctx, args).await),
            other => records::pinnable_verb::<DiaryEntry>(d, other, ctx, args).await,
        }
    })
}

async fn add(d: &StoreTools, ctx: &CallContext, args: &Args) -> Reply {
    let entry = DiaryEntry {
        text: parse::non_empty(ctx.language, "text", args.text("text"))?,
        tags: parse::tags(args.text("tags"))?,
        ..Default::default()
    };
    records::add(d, ctx, entry).await
}

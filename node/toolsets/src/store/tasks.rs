//! The `tasks` set over `tasks`: list, read, add (optionally for a goal),
//! update, delete, pin, unpin (pinned tasks are shown in every context).

use porfiry_skills::{ArgSpec, Args, BoxFuture, CallContext, Language, ToolEffect};
use porfiry_storage::Task;

use super::parse::{self, id_arg, offset_arg, tag_arg, update_args};
use super::records::{self, Shown, tag_suffix};
use super::set::{Fail, Reply, StoreSet};
use crate::StoreTools;
use crate::texts::store_replies as texts;

/// Fields `tasks_update` may change (`goal`: a goal id, or `none`).
const FIELDS: &[&str] = &["title", "description", "status", "priority", "tags", "goal"];

impl Shown for Task {
    fn line(&self, lang: Language) -> String {
        let goal = self
            .goal_id
            .map(|g| format!(", goal #{g}"))
            .unwrap_or_default();
        let pin = if self.pinned {
            format!(", {}", texts::pinned_mark(lang))
        } else {
            String::new()
        };
        format!(
            "{} ({}, p{}{goal}{pin}){}",
            self.title,
            self.status,
            self.priority,
            tag_suffix(&self.tags)
        )
    }

    fn details(&self, lang: Language) -> String {
        records::line_then(self.line(lang), &self.description)
    }

    fn set_author(&mut self, llm: Option<String>) {
        self.llm_id = llm;
    }

    fn set_field(&mut self, lang: Language, field: &str, value: &str) -> Result<(), Fail> {
        match field {
            "title" => self.title = parse::non_empty(lang, field, value)?,
            "description" => self.description = value.trim().to_owned(),
            "status" => self.status = parse::progress(lang, value)?,
            "priority" => self.priority = parse::whole(lang, field, value)?,
            "tags" => self.tags = parse::tags(value)?,
            "goal" => {
                let v = value.trim().trim_start_matches('#');
                self.goal_id = match v.to_ascii_lowercase().as_str() {
                    "" | "none" | "null" | "-" => None,
                    _ => Some(parse::whole(lang, field, v)?),
                }
            }
            other => return Err(parse::unknown_field(lang, other, FIELDS)),
        }
        Ok(())
    }
}

/// The `tasks` set.
pub(crate) fn set(deps: &StoreTools) -> StoreSet {
    use ToolEffect::{Read, Write};
    StoreSet::new(
        "tasks",
        deps,
        vec![
            ("list", vec![tag_arg(), offset_arg()], Read),
            ("read", vec![id_arg()], Read),
            (
                "add",
                vec![
                    ArgSpec::text("title"),
                    ArgSpec::int("goal").optional(),
                    ArgSpec::text("description").optional(),
                ],
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
            "add" => Some(add(d, ctx, args).await),
            other => records::pinnable_verb::<Task>(d, other, ctx, args).await,
        }
    })
}

async fn add(d: &StoreTools, ctx: &CallContext, args: &Args) -> Reply {
    let task = Task {
        title: parse::non_empty(ctx.language, "title", args.text("title"))?,
        goal_id: args.int("goal"),
        description: args.text("description").trim().to_owned(),
        ..Default::default()
    };
    records::add(d, ctx, task).await
}

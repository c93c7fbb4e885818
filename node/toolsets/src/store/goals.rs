//! The `goals` set over `goals`: list, read (with the goal's tasks), add,
//! update, delete (its tasks stay, without a goal).

use porfiry_skills::{ArgSpec, Args, BoxFuture, CallContext, Language, ToolEffect};
use porfiry_storage::{Goal, StorageError};

use super::parse::{self, id_arg, offset_arg, tag_arg, update_args};
use super::records::{self, MAX_LIST_LINES, Shown, head_and_page, tag_suffix};
use super::set::{Fail, Reply, StoreSet};
use crate::StoreTools;
use crate::texts::store_replies as texts;

/// Fields `goals_update` may change.
const FIELDS: &[&str] = &["title", "description", "status", "priority", "tags"];

impl Shown for Goal {
    fn line(&self, _lang: Language) -> String {
        format!(
            "{} ({}, p{}){}",
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
            other => return Err(parse::unknown_field(lang, other, FIELDS)),
        }
        Ok(())
    }
}

/// The `goals` set.
pub(crate) fn set(deps: &StoreTools) -> StoreSet {
    use ToolEffect::{Read, Write};
    StoreSet::new(
        "goals",
        deps,
        vec![
            ("list", vec![tag_arg(), offset_arg()], Read),
            ("read", vec![id_arg()], Read),
            (
                "add",
                vec![
                    ArgSpec::text("title"),
                    ArgSpec::text("description").optional(),
                ],
                Write,
            ),
            ("update", update_args(FIELDS), Write),
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
        match verb {
            "read" => Some(read(d, ctx, args).await),
            "add" => Some(add(d, ctx, args).await),
            other => records::common_verb::<Goal>(d, other, ctx, args).await,
        }
    })
}

async fn add(d: &StoreTools, ctx: &CallContext, args: &Args) -> Reply {
    let goal = Goal {
        title: parse::non_empty(ctx.language, "title", args.text("title"))?,
        description: args.text("description").trim().to_owned(),
        ..Default::default()
    };
    records::add(d, ctx, goal).await
}

/// The goal and a page of its tasks.
async fn read(d: &StoreTools, ctx: &CallContext, args: &Args) -> Reply {
    let lang = ctx.language;
    let id = parse::id(lang, args, "id")?;
    let (goal, tasks) =
        d.db.read(move |s| -> Result<_, StorageError> {
            Ok((s.get::<Goal>(id)?, s.tasks_of_goal(id)?))
        })
        .await??;
    let lines = tasks
        .iter()
        .take(MAX_LIST_LINES)
        .map(|t| format!("#{} {}", t.id, t.row.line(lang)))
        .collect();
    let head = format!("#{} {}", goal.id, goal.row.details(lang));
    let word = texts::tasks_word(lang);
    Ok(head_and_page(lang, head, word, lines, tasks.len() as u64))
}

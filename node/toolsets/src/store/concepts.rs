//! The `concepts` set over `concepts`, the nodes of the semantic graph:
//! list, read (by id or name, with the concept's links), add, update,
//! delete (its links go with it), pin, unpin.

use porfiry_skills::{ArgSpec, Args, BoxFuture, CallContext, Language, ToolEffect};
use porfiry_storage::{Concept, StorageError};

use super::graph::{concept_id, link_line};
use super::parse::{self, id_arg, offset_arg, tag_arg, update_args};
use super::records::{self, MAX_LIST_LINES, Shown, head_and_page, tag_suffix};
use super::set::{Fail, Reply, StoreSet};
use crate::StoreTools;
use crate::texts::store_replies as texts;

/// Fields `concepts_update` may change.
const FIELDS: &[&str] = &["name", "description", "tags"];

impl Shown for Concept {
    fn line(&self, lang: Language) -> String {
        let pin = records::pin_suffix(lang, self.pinned);
        let desc = if self.description.is_empty() {
            String::new()
        } else {
            format!(" — {}", self.description)
        };
        format!("{}{desc}{}{pin}", self.name, tag_suffix(&self.tags))
    }

    fn set_author(&mut self, llm: Option<String>) {
        self.llm_id = llm;
    }

    fn set_field(&mut self, lang: Language, field: &str, value: &str) -> Result<(), Fail> {
        match field {
            "name" => self.name = parse::non_empty(lang, field, value)?,
            "description" => self.description = value.trim().to_owned(),
            "tags" => self.tags = parse::tags(value)?,
            other => return Err(parse::unknown_field(lang, other, FIELDS)),
        }
        Ok(())
    }
}

/// The `concepts` set.
pub(crate) fn set(deps: &StoreTools) -> StoreSet {
    use ToolEffect::{Read, Write};
    StoreSet::new(
        "concepts",
        deps,
        vec![
            ("list", vec![tag_arg(), offset_arg()], Read),
            ("read", vec![ArgSpec::word("concept")], Read),
            (
                "add",
                vec![
                    ArgSpec::word("name"),
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
            "read" => Some(read(d, ctx.language, args.text("concept").to_owned()).await),
            "add" => Some(add(d, ctx, args).await),
            other => records::pinnable_verb::<Concept>(d, other, ctx, args).await,
        }
    })
}

async fn add(d: &StoreTools, ctx: &CallContext, args: &Args) -> Reply {
    let concept = Concept {
        name: parse::non_empty(ctx.language, "name", args.text("name"))?,
        description: args.text("description").trim().to_owned(),
        ..Default::default()
    };
    records::add(d, ctx, concept).await
}

/// The concept and a page of its links, named.
async fn read(d: &StoreTools, lang: Language, key: String) -> Reply {
    let (head, links, total) =
        d.db.read(move |s| -> Result<_, StorageError> {
            let id = concept_id(s, &key)?;
            let concept = s.get::<Concept>(id)?;
            let all = s.links_of(id)?;
            let total = all.len() as u64;
            let lines = all
                .iter()
                .take(MAX_LIST_LINES)
                .map(|l| link_line(s, l))
                .collect::<Result<Vec<_>, _>>()?;
            Ok((concept, lines, total))
        })
        .await??;
    let head = format!("#{} {}", head.id, head.row.line(lang));
    let word = texts::links_word(lang);
    Ok(head_and_page(lang, head, word, links, total))
}

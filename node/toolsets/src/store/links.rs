//! The `links` set over `links`, the typed, weighted edges of the semantic
//! graph: list (all, or one concept's), read, add `from|relation|to`
//! (concept ids or names), update, delete.

use porfiry_skills::{ArgSpec, Args, BoxFuture, CallContext, Language, ToolEffect};
use porfiry_storage::{Link, ListQuery, StorageError};

use super::graph::{concept_id, link_line};
use super::parse::{self, id_arg, offset_arg, update_args};
use super::records::{self, MAX_LIST_LINES, Shown, Total, page, tag_suffix};
use super::set::{Fail, Reply, StoreSet};
use crate::StoreTools;
use crate::texts::store_replies as texts;

/// Fields `links_update` may change.
const FIELDS: &[&str] = &["relation", "weight", "tags", "from", "to"];

/// A new link's weight when none is given: the relation simply holds.
const DEFAULT_WEIGHT: f64 = 1.0;

impl Shown for Link {
    fn line(&self, _lang: Language) -> String {
        format!(
            "#{} —{}→ #{} (w {}){}",
            self.from_concept,
            self.relation,
            self.to_concept,
            self.weight,
            tag_suffix(&self.tags)
        )
    }

    fn set_author(&mut self, llm: Option<String>) {
        self.llm_id = llm;
    }

    fn set_field(&mut self, lang: Language, field: &str, value: &str) -> Result<(), Fail> {
        match field {
            "relation" => self.relation = parse::non_empty(lang, field, value)?,
            "weight" => self.weight = parse::real(lang, field, value)?,
            "tags" => self.tags = parse::tags(value)?,
            // Concept ids only here: names need the store (links_add takes them).
            "from" => self.from_concept = parse::whole(lang, field, value.trim_start_matches('#'))?,
            "to" => self.to_concept = parse::whole(lang, field, value.trim_start_matches('#'))?,
            other => return Err(parse::unknown_field(lang, other, FIELDS)),
        }
        Ok(())
    }
}

/// The `links` set.
pub(crate) fn set(deps: &StoreTools) -> StoreSet {
    use ToolEffect::{Read, Write};
    StoreSet::new(
        "links",
        deps,
        vec![
            (
                "list",
                vec![ArgSpec::word("concept").optional(), offset_arg()],
                Read,
            ),
            ("read", vec![id_arg()], Read),
            (
                "add",
                vec![
                    ArgSpec::word("from"),
                    ArgSpec::word("relation"),
                    ArgSpec::word("to"),
                    ArgSpec::word("weight").optional(),
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
            "list" => Some(list(d, ctx, args).await),
            "read" => Some(read(d, ctx, args).await),
            "add" => Some(add(d, ctx, args).await),
            other => records::common_verb::<Link>(d, other, ctx, args).await,
        }
    })
}

async fn list(d: &StoreTools, ctx: &CallContext, args: &Args) -> Reply {
    let lang = ctx.language;
    let offset = parse::offset(lang, args)?;
    let concept = parse::opt(args, "concept");
    let (lines, total) =
        d.db.read(move |s| -> Result<_, StorageError> {
            let (rows, total) = match concept {
                Some(key) => {
                    let all = s.links_of(concept_id(s, &key)?)?;
                    let total = all.len().saturating_sub(offset as usize) as u64;
                    let rows: Vec<_> = all.into_iter().skip(offset as usize).collect();
                    (rows, total)
                }
                None => {
                    let q = ListQuery {
                        limit: Some(MAX_LIST_LINES as u32),
                        offset,
                        ..Default::default()
                    };
                    let total = s.count::<Link>()?.saturating_sub(u64::from(offset));
                    (s.list::<Link>(&q)?, total)
                }
            };
            let lines = rows
                .iter()
                .take(MAX_LIST_LINES)
                .map(|l| link_line(s, l))
                .collect::<Result<Vec<_>, _>>()?;
            Ok((lines, total))
        })
        .await??;
    Ok(page(lang, lines, offset, Total::Known(total)))
}

async fn read(d: &StoreTools, ctx: &CallContext, args: &Args) -> Reply {
    let id = parse::id(ctx.language, args, "id")?;
    let line =
        d.db.read(move |s| link_line(s, &s.get::<Link>(id)?))
            .await??;
    Ok(line)
}

async fn add(d: &StoreTools, ctx: &CallContext, args: &Args) -> Reply {
    let lang = ctx.language;
    let weight = match args.get("weight") {
        Some(w) => parse::real(lang, "weight", w)?,
        None => DEFAULT_WEIGHT,
    };
    let relation = parse::non_empty(lang, "relation", args.text("relation"))?;
    let (from, to) = (args.text("from").to_owned(), args.text("to").to_owned());
    let (now, core) = (parse::now(ctx), parse::is_core(ctx));
    let id =
        d.db.write(move |s| -> Result<i64, StorageError> {
            let link = Link {
                from_concept: concept_id(s, &from)?,
                to_concept: concept_id(s, &to)?,
                relation,
                weight,
                llm_id: records::author(s, core)?,
                ..Default::default()
            };
            s.add(&link, now)
        })
        .await??;
    Ok(texts::added(lang, texts::noun(lang, "links"), id))
}

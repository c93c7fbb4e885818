//! What the record sets share: how a row shows itself ([`Shown`]), the
//! bounded page every list prints ([`page`]), and the generic list / read /
//! add / update / delete / pin over any [`Record`] table. Each runs in one
//! database closure, so a refused change leaves the row as it was.

use porfiry_skills::{ArgSpec, Args, BoxFuture, CallContext, Language, ToolEffect};
use porfiry_storage::{ListQuery, Pinnable, Record, StorageError, Store};

use super::parse;
use super::set::{Fail, Reply, StoreSet};
use crate::StoreTools;
use crate::texts::store_replies as texts;

/// Lines one list shows: ten short lines keep a reply near 200 tokens in a
/// 3k-token context, and the "…and N more (offset …)" line pages on.
pub const MAX_LIST_LINES: usize = 10;

/// Characters of one list line: enough for a title or a sentence; `_read`
/// shows the rest.
pub const MAX_LINE_CHARS: usize = 120;

/// Characters `_read` shows of one row: a long diary entry or script still
/// fits a small model's context beside everything else (about 400 tokens).
pub const MAX_READ_CHARS: usize = 1_500;

/// Rows a filtered list (tag, search) reads to count what it does not show:
/// beyond this the reply says "at least", so one search never loads a whole
/// table of 10k entries.
pub const MAX_COUNTED_ROWS: u32 = 200;

/// How a row of one table appears in the model's replies.
pub(crate) trait Shown: Record + Send + 'static {
    /// One line for lists, without the id.
    fn line(&self, lang: Language) -> String;

    /// The whole row for `_read`; the list line unless the table says more.
    fn details(&self, lang: Language) -> String {
        self.line(lang)
    }

    /// Names the LLM that wrote the row (`llm_id`), where the table has one.
    fn set_author(&mut self, _llm: Option<String>) {}

    /// Sets one field for `_update`; tables without an update tool keep the default.
    fn set_field(&mut self, lang: Language, field: &str, _value: &str) -> Result<(), Fail> {
        Err(Fail::Bad(texts::bad_choice(lang, "field", field, "-")))
    }
}

/// How many rows follow the offset, for the "…and N more" line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Total {
    /// Exactly this many.
    Known(u64),
    /// At least this many (the count stopped at a bound).
    AtLeast(u64),
}

/// `text` on one line, cut to `max` characters with a marker saying how much is left.
pub(crate) fn clip(lang: Language, text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_owned();
    }
    let head: String = text.chars().take(max).collect();
    format!("{head}{}", texts::clipped(lang, count - max))
}

/// `text` folded onto one line and cut to [`MAX_LINE_CHARS`].
pub(crate) fn one_line(lang: Language, text: &str) -> String {
    let folded = text.split_whitespace().collect::<Vec<_>>().join(" ");
    clip(lang, &folded, MAX_LINE_CHARS)
}

/// ` [a, b]` for a non-empty tag list.
pub(crate) fn tag_suffix(tags: &[String]) -> String {
    if tags.is_empty() {
        String::new()
    } else {
        format!(" [{}]", tags.join(", "))
    }
}

/// ` (pinned)` for a pinned row, else nothing.
pub(crate) fn pin_suffix(lang: Language, pinned: bool) -> String {
    if pinned {
        format!(" ({})", texts::pinned_mark(lang))
    } else {
        String::new()
    }
}

/// A row's `line`, then its description on the next line when it has one.
pub(crate) fn line_then(line: String, description: &str) -> String {
    if description.is_empty() {
        line
    } else {
        format!("{line}\n{description}")
    }
}

/// A read reply: `head`, then (when there are any) `word:` and the first
/// page of `lines` out of `total`, cut to [`MAX_READ_CHARS`].
pub(crate) fn head_and_page(
    lang: Language,
    head: String,
    word: &str,
    lines: Vec<String>,
    total: u64,
) -> String {
    let mut out = head;
    if !lines.is_empty() {
        out.push_str(&format!("\n{word}:\n"));
        out.push_str(&page(lang, lines, 0, Total::Known(total)));
    }
    clip(lang, &out, MAX_READ_CHARS)
}

/// A list's reply: at most [`MAX_LIST_LINES`] of `lines` (the rows from
/// `offset` on), then "…and N more" when `total` says there are more.
pub(crate) fn page(lang: Language, lines: Vec<String>, offset: u32, total: Total) -> String {
    if lines.is_empty() && offset == 0 {
        return texts::nothing(lang).to_owned();
    }
    let shown = lines.len().min(MAX_LIST_LINES);
    let mut out: Vec<String> = lines
        .into_iter()
        .take(MAX_LIST_LINES)
        .map(|l| one_line(lang, &l))
        .collect();
    let next = u64::from(offset) + shown as u64;
    match total {
        Total::Known(n) if n > shown as u64 => out.push(texts::more(lang, n - shown as u64, next)),
        Total::AtLeast(n) if n > shown as u64 => {
            out.push(texts::more_at_least(lang, n - shown as u64, next))
        }
        _ if out.is_empty() => out.push(texts::nothing(lang).to_owned()),
        _ => {}
    }
    out.join("\n")
}

/// The main LLM's name when the core writes the row, else nothing.
pub(crate) fn author(store: &Store, core: bool) -> Result<Option<String>, StorageError> {
    if !core {
        return Ok(None);
    }
    Ok(store.llm_main()?.map(|m| m.row.name))
}

/// Rows of `T` newest first from `offset`, filtered by `q`, as one page.
pub(crate) async fn list<T: Shown>(
    d: &StoreTools,
    lang: Language,
    q: ListQuery,
    offset: u32,
) -> Reply {
    let filtered = q.tag.is_some() || q.text.is_some() || q.pinned.is_some();
    let (rows, total) =
        d.db.read(move |s| -> Result<_, StorageError> {
            if filtered {
                let q = ListQuery {
                    limit: Some(MAX_COUNTED_ROWS),
                    offset,
                    ..q
                };
                let rows = s.list::<T>(&q)?;
                let n = rows.len() as u64;
                let total = if n >= u64::from(MAX_COUNTED_ROWS) {
                    Total::AtLeast(n)
                } else {
                    Total::Known(n)
                };
                Ok((rows, total))
            } else {
                let q = ListQuery {
                    limit: Some(MAX_LIST_LINES as u32),
                    offset,
                    ..q
                };
                let rows = s.list::<T>(&q)?;
                let all = s.count::<T>()?;
                Ok((rows, Total::Known(all.saturating_sub(u64::from(offset)))))
            }
        })
        .await??;
    let lines = rows
        .iter()
        .take(MAX_LIST_LINES)
        .map(|r| format!("#{} {}", r.id, r.row.line(lang)))
        .collect();
    Ok(page(lang, lines, offset, total))
}

/// `_list|[tag]|[offset]`: [`list`] with the call's tag and offset.
pub(crate) async fn list_args<T: Shown>(d: &StoreTools, ctx: &CallContext, args: &Args) -> Reply {
    let lang = ctx.language;
    let q = ListQuery {
        tag: parse::opt(args, "tag"),
        ..Default::default()
    };
    list::<T>(d, lang, q, parse::offset(lang, args)?).await
}

/// `_read|id`: the whole row, cut to [`MAX_READ_CHARS`].
pub(crate) async fn read<T: Shown>(d: &StoreTools, ctx: &CallContext, id: i64) -> Reply {
    let lang = ctx.language;
    let row = d.db.read(move |s| s.get::<T>(id)).await??;
    Ok(clip(
        lang,
        &format!("#{} {}", row.id, row.row.details(lang)),
        MAX_READ_CHARS,
    ))
}

/// `_read|id`: [`read`] with the call's id.
pub(crate) async fn read_args<T: Shown>(d: &StoreTools, ctx: &CallContext, args: &Args) -> Reply {
    read::<T>(d, ctx, parse::id(ctx.language, args, "id")?).await
}

/// `_add`: stores `row` (the core's rows name their LLM) at the call's time.
pub(crate) async fn add<T: Shown>(d: &StoreTools, ctx: &CallContext, mut row: T) -> Reply {
    let (now, core) = (parse::now(ctx), parse::is_core(ctx));
    let id =
        d.db.write(move |s| {
            row.set_author(author(s, core)?);
            s.add(&row, now)
        })
        .await??;
    Ok(texts::added(
        ctx.language,
        texts::noun(ctx.language, T::TABLE),
        id,
    ))
}

/// `_update|id|field|value`: reads the row, changes one field, writes it
/// back — all on the writer thread, so a refused value changes nothing.
pub(crate) async fn update<T: Shown>(d: &StoreTools, ctx: &CallContext, args: &Args) -> Reply {
    let lang = ctx.language;
    let id = parse::id(lang, args, "id")?;
    let field = args.text("field").to_owned();
    let value = args.text("value").to_owned();
    let now = parse::now(ctx);
    d.db.write(move |s| -> Result<(), Fail> {
        let mut row = s.get::<T>(id)?.row;
        row.set_field(lang, &field, &value)?;
        s.update(id, &row, now)?;
        Ok(())
    })
    .await??;
    Ok(texts::updated(lang, texts::noun(lang, T::TABLE), id))
}

/// `_delete|id`.
pub(crate) async fn delete<T: Shown>(d: &StoreTools, ctx: &CallContext, args: &Args) -> Reply {
    let lang = ctx.language;
    let id = parse::id(lang, args, "id")?;
    d.db.write(move |s| s.delete::<T>(id)).await??;
    Ok(texts::deleted(lang, texts::noun(lang, T::TABLE), id))
}

/// `_pin|id` / `_unpin|id`.
pub(crate) async fn pin<T: Shown + Pinnable>(
    d: &StoreTools,
    ctx: &CallContext,
    args: &Args,
    on: bool,
) -> Reply {
    let lang = ctx.language;
    let id = parse::id(lang, args, "id")?;
    let now = parse::now(ctx);
    d.db.write(move |s| s.set_pinned::<T>(id, on, now))
        .await??;
    Ok(texts::pinned(lang, texts::noun(lang, T::TABLE), id, on))
}

/// The verbs every full record set over `T` has — `list`, `read`,
/// `update`, `delete` — run the generic way; `None` for any other verb.
pub(crate) async fn common_verb<T: Shown>(
    d: &StoreTools,
    verb: &str,
    ctx: &CallContext,
    args: &Args,
) -> Option<Reply> {
    Some(match verb {
        "list" => list_args::<T>(d, ctx, args).await,
        "read" => read_args::<T>(d, ctx, args).await,
        "update" => update::<T>(d, ctx, args).await,
        "delete" => delete::<T>(d, ctx, args).await,
        _ => return None,
    })
}

/// [`common_verb`] and `pin` / `unpin`, for a set whose rows can be pinned.
pub(crate) async fn pinnable_verb<T: Shown + Pinnable>(
    d: &StoreTools,
    verb: &str,
    ctx: &CallContext,
    args: &Args,
) -> Option<Reply> {
    match verb {
        "pin" => Some(pin::<T>(d, ctx, args, true).await),
        "unpin" => Some(pin::<T>(d, ctx, args, false).await),
        other => common_verb::<T>(d, other, ctx, args).await,
    }
}

/// A row that a set which only lists, adds and deletes builds from its
/// `add` tool's arguments.
pub(crate) trait FromArgs: Shown {
    /// The row `add` stores, or why the arguments make none.
    fn from_args(lang: Language, args: &Args) -> Result<Self, Fail>;
}

/// The set `name` over `T` that only lists, adds and deletes:
/// `list|[offset]`, `add|<add_args>`, `delete|id`.
pub(crate) fn list_add_delete_set<T: FromArgs>(
    name: &'static str,
    deps: &StoreTools,
    add_args: Vec<ArgSpec>,
) -> StoreSet {
    list_add_delete_set_with::<T>(name, deps, add_args, ToolEffect::Write)
}

/// [`list_add_delete_set`] whose `add` has `add_effect` (`Network` when
/// what it adds may be published to friends).
pub(crate) fn list_add_delete_set_with<T: FromArgs>(
    name: &'static str,
    deps: &StoreTools,
    add_args: Vec<ArgSpec>,
    add_effect: ToolEffect,
) -> StoreSet {
    let tools = vec![
        ("list", vec![parse::offset_arg()], ToolEffect::Read),
        ("add", add_args, add_effect),
        ("delete", vec![parse::id_arg()], ToolEffect::Write),
    ];
    StoreSet::new(name, deps, tools, list_add_delete::<T>)
}

/// Runs a verb of such a set.
fn list_add_delete<'a, T: FromArgs>(
    d: &'a StoreTools,
    verb: &'a str,
    args: &'a Args,
    ctx: &'a CallContext,
) -> BoxFuture<'a, Option<Reply>> {
    Box::pin(async move {
        Some(match verb {
            "list" => list_args::<T>(d, ctx, args).await,
            "add" => match T::from_args(ctx.language, args) {
                Ok(row) => add(d, ctx, row).await,
                Err(e) => Err(e),
            },
            "delete" => delete::<T>(d, ctx, args).await,
            _ => return None,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("#{i} row")).collect()
    }

    #[test]
    fn a_page_shows_the_bound_and_says_how_many_more() {
        let out = page(Language::En, lines(15), 0, Total::Known(15));
        assert_eq!(out.lines().count(), MAX_LIST_LINES + 1, "{out}");
        assert!(out.ends_with("…and 5 more (offset 10)"), "{out}");
        let out = page(Language::Ru, lines(3), 20, Total::AtLeast(200));
        assert!(out.ends_with("…и ещё не меньше 197 (offset 23)"), "{out}");
        assert_eq!(
            page(Language::En, lines(2), 0, Total::Known(2))
                .lines()
                .count(),
            2
        );
        assert_eq!(
            page(Language::En, vec![], 0, Total::Known(0)),
            "nothing here yet"
        );
        assert_eq!(
            page(Language::En, vec![], 50, Total::Known(0)),
            "nothing here yet"
        );
    }

    #[test]
    fn long_text_is_cut_on_a_char_boundary_saying_how_much() {
        let text = "ж".repeat(MAX_LINE_CHARS + 7);
        let line = one_line(Language::En, &text);
        assert!(line.ends_with("…(7 more characters)"), "{line}");
        assert_eq!(one_line(Language::En, "a\n  b"), "a b");
    }
}

//! The `reputation` set over `agent_reputation`, this node's opinion of
//! other agents by peer id: list, read, set, increase, decrease, notes.
//! An agent without a row starts at 0.

use porfiry_skills::{ArgSpec, Args, BoxFuture, CallContext, Language, ToolEffect};
use porfiry_storage::{Reputation, StorageError};

use super::parse::{self, offset_arg};
use super::records::{self, MAX_READ_CHARS, Shown, clip, tag_suffix};
use super::set::{Reply, StoreSet};
use crate::StoreTools;
use crate::texts::store_replies as texts;

/// What `increase` and `decrease` change the score by when no amount is given.
const DEFAULT_STEP: f64 = 1.0;

impl Shown for Reputation {
    fn line(&self, _lang: Language) -> String {
        let notes = if self.notes.is_empty() {
            String::new()
        } else {
            format!(" — {}", self.notes)
        };
        format!(
            "{}: {}{notes}{}",
            self.peer_id,
            self.score,
            tag_suffix(&self.tags)
        )
    }
}

/// The `reputation` set.
pub(crate) fn set(deps: &StoreTools) -> StoreSet {
    use ToolEffect::{Read, Write};
    let peer = || ArgSpec::word("peer");
    StoreSet::new(
        "reputation",
        deps,
        vec![
            ("list", vec![offset_arg()], Read),
            ("read", vec![peer()], Read),
            ("set", vec![peer(), ArgSpec::word("score")], Write),
            (
                "increase",
                vec![peer(), ArgSpec::word("amount").optional()],
                Write,
            ),
            (
                "decrease",
                vec![peer(), ArgSpec::word("amount").optional()],
                Write,
            ),
            ("notes", vec![peer(), ArgSpec::text("text")], Write),
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
        let lang = ctx.language;
        Some(match verb {
            "list" => records::list_args::<Reputation>(d, ctx, args).await,
            "read" => read(d, lang, args.text("peer").to_owned()).await,
            "set" => change(d, ctx, args, Change::Set).await,
            "increase" => change(d, ctx, args, Change::By(1.0)).await,
            "decrease" => change(d, ctx, args, Change::By(-1.0)).await,
            "notes" => notes(d, ctx, args).await,
            _ => return None,
        })
    })
}

async fn read(d: &StoreTools, lang: Language, peer: String) -> Reply {
    let row =
        d.db.read(move |s| -> Result<_, StorageError> {
            s.reputation(&peer)?.ok_or(StorageError::NotFound {
                table: "agent_reputation",
                key: format!("peer {peer}"),
            })
        })
        .await??;
    Ok(clip(lang, &row.row.line(lang), MAX_READ_CHARS))
}

/// How a score changes.
enum Change {
    /// To the `score` argument.
    Set,
    /// By the `amount` argument (or one step) times this sign.
    By(f64),
}

async fn change(d: &StoreTools, ctx: &CallContext, args: &Args, how: Change) -> Reply {
    let lang = ctx.language;
    let peer = args.text("peer").to_owned();
    let now = parse::now(ctx);
    let shown = peer.clone();
    let score = match how {
        Change::Set => {
            let score = parse::real(lang, "score", args.text("score"))?;
            d.db.write(move |s| s.reputation_set(&peer, score, now))
                .await??
        }
        Change::By(sign) => {
            let amount = match args.get("amount") {
                Some(a) => parse::real(lang, "amount", a)?,
                None => DEFAULT_STEP,
            };
            d.db.write(move |s| s.reputation_adjust(&peer, sign * amount, now))
                .await??
        }
    };
    Ok(texts::score_now(lang, &shown, score))
}

async fn notes(d: &StoreTools, ctx: &CallContext, args: &Args) -> Reply {
    let peer = args.text("peer").to_owned();
    let text = args.text("text").trim().to_owned();
    let now = parse::now(ctx);
    let shown = peer.clone();
    d.db.write(move |s| s.reputation_set_notes(&peer, &text, now))
        .await??;
    Ok(texts::reputation_notes_saved(ctx.language, &shown))
}

//! The `identity` set over `identity`, who the agent is: read (every
//! identity row), update `field|value` on the first one — the node's own
//! (its name creates it). Never a key: the signing key lives in its file.

use porfiry_skills::{ArgSpec, Args, BoxFuture, CallContext, Language, ToolEffect};
use porfiry_storage::{Identity, ListQuery};

use super::parse;
use super::records::{self, Shown};
use super::set::{Fail, Reply, StoreSet};
use crate::StoreTools;
use crate::texts::store_replies as texts;

/// Fields `identity_update` may change.
const FIELDS: &[&str] = &["name", "role", "description"];

impl Shown for Identity {
    fn line(&self, _lang: Language) -> String {
        let mut out = self.name.clone();
        if !self.role.is_empty() {
            out.push_str(&format!(" — {}", self.role));
        }
        if !self.description.is_empty() {
            out.push_str(&format!(": {}", self.description));
        }
        if let Some(p) = &self.peer_id {
            out.push_str(&format!(" (peer {p})"));
        }
        out
    }

    fn set_field(&mut self, lang: Language, field: &str, value: &str) -> Result<(), Fail> {
        match field {
            "name" => self.name = parse::non_empty(lang, field, value)?,
            "role" => self.role = value.trim().to_owned(),
            "description" => self.description = value.trim().to_owned(),
            other => return Err(parse::unknown_field(lang, other, FIELDS)),
        }
        Ok(())
    }
}

/// The `identity` set.
pub(crate) fn set(deps: &StoreTools) -> StoreSet {
    StoreSet::new(
        "identity",
        deps,
        vec![
            ("read", vec![], ToolEffect::Read),
            (
                "update",
                vec![ArgSpec::choice("field", FIELDS), ArgSpec::text("value")],
                ToolEffect::Write,
            ),
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
            "read" => records::list::<Identity>(d, ctx.language, ListQuery::default(), 0).await,
            "update" => update(d, ctx, args).await,
            _ => return None,
        })
    })
}

/// Changes the first identity; with none yet, a name creates it.
async fn update(d: &StoreTools, ctx: &CallContext, args: &Args) -> Reply {
    let lang = ctx.language;
    let field = args.text("field").to_owned();
    let value = args.text("value").to_owned();
    let now = parse::now(ctx);
    let (id, created) =
        d.db.write(move |s| -> Result<(i64, bool), Fail> {
            let first = ListQuery {
                limit: Some(1),
                oldest_first: true,
                ..Default::default()
            };
            match s.list::<Identity>(&first)?.pop() {
                Some(row) => {
                    let mut identity = row.row;
                    identity.set_field(lang, &field, &value)?;
                    s.update(row.id, &identity, now)?;
                    Ok((row.id, false))
                }
                None if field == "name" => {
                    let mut identity = Identity::default();
                    identity.set_field(lang, &field, &value)?;
                    Ok((s.add(&identity, now)?, true))
                }
                None => Err(Fail::Bad(texts::identity_missing(lang).to_owned())),
            }
        })
        .await??;
    let noun = texts::noun(lang, "identity");
    Ok(if created {
        texts::added(lang, noun, id)
    } else {
        texts::updated(lang, noun, id)
    })
}

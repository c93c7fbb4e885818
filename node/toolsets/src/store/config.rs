//! The `config` set over `config` (key → JSON value): read one setting or
//! the list of all, update one. The model may not touch the settings that
//! bound it ([`PROTECTED_KEYS`]), nor the person's own switches
//! ([`PERSON_ONLY_KEYS`]), nor store anything named like a secret.

use porfiry_skills::cognition::THINKING_PAUSED_KEY;
use porfiry_skills::{ArgSpec, Args, BoxFuture, CallContext, ToolEffect};
use porfiry_storage::{SECRET_CONFIG_KEYS, StorageError};

use super::parse;
use super::records::{MAX_READ_CHARS, Total, clip, page};
use super::set::{Fail, Reply, StoreSet};
use crate::StoreTools;
use crate::texts::store_replies as texts;

/// Setting names (and their dotted sub-keys) `config_update` refuses: the
/// cycle has its own checked tools (`cycle_*`), while which programs may run
/// (`process.allow`) and the validation thresholds are the user's choice — a
/// model that could change them could lift its own limits; `core.*` is the
/// core's own state (the tick journal, the stagnation detectors, the feeds),
/// which a write from the model would corrupt.
pub const PROTECTED_KEYS: &[&str] = &["core", "cycle", "process", "thresholds", "validation"];

/// Setting names (and their dotted sub-keys) only a person sets, never
/// `config_update`: whether thinking is paused is the user's switch over the
/// core (the family page's "Thinking", `POST /api/mind`), and a model that
/// could flip it could stop being watched over, or resume itself; who
/// receives what the node shares (`sharing.*`) is the person's privacy,
/// which a model must not widen.
pub const PERSON_ONLY_KEYS: &[&str] = &[THINKING_PAUSED_KEY, "sharing"];

/// What a secret-looking setting shows instead of its value.
const HIDDEN: &str = "***";

/// Whether `key` is, or is under, one of [`PROTECTED_KEYS`].
fn protected(key: &str) -> bool {
    under_any(key, PROTECTED_KEYS)
}

/// Whether `key` is, or is under, one of [`PERSON_ONLY_KEYS`].
fn person_only(key: &str) -> bool {
    under_any(key, PERSON_ONLY_KEYS)
}

/// Whether `key` is one of `names` or a dotted sub-key of one.
fn under_any(key: &str, names: &[&str]) -> bool {
    names.iter().any(|p| {
        key == *p
            || key
                .strip_prefix(p)
                .is_some_and(|rest| rest.starts_with('.'))
    })
}

/// Whether the last part of a dotted key names a secret (`mail.password`).
fn secret(key: &str) -> bool {
    let last = key.rsplit('.').next().unwrap_or(key).to_ascii_lowercase();
    SECRET_CONFIG_KEYS.contains(&last.as_str())
}

/// The `config` set.
pub(crate) fn set(deps: &StoreTools) -> StoreSet {
    StoreSet::new(
        "config",
        deps,
        vec![
            (
                "read",
                vec![ArgSpec::word("key").optional()],
                ToolEffect::Read,
            ),
            (
                "update",
                vec![ArgSpec::word("key"), ArgSpec::text("value")],
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
            "read" => read(d, ctx, args).await,
            "update" => update(d, ctx, args).await,
            _ => return None,
        })
    })
}

async fn read(d: &StoreTools, ctx: &CallContext, args: &Args) -> Reply {
    let lang = ctx.language;
    let shown = |key: &str, value: &serde_json::Value| {
        if secret(key) {
            format!("{key} = {HIDDEN}")
        } else {
            format!("{key} = {value}")
        }
    };
    match parse::opt(args, "key") {
        Some(key) => {
            let k = key.clone();
            let value =
                d.db.read(move |s| -> Result<_, StorageError> {
                    s.config_value(&k)?.ok_or(StorageError::NotFound {
                        table: "config",
                        key: format!("key {k}"),
                    })
                })
                .await??;
            Ok(clip(lang, &shown(&key, &value), MAX_READ_CHARS))
        }
        None => {
            let all = d.db.read(|s| s.config_all()).await??;
            let total = all.len() as u64;
            let lines = all.iter().map(|(k, v)| shown(k, v)).collect();
            Ok(page(lang, lines, 0, Total::Known(total)))
        }
    }
}

async fn update(d: &StoreTools, ctx: &CallContext, args: &Args) -> Reply {
    let lang = ctx.language;
    let key = args.text("key").to_owned();
    if protected(&key) {
        return Err(Fail::Bad(texts::config_protected(lang, &key)));
    }
    if person_only(&key) {
        return Err(Fail::Bad(texts::config_person_only(lang, &key)));
    }
    if secret(&key) {
        return Err(Fail::Bad(texts::config_secret(lang, &key)));
    }
    let raw = args.text("value").trim();
    // JSON when it parses (`5`, `true`, `["a"]`), else the text as a string.
    let value = serde_json::from_str::<serde_json::Value>(raw)
        .unwrap_or_else(|_| serde_json::Value::String(raw.to_owned()));
    let now = parse::now(ctx);
    let k = key.clone();
    d.db.write(move |s| s.config_set(&k, &value, now)).await??;
    Ok(texts::config_saved(lang, &key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protected_keys_cover_their_sub_keys_only() {
        assert!(protected("cycle"));
        assert!(protected("process.allow"));
        assert!(protected("core.tick_journal"));
        assert!(!protected("corelation"));
        assert!(!protected("processor"));
        assert!(!protected("model"));
        assert!(person_only("thinking_paused"));
        assert!(person_only("sharing.knowhow_audience"));
        assert!(!person_only("thinking_paused_note"));
        assert!(!protected("thinking_paused"));
        assert!(secret("mail.Password"));
        assert!(secret("token"));
        assert!(!secret("tokens.budget"));
    }
}

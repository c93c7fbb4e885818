//! Reading the record tools' arguments: the common argument specs (`id`,
//! `offset`, `field|value`) and the values the registry's binding leaves as
//! text (tag lists, steps, real numbers, statuses). Every refusal is a
//! [`Fail::Bad`] in the call's language.

use std::str::FromStr;

use porfiry_skills::{ArgSpec, Args, CallContext, Caller, Language};
use porfiry_storage::{Progress, check_tags};

use super::set::Fail;
use crate::texts::store_replies as texts;

/// `id(number)`: the row id.
pub(crate) fn id_arg() -> ArgSpec {
    ArgSpec::int("id")
}

/// `[offset(number)]`: rows to skip in a list (its "…and N more" line says which).
pub(crate) fn offset_arg() -> ArgSpec {
    ArgSpec::int("offset").optional()
}

/// `[tag]`: only rows carrying this tag.
pub(crate) fn tag_arg() -> ArgSpec {
    ArgSpec::word("tag").optional()
}

/// `id|field(…)|value`: the shape of every `_update` tool.
pub(crate) fn update_args(fields: &[&str]) -> Vec<ArgSpec> {
    vec![
        id_arg(),
        ArgSpec::choice("field", fields),
        ArgSpec::text("value"),
    ]
}

/// The call's time in Unix ms (never the wall clock).
pub(crate) fn now(ctx: &CallContext) -> u64 {
    ctx.now.unix_ms()
}

/// Whether the cognitive core is calling (its rows are the LLM's).
pub(crate) fn is_core(ctx: &CallContext) -> bool {
    matches!(ctx.caller, Caller::Core { .. })
}

/// A required number argument (the binding has checked it parses).
pub(crate) fn id(lang: Language, args: &Args, name: &str) -> Result<i64, Fail> {
    args.int(name)
        .ok_or_else(|| Fail::Bad(texts::empty_value(lang, name)))
}

/// The `offset` argument: 0 when absent, refused when negative.
pub(crate) fn offset(lang: Language, args: &Args) -> Result<u32, Fail> {
    match args.get("offset") {
        None => Ok(0),
        Some(raw) => raw
            .parse::<u32>()
            .map_err(|_| Fail::Bad(texts::bad_number(lang, "offset", raw))),
    }
}

/// An optional argument's text, `None` when absent.
pub(crate) fn opt(args: &Args, name: &str) -> Option<String> {
    args.get(name).map(str::to_owned)
}

/// A text that must not be blank.
pub(crate) fn non_empty(lang: Language, field: &str, raw: &str) -> Result<String, Fail> {
    let v = raw.trim();
    if v.is_empty() {
        return Err(Fail::Bad(texts::empty_value(lang, field)));
    }
    Ok(v.to_owned())
}

/// A tag list: a JSON array of strings (`["a","b"]`, as named arguments
/// give it) or words separated by commas; a leading `#` is dropped, blanks
/// and repeats are skipped, and the storage rules (count, length) apply.
pub(crate) fn tags(raw: &str) -> Result<Vec<String>, Fail> {
    let raw = raw.trim();
    let pieces: Vec<String> = match serde_json::from_str::<Vec<String>>(raw) {
        Ok(list) => list,
        Err(_) => raw.split(',').map(str::to_owned).collect(),
    };
    let mut out: Vec<String> = Vec::new();
    for piece in pieces {
        let tag = piece.trim().trim_start_matches('#').trim().to_owned();
        if !tag.is_empty() && !out.contains(&tag) {
            out.push(tag);
        }
    }
    check_tags(&out)?;
    Ok(out)
}

/// Steps of a strategy or method: a JSON array, or text split at `;` or new lines.
pub(crate) fn steps(raw: &str) -> Vec<String> {
    let raw = raw.trim();
    let pieces: Vec<String> = match serde_json::from_str::<Vec<String>>(raw) {
        Ok(list) => list,
        Err(_) => raw.split([';', '\n']).map(str::to_owned).collect(),
    };
    pieces
        .into_iter()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

/// A finite real number (`0.5`, `-2`, `1,5`).
pub(crate) fn real(lang: Language, field: &str, raw: &str) -> Result<f64, Fail> {
    let v = raw.trim().replace(',', ".");
    match v.parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        _ => Err(Fail::Bad(texts::bad_number(lang, field, raw))),
    }
}

/// A whole number.
pub(crate) fn whole(lang: Language, field: &str, raw: &str) -> Result<i64, Fail> {
    raw.trim()
        .parse::<i64>()
        .map_err(|_| Fail::Bad(texts::bad_number(lang, field, raw)))
}

/// `field` is not one `set_field` knows: a refusal naming the `fields` it
/// does know.
pub(crate) fn unknown_field(lang: Language, field: &str, fields: &[&str]) -> Fail {
    Fail::Bad(texts::bad_choice(lang, "field", field, &fields.join(", ")))
}

/// A goal or task status (`open`, `in_progress`, `done`, `cancelled`).
pub(crate) fn progress(lang: Language, raw: &str) -> Result<Progress, Fail> {
    let v = raw.trim().to_ascii_lowercase().replace([' ', '-'], "_");
    Progress::from_str(&v).map_err(|_| {
        let all: Vec<&str> = Progress::ALL.iter().map(|p| p.as_str()).collect();
        Fail::Bad(texts::bad_choice(lang, "status", raw, &all.join(", ")))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_come_as_json_or_commas_and_are_cleaned() {
        assert_eq!(tags(r#"["a", "b"]"#).unwrap(), ["a", "b"]);
        assert_eq!(tags(" #idea, plan ,, idea ").unwrap(), ["idea", "plan"]);
        assert!(tags("").unwrap().is_empty());
        let long = "x".repeat(200);
        assert!(matches!(tags(&long), Err(Fail::Store(_))));
    }

    #[test]
    fn numbers_and_statuses_say_what_was_wrong() {
        assert_eq!(real(Language::En, "w", "1,5").unwrap(), 1.5);
        let Err(Fail::Bad(why)) = real(Language::En, "weight", "NaN") else {
            panic!("NaN accepted")
        };
        assert!(why.contains("weight"), "{why}");
        assert_eq!(
            progress(Language::En, "In progress").unwrap(),
            Progress::InProgress
        );
        let Err(Fail::Bad(why)) = progress(Language::Ru, "готово") else {
            panic!("unknown status accepted")
        };
        assert!(why.contains("in_progress"), "{why}");
    }

    #[test]
    fn steps_split_at_semicolons_or_come_as_json() {
        assert_eq!(steps("look; compare;\nwrite"), ["look", "compare", "write"]);
        assert_eq!(steps(r#"["a; b"]"#), ["a; b"]);
    }
}

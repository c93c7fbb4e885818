//! Reading the arguments of the `cycle_*` commands as a small model writes
//! them: lists as `a, b` or a JSON array, emotions as the seed's
//! `тревожность:≥2` (or `anxiety:>=2`, `joy>=3`, `joy:3`), note filters as
//! `tags=a,b priority>=2 age=3600 sources=user` or a JSON object, process ids
//! as `4, #7` (or `any`). Pure functions; each refusal says what was wrong.

use porfiry_skills::cognition::settings::parse_priority;
use porfiry_skills::cognition::{EmotionAtLeast, NoteFilter};
use porfiry_storage::MAX_EMOTION_STRENGTH;

/// Tags one filter may name: more would match nearly everything anyway.
pub const MAX_FILTER_TAGS: usize = 16;

/// Emotion conditions of concentration mode: the seed's examples use two;
/// eight leaves room without turning the filter into a list of everything.
pub const MAX_FILTER_EMOTIONS: usize = 8;

/// Sources one note filter may name (`user`, `llm`, `cli`, `system`, friends).
pub const MAX_FILTER_SOURCES: usize = 16;

/// Processes idle mode may wait on by id.
pub const MAX_IDLE_PROCESSES: usize = 16;

/// Keys a note filter accepts, as written in a refusal.
pub const FILTER_KEYS: &str = "tags, priority, age, sources";

/// What was wrong with an argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// Not `name:≥N` with N in 1 ..= 5.
    BadEmotion(String),
    /// A list longer than its bound.
    TooMany {
        /// What the list holds (`tags`, `emotions`, …).
        what: &'static str,
        /// The bound.
        max: usize,
    },
    /// A note-filter key that is not one of [`FILTER_KEYS`].
    BadFilterKey(String),
    /// A note-filter value that does not fit its key.
    BadFilterValue {
        /// The key.
        key: String,
        /// The value given.
        value: String,
    },
    /// Not a process id.
    BadId(String),
}

/// A list: a JSON array of strings (or numbers), or items separated by
/// commas; items trimmed, quotes dropped, empty ones skipped, duplicates
/// dropped.
pub fn parse_list(text: &str) -> Vec<String> {
    let text = text.trim();
    let items: Vec<String> = match serde_json::from_str::<Vec<serde_json::Value>>(text) {
        Ok(values) if text.starts_with('[') => values
            .into_iter()
            .map(|v| match v {
                serde_json::Value::String(s) => s,
                other => other.to_string(),
            })
            .collect(),
        _ => text
            .trim_start_matches('[')
            .trim_end_matches(']')
            .split(',')
            .map(str::to_owned)
            .collect(),
    };
    let mut out: Vec<String> = Vec::with_capacity(items.len());
    for item in items {
        let item = item
            .trim()
            .trim_matches(['"', '\'', '«', '»'])
            .trim()
            .to_owned();
        if !item.is_empty() && !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

/// A list no longer than `max`.
pub fn bounded_list(text: &str, what: &'static str, max: usize) -> Result<Vec<String>, Problem> {
    let list = parse_list(text);
    if list.len() > max {
        return Err(Problem::TooMany { what, max });
    }
    Ok(list)
}

/// One emotion condition: `name:≥N`, `name:>=N`, `name>=N`, `name≥N`,
/// `name:N` or `name=N`; the name is lower-cased.
pub fn parse_emotion(item: &str) -> Result<EmotionAtLeast, Problem> {
    let bad = || Problem::BadEmotion(item.to_owned());
    let at = item.find([':', '≥', '>', '=']).ok_or_else(bad)?;
    let name = item[..at].trim().to_lowercase();
    let level = item[at..]
        .trim_start_matches([':', '≥', '>', '=', ' '])
        .trim();
    let min: u8 = level.parse().map_err(|_| bad())?;
    if name.is_empty() || !(1..=MAX_EMOTION_STRENGTH).contains(&min) {
        return Err(bad());
    }
    Ok(EmotionAtLeast { emotion: name, min })
}

/// Emotion conditions from a list (see [`parse_list`]).
pub fn parse_emotions(text: &str) -> Result<Vec<EmotionAtLeast>, Problem> {
    bounded_list(text, "emotions", MAX_FILTER_EMOTIONS)?
        .iter()
        .map(|item| parse_emotion(item))
        .collect()
}

/// Whether a process list says "any process" (`any` / `all`).
pub fn names_any(text: &str) -> bool {
    let text = text.trim();
    text.eq_ignore_ascii_case("any") || text.eq_ignore_ascii_case("all")
}

/// Process ids; `any` / `all` / nothing name none (see [`names_any`]).
pub fn parse_ids(text: &str) -> Result<Vec<i64>, Problem> {
    let text = text.trim();
    if text.is_empty() || names_any(text) {
        return Ok(Vec::new());
    }
    let ids = bounded_list(text, "processes", MAX_IDLE_PROCESSES)?
        .iter()
        .map(|item| {
            item.trim_start_matches('#')
                .parse::<i64>()
                .ok()
                .filter(|id| *id > 0)
                .ok_or_else(|| Problem::BadId(item.clone()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ids)
}

/// A note filter: a JSON object with [`NoteFilter`]'s fields, or
/// `key=value` pairs separated by spaces or `;` (keys [`FILTER_KEYS`];
/// `priority>=2` and `age<=3600` read too). `any` / `all` / nothing is the
/// empty filter (every note).
pub fn parse_note_filter(text: &str) -> Result<NoteFilter, Problem> {
    let text = text.trim();
    if text.starts_with('{') {
        return filter_from_json(text);
    }
    let mut filter = NoteFilter::default();
    if text.is_empty() || text.eq_ignore_ascii_case("any") || text.eq_ignore_ascii_case("all") {
        return Ok(filter);
    }
    for pair in text
        .split([';', ' ', '\n'])
        .filter(|p| !p.trim().is_empty())
    {
        let at = pair
            .find(['=', ':', '>', '<', '≥', '≤'])
            .ok_or_else(|| Problem::BadFilterKey(pair.to_owned()))?;
        let key = pair[..at].trim().to_lowercase();
        let value = pair[at..]
            .trim_start_matches(['=', ':', '>', '<', '≥', '≤'])
            .trim();
        let bad_value = || Problem::BadFilterValue {
            key: key.clone(),
            value: value.to_owned(),
        };
        match key.as_str() {
            "tags" | "tag" => filter.tags = bounded_list(value, "tags", MAX_FILTER_TAGS)?,
            "priority" | "min_priority" => {
                filter.min_priority = Some(parse_priority(value).ok_or_else(bad_value)?);
            }
            "age" | "max_age" | "max_age_secs" => {
                filter.max_age_secs = Some(value.parse().map_err(|_| bad_value())?);
            }
            "sources" | "source" | "from" => {
                filter.sources = bounded_list(value, "sources", MAX_FILTER_SOURCES)?;
            }
            "mentions" | "mention" => {
                filter.mentions = bounded_list(value, "mentions", MAX_FILTER_SOURCES)?
                    .into_iter()
                    .map(|m| m.trim_start_matches('@').to_owned())
                    .collect();
            }
            _ => return Err(Problem::BadFilterKey(key)),
        }
    }
    Ok(filter)
}

fn filter_from_json(text: &str) -> Result<NoteFilter, Problem> {
    const KEYS: [&str; 5] = [
        "tags",
        "min_priority",
        "max_age_secs",
        "sources",
        "mentions",
    ];
    let object: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(text).map_err(|e| Problem::BadFilterValue {
            key: "json".to_owned(),
            value: e.to_string(),
        })?;
    if let Some(key) = object.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(Problem::BadFilterKey(key.clone()));
    }
    let mut object = object;
    if let Some(serde_json::Value::String(word)) = object.get("min_priority") {
        // "important" as well as 1 (seed: "≥ important").
        let n = parse_priority(word).ok_or_else(|| Problem::BadFilterValue {
            key: "min_priority".to_owned(),
            value: word.clone(),
        })?;
        object.insert("min_priority".to_owned(), n.into());
    }
    let filter: NoteFilter =
        serde_json::from_value(serde_json::Value::Object(object)).map_err(|e| {
            Problem::BadFilterValue {
                key: "json".to_owned(),
                value: e.to_string(),
            }
        })?;
    if filter.tags.len() > MAX_FILTER_TAGS {
        return Err(Problem::TooMany {
            what: "tags",
            max: MAX_FILTER_TAGS,
        });
    }
    if filter.sources.len() > MAX_FILTER_SOURCES {
        return Err(Problem::TooMany {
            what: "sources",
            max: MAX_FILTER_SOURCES,
        });
    }
    if filter.mentions.len() > MAX_FILTER_SOURCES {
        return Err(Problem::TooMany {
            what: "mentions",
            max: MAX_FILTER_SOURCES,
        });
    }
    let mut filter = filter;
    for m in &mut filter.mentions {
        *m = m.trim_start_matches('@').to_owned();
    }
    Ok(filter)
}

/// `tags=a,b priority>=2 age<=3600 sources=user mentions=anna`; empty for
/// no conditions.
pub fn describe_filter(f: &NoteFilter) -> String {
    let mut parts = Vec::new();
    if !f.tags.is_empty() {
        parts.push(format!("tags={}", f.tags.join(",")));
    }
    if let Some(p) = f.min_priority {
        parts.push(format!("priority>={p}"));
    }
    if let Some(a) = f.max_age_secs {
        parts.push(format!("age<={a}"));
    }
    if !f.sources.is_empty() {
        parts.push(format!("sources={}", f.sources.join(",")));
    }
    if !f.mentions.is_empty() {
        parts.push(format!("mentions={}", f.mentions.join(",")));
    }
    parts.join(" ")
}

/// `anxiety:≥2, joy:≥3`.
pub fn describe_emotions(emotions: &[EmotionAtLeast]) -> String {
    emotions
        .iter()
        .map(|e| format!("{}:≥{}", e.emotion, e.min))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_read_from_commas_or_json() {
        assert_eq!(parse_list(" a, b ,,a"), ["a", "b"]);
        assert_eq!(
            parse_list(r#"["архитектура","AGI"]"#),
            ["архитектура", "AGI"]
        );
        assert_eq!(parse_list("[x, y]"), ["x", "y"]);
        assert!(parse_list("  ").is_empty());
        assert_eq!(
            bounded_list("a,b,c", "tags", 2),
            Err(Problem::TooMany {
                what: "tags",
                max: 2
            })
        );
    }

    #[test]
    fn emotions_read_in_the_seeds_forms_and_refuse_the_rest() {
        for (text, name, min) in [
            ("тревожность:≥2", "тревожность", 2),
            ("Anxiety:>=2", "anxiety", 2),
            ("joy>=3", "joy", 3),
            ("joy≥5", "joy", 5),
            ("joy:1", "joy", 1),
        ] {
            assert_eq!(
                parse_emotion(text),
                Ok(EmotionAtLeast {
                    emotion: name.into(),
                    min
                }),
                "{text}"
            );
        }
        for bad in ["joy", "joy:≥6", "joy:0", ":≥2", "joy:lots"] {
            assert_eq!(parse_emotion(bad), Err(Problem::BadEmotion(bad.into())));
        }
        let all = parse_emotions(r#"["восторженность:≥4","тревожность:≥2"]"#).unwrap();
        assert_eq!(describe_emotions(&all), "восторженность:≥4, тревожность:≥2");
    }

    #[test]
    fn ids_read_and_any_means_none_named() {
        assert_eq!(parse_ids("4, #7"), Ok(vec![4, 7]));
        assert_eq!(parse_ids("any"), Ok(vec![]));
        assert!(names_any(" ANY ") && names_any("all"));
        assert!(!names_any("") && !names_any("4"));
        assert_eq!(parse_ids("4, x"), Err(Problem::BadId("x".into())));
        assert_eq!(parse_ids("-1"), Err(Problem::BadId("-1".into())));
        let many = (1..=17)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(",");
        assert!(matches!(parse_ids(&many), Err(Problem::TooMany { .. })));
    }

    #[test]
    fn note_filters_read_from_pairs_or_json() {
        let f = parse_note_filter("tags=mesh,ai; priority>=2 age=3600 sources=user mentions=@anna")
            .unwrap();
        assert_eq!(f.tags, ["mesh", "ai"]);
        assert_eq!(f.min_priority, Some(2));
        assert_eq!(f.max_age_secs, Some(3600));
        assert_eq!(f.sources, ["user"]);
        assert_eq!(f.mentions, ["anna"]);
        assert_eq!(
            describe_filter(&f),
            "tags=mesh,ai priority>=2 age<=3600 sources=user mentions=anna"
        );
        let j =
            parse_note_filter(r#"{"tags":["mesh"],"min_priority":1,"mentions":["@bob"]}"#).unwrap();
        assert_eq!((j.tags.len(), j.min_priority), (1, Some(1)));
        assert_eq!(j.mentions, ["bob"]);
        assert_eq!(parse_note_filter("any").unwrap(), NoteFilter::default());
        assert_eq!(
            parse_note_filter("colour=red"),
            Err(Problem::BadFilterKey("colour".into()))
        );
        // The seed's "≥ important", in either language or JSON.
        for words in [
            "priority≥important",
            "priority>=important",
            "priority=`важное`",
        ] {
            assert_eq!(
                parse_note_filter(words).unwrap().min_priority,
                Some(1),
                "{words}"
            );
        }
        assert_eq!(
            parse_note_filter(r#"{"min_priority":"urgent"}"#)
                .unwrap()
                .min_priority,
            Some(2)
        );
        assert_eq!(
            parse_note_filter("priority>=soonish"),
            Err(Problem::BadFilterValue {
                key: "priority".into(),
                value: "soonish".into()
            })
        );
        assert_eq!(
            parse_note_filter(r#"{"colour":"red"}"#),
            Err(Problem::BadFilterKey("colour".into()))
        );
        assert!(matches!(
            parse_note_filter(r#"{"min_priority":"x"}"#),
            Err(Problem::BadFilterValue { .. })
        ));
    }
}

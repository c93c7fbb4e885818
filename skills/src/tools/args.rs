//! Tool argument schemas and the one argument grammar of `TOOL_CALL: name|args`.
//!
//! The grammar (docs/skills.md explains why):
//! 1. Arguments are positional and separated by `|`; the LAST declared argument
//!    takes the rest of the line, `|` included (free text needs no escaping).
//! 2. Each value is trimmed; a `name=` or `name:` prefix equal to the declared
//!    argument's name is dropped; one pair of surrounding quotes is dropped.
//! 3. Word, number and choice values also lose trailing `.,;!?`.
//! 4. Required arguments must be non-empty; optional ones (only at the end) may
//!    be left out. A tool without arguments ignores whatever follows `|`.
//! 5. Arguments may instead be given by name as one JSON object
//!    (`TOOL_CALL: media_search|{"query":"matrix"}`, the core's command
//!    blocks via [`bind_json`]); rules 2–4 apply to each value.

/// What kind of value an argument takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgKind {
    /// Free text kept as written (a query, a note, text to show).
    Text,
    /// One token such as an id or a name; trailing punctuation is dropped.
    Word,
    /// A whole number (`i64`).
    Int,
    /// One of the listed words, matched without regard to case.
    Choice(Vec<String>),
}

/// One declared argument of a tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgSpec {
    /// Argument name as shown in the schema line (`query`, `id`).
    pub name: String,
    /// Its kind.
    pub kind: ArgKind,
    /// Whether it must be given.
    pub required: bool,
}

impl ArgSpec {
    /// A required free-text argument.
    pub fn text(name: &str) -> Self {
        Self::new(name, ArgKind::Text)
    }

    /// A required one-token argument (id, name).
    pub fn word(name: &str) -> Self {
        Self::new(name, ArgKind::Word)
    }

    /// A required whole-number argument.
    pub fn int(name: &str) -> Self {
        Self::new(name, ArgKind::Int)
    }

    /// A required argument that takes one of `choices`.
    pub fn choice(name: &str, choices: &[&str]) -> Self {
        let choices = choices.iter().map(|c| c.to_ascii_lowercase()).collect();
        Self::new(name, ArgKind::Choice(choices))
    }

    /// Makes the argument optional; optional arguments must come last.
    pub fn optional(mut self) -> Self {
        self.required = false;
        self
    }

    fn new(name: &str, kind: ArgKind) -> Self {
        Self {
            name: name.to_owned(),
            kind,
            required: true,
        }
    }

    /// How this argument looks in a schema line: `id`, `[note]`,
    /// `mode(on/off)`, `count(number)`.
    fn write_schema(&self, out: &mut String) {
        if !self.required {
            out.push('[');
        }
        out.push_str(&self.name);
        match &self.kind {
            ArgKind::Text | ArgKind::Word => {}
            ArgKind::Int => out.push_str("(number)"),
            ArgKind::Choice(choices) => {
                out.push('(');
                out.push_str(&choices.join("/"));
                out.push(')');
            }
        }
        if !self.required {
            out.push(']');
        }
    }
}

/// Why arguments did not fit a schema (the model is told the schema line; the
/// cause goes to the log).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgsError {
    /// A required argument is absent or empty.
    #[error("argument {0} is missing")]
    Missing(String),
    /// A number argument holds something else.
    #[error("argument {name} must be a whole number, got {value:?}")]
    NotANumber {
        /// Argument name.
        name: String,
        /// What was given.
        value: String,
    },
    /// A choice argument holds a word not in its list.
    #[error("argument {name} must be one of {choices:?}, got {value:?}")]
    NotAChoice {
        /// Argument name.
        name: String,
        /// What was given.
        value: String,
        /// The allowed words.
        choices: Vec<String>,
    },
}

/// Arguments bound to a schema: every required one is present and valid.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Args {
    values: Vec<(String, String)>,
}

impl Args {
    /// The value of `name`, if given.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.values
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The value of `name`, or `""` when it was not given.
    pub fn text(&self, name: &str) -> &str {
        self.get(name).unwrap_or("")
    }

    /// The value of a number argument, if given (binding checked it parses).
    pub fn int(&self, name: &str) -> Option<i64> {
        self.get(name).and_then(|v| v.parse().ok())
    }

    /// How many arguments were given.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether no argument was given.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

/// Writes `tool|a|b|[c]`: the exact form a call must take.
pub fn schema_line(tool: &str, args: &[ArgSpec]) -> String {
    let mut out = String::with_capacity(tool.len() + 16 * args.len());
    write_schema_line(tool, args, &mut out);
    out
}

/// Appends `tool|a|b|[c]` to `out`.
pub fn write_schema_line(tool: &str, args: &[ArgSpec], out: &mut String) {
    out.push_str(tool);
    for spec in args {
        out.push('|');
        spec.write_schema(out);
    }
}

/// Binds the raw text after the first `|` of a call to `schema`: by name
/// when it is a JSON object naming at least one declared argument (or the
/// tool has none), else positionally (rule 1). A text argument that merely
/// looks like JSON (`show_text|{"a":1}`) stays positional text.
pub fn bind(schema: &[ArgSpec], raw: &str) -> Result<Args, ArgsError> {
    if let Some(object) = json_object(raw)
        && (schema.is_empty() || schema.iter().any(|s| object.contains_key(&s.name)))
    {
        return bind_json(schema, &object);
    }
    let mut values = Vec::with_capacity(schema.len());
    let mut pieces = raw.splitn(schema.len().max(1), '|');
    for spec in schema {
        let piece = pieces.next().unwrap_or("");
        if let Some(value) = check_value(spec, clean(spec, piece))? {
            values.push((spec.name.clone(), value));
        }
    }
    Ok(Args { values })
}

/// Binds arguments given by name (`{"query":"matrix","limit":5}`), as the
/// cognitive core's command blocks and `TOOL_CALL: name|{…}` give them. Each
/// value goes through the same cleaning and checks as a positional one, so a
/// bad value fails the same way; numbers and booleans count as their text,
/// `null` as absent. Keys the schema does not declare are ignored (logged).
pub fn bind_json(
    schema: &[ArgSpec],
    object: &serde_json::Map<String, serde_json::Value>,
) -> Result<Args, ArgsError> {
    for key in object.keys() {
        if !schema.iter().any(|s| &s.name == key) {
            tracing::debug!(%key, "undeclared named argument ignored");
        }
    }
    let mut values = Vec::with_capacity(schema.len());
    for spec in schema {
        let text = match object.get(&spec.name) {
            None | Some(serde_json::Value::Null) => String::new(),
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
        };
        if let Some(value) = check_value(spec, clean(spec, &text))? {
            values.push((spec.name.clone(), value));
        }
    }
    Ok(Args { values })
}

/// `raw` as a JSON object, when it is one.
fn json_object(raw: &str) -> Option<serde_json::Map<String, serde_json::Value>> {
    let raw = raw.trim();
    if !raw.starts_with('{') {
        return None;
    }
    match serde_json::from_str(raw) {
        Ok(serde_json::Value::Object(map)) => Some(map),
        _ => None,
    }
}

/// Checks one cleaned value against its spec: `None` for an absent optional
/// argument, the value to keep otherwise.
fn check_value(spec: &ArgSpec, value: &str) -> Result<Option<String>, ArgsError> {
    if value.is_empty() {
        if spec.required {
            return Err(ArgsError::Missing(spec.name.clone()));
        }
        return Ok(None);
    }
    let value = match &spec.kind {
        ArgKind::Text | ArgKind::Word => value.to_owned(),
        ArgKind::Int => {
            if value.parse::<i64>().is_err() {
                return Err(ArgsError::NotANumber {
                    name: spec.name.clone(),
                    value: value.to_owned(),
                });
            }
            value.to_owned()
        }
        ArgKind::Choice(choices) => {
            let lower = value.to_lowercase();
            if !choices.contains(&lower) {
                return Err(ArgsError::NotAChoice {
                    name: spec.name.clone(),
                    value: value.to_owned(),
                    choices: choices.clone(),
                });
            }
            lower
        }
    };
    Ok(Some(value))
}

/// Applies rules 2 and 3 of the grammar to one value.
fn clean<'a>(spec: &ArgSpec, piece: &'a str) -> &'a str {
    let mut v = piece.trim();
    v = strip_name_prefix(v, &spec.name);
    v = strip_quotes(v);
    if spec.kind != ArgKind::Text {
        v = v.trim_end_matches(['.', ',', ';', '!', '?']);
        v = strip_quotes(v);
    }
    v
}

/// Drops `name=` / `name:` (any case, spaces allowed around the sign).
fn strip_name_prefix<'a>(v: &'a str, name: &str) -> &'a str {
    let Some(head) = v.get(..name.len()) else {
        return v;
    };
    if !head.eq_ignore_ascii_case(name) {
        return v;
    }
    let rest = v[name.len()..].trim_start();
    match rest.strip_prefix(['=', ':']) {
        Some(after) => after.trim(),
        None => v,
    }
}

/// Drops one pair of matching surrounding quotes or backticks.
pub(crate) fn strip_quotes(v: &str) -> &str {
    const PAIRS: [(char, char); 6] = [
        ('"', '"'),
        ('\'', '\''),
        ('`', '`'),
        ('«', '»'),
        ('“', '”'),
        ('„', '“'),
    ];
    for (open, close) in PAIRS {
        if let Some(inner) = v.strip_prefix(open).and_then(|s| s.strip_suffix(close)) {
            return inner.trim();
        }
    }
    v
}

/// Writes a one-line, human-readable list like `a, b, c` (or `none_word`).
pub(crate) fn join_or<'a>(items: impl Iterator<Item = &'a str>, none_word: &str) -> String {
    let mut out = String::new();
    for item in items {
        if !out.is_empty() {
            out.push_str(", ");
        }
        out.push_str(item);
    }
    if out.is_empty() {
        out.push_str(none_word);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn play() -> Vec<ArgSpec> {
        vec![
            ArgSpec::word("id"),
            ArgSpec::choice("mode", &["Start", "pause"]).optional(),
        ]
    }

    #[test]
    fn last_argument_takes_the_rest_including_bars() {
        let schema = [ArgSpec::word("to"), ArgSpec::text("text")];
        let args = bind(&schema, " bob | hi | there. ").unwrap();
        assert_eq!(args.get("to"), Some("bob"));
        assert_eq!(args.get("text"), Some("hi | there."));
    }

    #[test]
    fn name_prefix_quotes_and_trailing_punctuation_are_forgiven() {
        let args = bind(&play(), "id=\"tt42\".|MODE: Pause!").unwrap();
        assert_eq!(args.get("id"), Some("tt42"));
        assert_eq!(args.get("mode"), Some("pause"));
        let q = bind(&[ArgSpec::text("query")], "query = «Lara Croft».").unwrap();
        assert_eq!(
            q.get("query"),
            Some("«Lara Croft»."),
            "text keeps what follows the quotes"
        );
        let q = bind(&[ArgSpec::text("query")], "query=«Lara Croft»").unwrap();
        assert_eq!(q.get("query"), Some("Lara Croft"));
    }

    #[test]
    fn a_value_that_merely_starts_with_the_name_is_kept() {
        let q = bind(&[ArgSpec::text("query")], "queryless films").unwrap();
        assert_eq!(q.text("query"), "queryless films");
    }

    #[test]
    fn optional_arguments_may_be_left_out() {
        let args = bind(&play(), "tt42").unwrap();
        assert_eq!(args.get("mode"), None);
        assert_eq!(args.text("mode"), "");
        assert_eq!(args.len(), 1);
    }

    #[test]
    fn each_error_path_names_its_cause() {
        assert_eq!(
            bind(&play(), "  ").unwrap_err(),
            ArgsError::Missing("id".into())
        );
        assert!(matches!(
            bind(&play(), "tt42|rewind").unwrap_err(),
            ArgsError::NotAChoice { ref value, .. } if value == "rewind"
        ));
        assert!(matches!(
            bind(&[ArgSpec::int("n")], "five").unwrap_err(),
            ArgsError::NotANumber { ref value, .. } if value == "five"
        ));
        assert_eq!(bind(&[ArgSpec::int("n")], "5.").unwrap().int("n"), Some(5));
    }

    #[test]
    fn a_tool_without_arguments_ignores_extra_text() {
        let args = bind(&[], "whatever|else").unwrap();
        assert!(args.is_empty());
    }

    #[test]
    fn schema_line_shows_kinds_and_optional_parts() {
        let mut schema = play();
        schema.push(ArgSpec::int("n").optional());
        assert_eq!(
            schema_line("media_play", &schema),
            "media_play|id|[mode(start/pause)]|[n(number)]"
        );
        assert_eq!(schema_line("get_current_time", &[]), "get_current_time");
    }

    #[test]
    fn a_json_object_binds_by_name_with_the_same_checks() {
        let args = bind(&play(), r#" {"mode": "Pause.", "id": "tt42"} "#).unwrap();
        assert_eq!(args.get("id"), Some("tt42"));
        assert_eq!(args.get("mode"), Some("pause"));
        let n = bind(&[ArgSpec::int("n")], r#"{"n": 5}"#).unwrap();
        assert_eq!(n.int("n"), Some(5));
        assert_eq!(
            bind(&play(), r#"{"mode": "start"}"#).unwrap_err(),
            ArgsError::Missing("id".into())
        );
        assert!(matches!(
            bind(&play(), r#"{"id": "tt42", "mode": "rewind"}"#).unwrap_err(),
            ArgsError::NotAChoice { ref value, .. } if value == "rewind"
        ));
        let opt = bind(&play(), r#"{"id": "tt42", "mode": null, "extra": 1}"#).unwrap();
        assert_eq!(opt.len(), 1);
    }

    #[test]
    fn json_that_names_no_argument_stays_positional_text() {
        let q = bind(&[ArgSpec::text("text")], r#"{"a": 1}"#).unwrap();
        assert_eq!(q.text("text"), r#"{"a": 1}"#);
        let broken = bind(&[ArgSpec::text("text")], r#"{"text": "#).unwrap();
        assert_eq!(broken.text("text"), r#"{"text":"#, "trimmed like any text");
    }

    #[test]
    fn multibyte_text_never_panics_at_the_prefix_check() {
        let q = bind(&[ArgSpec::text("id")], "ф").unwrap();
        assert_eq!(q.text("id"), "ф");
        let q = bind(&[ArgSpec::text("query")], "ффф").unwrap();
        assert_eq!(q.text("query"), "ффф");
    }
}

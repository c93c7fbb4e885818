//! The value of one argument, as GBNF: written positionally in a `TOOL_CALL`
//! line, or as a JSON value in a command block. Each rule admits only
//! values that bind ([`crate::tools::args::bind`]) to a non-empty value of
//! their kind, so a constrained call never fails for its arguments' form:
//!
//! - **text** starts with neither a blank nor an opening quote (nor `{`,
//!   which would read as named JSON arguments) and ends with neither a
//!   blank, a closing quote, `=`, `:`, `*` nor `` ` ``: trimming, the
//!   `name=` prefix and one pair of quotes (rules 2 and 3 of the argument
//!   grammar) can then never leave it empty, and the line's own trimming
//!   never cuts it. A text that is not the call's last argument holds no `|`.
//!   No `<` anywhere: `</think>` inside an argument would make the parser
//!   drop the call before it.
//! - **word**: one token: no blank, quote, bracket, `|`, `=`, `:` or any
//!   of the trailing punctuation the binder trims.
//! - **int**: at most 18 digits, so it always fits `i64`.
//! - **choice**: one of the listed words, exactly as the schema lists them.

use crate::grammar::gbnf::{Member, Rules, chars, class, literal};
use crate::tools::args::{ArgKind, ArgSpec};

/// Digits an `int` may have: 18 always fit `i64` (its maximum has 19).
pub const MAX_INT_DIGITS: usize = 18;

/// Control characters: a call is one line, and JSON strings hold none.
const CONTROLS: [Member; 2] = [Member::Range('\0', '\u{1f}'), Member::Char('\u{7f}')];
/// Control characters and the space.
const BLANKS: [Member; 2] = [Member::Range('\0', ' '), Member::Char('\u{7f}')];
/// Quotes that open a pair the binder strips.
const OPENING_QUOTES: &str = "\"'`«“„";
/// Quotes that close such a pair.
const CLOSING_QUOTES: &str = "\"'`»”“";
/// What a word never holds: quotes, brackets, the binder's trailing
/// punctuation, the `name=` signs and the argument bar.
const NOT_IN_WORD: &str = "|\"'`«»“”„.,;!?:=*{}()[]<>\\";

/// How a call line's value is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// The call's last argument: a text takes the rest of the line, `|` included.
    Last,
    /// An argument another follows: no `|` inside.
    Inner,
}

/// The GBNF of one positional value of `spec`, adding the shared rules it uses.
pub fn positional(rules: &mut Rules, spec: &ArgSpec, place: Place) -> String {
    match &spec.kind {
        ArgKind::Text => text_rule(rules, place),
        ArgKind::Word => word_rule(rules),
        ArgKind::Int => int_rule(rules),
        ArgKind::Choice(choices) => alternatives(choices.iter().map(|c| literal(c))),
    }
}

/// The GBNF of one JSON value of `spec` (strings quoted, a number bare),
/// adding the shared rules it uses.
pub fn json(rules: &mut Rules, spec: &ArgSpec) -> String {
    match &spec.kind {
        ArgKind::Text => json_text_rule(rules),
        ArgKind::Word => {
            let word = word_rule(rules);
            rules.add("json-word", format!("\"\\\"\" {word} \"\\\"\""));
            "json-word".to_owned()
        }
        ArgKind::Int => int_rule(rules),
        ArgKind::Choice(choices) => {
            alternatives(choices.iter().map(|c| literal(&format!("\"{c}\""))))
        }
    }
}

/// A non-empty JSON string under the text rules (the command's
/// description uses it too).
pub fn json_text_rule(rules: &mut Rules) -> String {
    let first = members(&[&BLANKS], "\\<", OPENING_QUOTES);
    let middle = members(&[&CONTROLS], "\"\\<", "");
    let last = members(&[&BLANKS], "\\<=:", CLOSING_QUOTES);
    rules.add(
        "json-text",
        format!(
            "\"\\\"\" {} ({}* {})? \"\\\"\"",
            class(&first, true),
            class(&middle, true),
            class(&last, true)
        ),
    );
    "json-text".to_owned()
}

/// `text` (the last argument) or `text-inner` (no `|`).
fn text_rule(rules: &mut Rules, place: Place) -> String {
    let (name, bar) = match place {
        Place::Last => ("text", ""),
        Place::Inner => ("text-inner", "|"),
    };
    let first = members(&[&BLANKS], "{<|", OPENING_QUOTES);
    let middle = members(&[&CONTROLS], &format!("<{bar}"), "");
    let last = members(&[&BLANKS], "<|=:*", CLOSING_QUOTES);
    rules.add(
        name,
        format!(
            "{} ({}* {})?",
            class(&first, true),
            class(&middle, true),
            class(&last, true)
        ),
    );
    name.to_owned()
}

fn word_rule(rules: &mut Rules) -> String {
    let not = members(&[&BLANKS], NOT_IN_WORD, "");
    rules.add("word", format!("{}+", class(&not, true)));
    "word".to_owned()
}

fn int_rule(rules: &mut Rules) -> String {
    rules.add("int", format!("\"-\"? [0-9]{{1,{MAX_INT_DIGITS}}}"));
    "int".to_owned()
}

/// `( a | b | … )`.
fn alternatives(items: impl Iterator<Item = String>) -> String {
    let items: Vec<String> = items.collect();
    format!("( {} )", items.join(" | "))
}

/// The members of `sets`, then of each character of `a` and `b`.
fn members(sets: &[&[Member]], a: &str, b: &str) -> Vec<Member> {
    let mut out: Vec<Member> = sets.iter().flat_map(|s| s.iter().copied()).collect();
    out.extend(chars(a));
    out.extend(chars(b));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(spec: ArgSpec, place: Place) -> (String, String) {
        let mut rules = Rules::new();
        let expr = positional(&mut rules, &spec, place);
        (expr, rules.render())
    }

    #[test]
    fn a_last_text_takes_bars_and_an_inner_one_does_not() {
        let (expr, rules) = one(ArgSpec::text("query"), Place::Last);
        assert_eq!(expr, "text");
        assert_eq!(
            rules,
            "text ::= [^\\x00- \\x7F{<|\"'`«“„] ([^\\x00-\\x1F\\x7F<]* \
             [^\\x00- \\x7F<|=:*\"'`»”“])?\n"
        );
        let (expr, rules) = one(ArgSpec::text("to"), Place::Inner);
        assert_eq!(expr, "text-inner");
        assert!(rules.contains("([^\\x00-\\x1F\\x7F<|]* "), "{rules}");
    }

    #[test]
    fn words_numbers_and_choices() {
        let (expr, rules) = one(ArgSpec::word("id"), Place::Inner);
        assert_eq!(expr, "word");
        assert_eq!(
            rules,
            "word ::= [^\\x00- \\x7F|\"'`«»“”„.,;!?:=*{}()\\[\\]<>\\\\]+\n"
        );
        let (expr, rules) = one(ArgSpec::int("n"), Place::Last);
        assert_eq!(
            (expr.as_str(), rules.as_str()),
            ("int", "int ::= \"-\"? [0-9]{1,18}\n")
        );
        let (expr, rules) = one(ArgSpec::choice("mode", &["Start", "pause"]), Place::Last);
        assert_eq!(expr, r#"( "start" | "pause" )"#);
        assert_eq!(rules, "");
    }

    #[test]
    fn json_values_are_quoted_strings_or_bare_numbers() {
        let mut rules = Rules::new();
        assert_eq!(json(&mut rules, &ArgSpec::text("text")), "json-text");
        assert_eq!(json(&mut rules, &ArgSpec::word("id")), "json-word");
        assert_eq!(json(&mut rules, &ArgSpec::int("n")), "int");
        assert_eq!(
            json(&mut rules, &ArgSpec::choice("mode", &["on", "off"])),
            r#"( "\"on\"" | "\"off\"" )"#
        );
        let text = rules.render();
        assert!(
            text.starts_with(
                "json-text ::= \"\\\"\" [^\\x00- \\x7F\\\\<\"'`«“„] \
                 ([^\\x00-\\x1F\\x7F\"\\\\<]* [^\\x00- \\x7F\\\\<=:\"'`»”“])? \"\\\"\"\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("json-word ::= \"\\\"\" word \"\\\"\"\n"),
            "{text}"
        );
    }
}

//! GBNF text, llama.cpp's grammar format: rules `name ::= body`, one a
//! line, the first named `root`; string literals in `"…"` and character
//! classes in `[…]`, both escaped here so any tool name or choice word is
//! safe to embed. Rule names are `[a-z0-9-]` (GBNF allows no `_`), so callers
//! name rules by role and index, never by a tool's name.

use std::fmt::Write as _;

/// An ordered list of rules, rendered one per line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rules {
    rules: Vec<(String, String)>,
}

impl Rules {
    /// No rules yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends `name ::= body`; a name already defined keeps its first body
    /// (shared value rules are added by whoever needs them first).
    pub fn add(&mut self, name: impl Into<String>, body: impl Into<String>) {
        let name = name.into();
        if self.has(&name) {
            return;
        }
        debug_assert!(
            name.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
            "GBNF rule name {name:?}"
        );
        self.rules.push((name, body.into()));
    }

    /// Appends `other`'s rules in their order, but those already defined.
    pub fn extend(&mut self, other: Rules) {
        for (name, body) in other.rules {
            self.add(name, body);
        }
    }

    /// Whether `name` is defined.
    pub fn has(&self, name: &str) -> bool {
        self.rules.iter().any(|(n, _)| n == name)
    }

    /// The grammar text, one rule a line, in the order they were added.
    pub fn render(&self) -> String {
        let len = self.rules.iter().map(|(n, b)| n.len() + b.len() + 6).sum();
        let mut out = String::with_capacity(len);
        for (name, body) in &self.rules {
            let _ = writeln!(out, "{name} ::= {body}");
        }
        out
    }
}

/// `text` as a GBNF string literal: `"…"` with `"`, `\` and control
/// characters escaped; other characters (Cyrillic included) as they are.
pub fn literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c => push_plain(&mut out, c),
        }
    }
    out.push('"');
    out
}

/// One member of a character class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Member {
    /// One character.
    Char(char),
    /// An inclusive range.
    Range(char, char),
}

/// A character class, `[…]` or `[^…]` when `negated`.
pub fn class(members: &[Member], negated: bool) -> String {
    let mut out = String::with_capacity(2 + 4 * members.len());
    out.push('[');
    if negated {
        out.push('^');
    }
    for member in members {
        match *member {
            Member::Char(c) => push_class_char(&mut out, c),
            Member::Range(a, b) => {
                push_class_char(&mut out, a);
                out.push('-');
                push_class_char(&mut out, b);
            }
        }
    }
    out.push(']');
    out
}

/// Members for each character of `chars`.
pub fn chars(chars: &str) -> impl Iterator<Item = Member> + '_ {
    chars.chars().map(Member::Char)
}

/// A class character: the class's own syntax (`\ ] [ - ^`) escaped too.
fn push_class_char(out: &mut String, c: char) {
    match c {
        '\\' | ']' | '[' | '-' => {
            out.push('\\');
            out.push(c);
        }
        // `^` is special only first, but an escape for it does not exist:
        // its code point is always safe.
        '^' => out.push_str("\\x5E"),
        c => push_plain(out, c),
    }
}

/// A character with no syntax of its own: control characters as escapes.
fn push_plain(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if u32::from(c) < 0x20 || c == '\u{7f}' => {
            let _ = write!(out, "\\x{:02X}", u32::from(c));
        }
        c => out.push(c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_escape_quotes_backslashes_and_control_characters() {
        assert_eq!(literal("TOOL_CALL: "), r#""TOOL_CALL: ""#);
        assert_eq!(literal("a\"b\\c\nd\u{1}"), r#""a\"b\\c\nd\x01""#);
        assert_eq!(literal("Команды:"), "\"Команды:\"");
    }

    #[test]
    fn classes_escape_their_own_syntax() {
        let members: Vec<Member> = chars("a]-[\\^\"").collect();
        assert_eq!(class(&members, false), r#"[a\]\-\[\\\x5E"]"#);
        assert_eq!(
            class(&[Member::Range('\0', ' '), Member::Char('|')], true),
            r"[^\x00- |]"
        );
    }

    #[test]
    fn rules_render_in_order_and_a_second_definition_is_ignored() {
        let mut rules = Rules::new();
        rules.add("root", "a");
        rules.add("a", r#""x""#);
        rules.add("a", r#""y""#);
        assert!(rules.has("a") && !rules.has("b"));
        assert_eq!(rules.render(), "root ::= a\na ::= \"x\"\n");
    }
}

//! One `TOOL_CALL: name|args` line as GBNF (seed 000 §12: the protocol is
//! this line): the marker, one of the given tools by its exact name, and its
//! arguments in schema order — required ones always, optional ones only
//! after the ones before them, a tool without arguments with no `|` at all.
//! The same tools as JSON objects for the core's commands block are here too.

use crate::grammar::ToolShape;
use crate::grammar::gbnf::{Rules, literal};
use crate::grammar::values::{self as value, Place};

/// What a call line starts with, exactly as
/// [`ToolCall::line`](crate::session::parser::ToolCall::line) writes it.
pub const CALL_PREFIX: &str = "TOOL_CALL: ";

/// Adds `{name} ::= "TOOL_CALL: " ( tool-0 | … )`, each tool's rule
/// (`{name}-0`, …), then the value rules they use; returns `name`. `tools`
/// must not be empty.
pub fn call_line(rules: &mut Rules, name: &str, tools: &[ToolShape]) -> String {
    let names: Vec<String> = (0..tools.len()).map(|i| format!("{name}-{i}")).collect();
    rules.add(
        name,
        format!("{} ( {} )", literal(CALL_PREFIX), names.join(" | ")),
    );
    let mut values = Rules::new();
    for (tool, rule) in tools.iter().zip(&names) {
        let body = positional_args(&mut values, tool);
        rules.add(rule.clone(), body);
    }
    rules.extend(values);
    name.to_owned()
}

/// `"name|" a "|" b ( "|" c )?` for one tool.
fn positional_args(rules: &mut Rules, tool: &ToolShape) -> String {
    let mut pieces = Vec::with_capacity(tool.args.len());
    for (i, spec) in tool.args.iter().enumerate() {
        let place = if i + 1 == tool.args.len() {
            Place::Last
        } else {
            Place::Inner
        };
        pieces.push((
            spec.required,
            format!("\"|\" {}", value::positional(rules, spec, place)),
        ));
    }
    format!("{}{}", literal(&tool.name), nest(pieces))
}

/// Adds `{name} ::= "\"tool\", \"args\": " {…}` alternatives for the
/// command objects of `tools` (`{name}-0`, …), then the value rules they
/// use; returns `name`.
pub fn json_tools(rules: &mut Rules, name: &str, tools: &[ToolShape]) -> String {
    let names: Vec<String> = (0..tools.len()).map(|i| format!("{name}-{i}")).collect();
    rules.add(name, format!("( {} )", names.join(" | ")));
    let mut values = Rules::new();
    for (tool, rule) in tools.iter().zip(&names) {
        let mut pieces = Vec::with_capacity(tool.args.len());
        for (i, spec) in tool.args.iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            let key = literal(&format!("{sep}\"{}\": ", spec.name));
            pieces.push((
                spec.required,
                format!("{key} {}", value::json(&mut values, spec)),
            ));
        }
        let head = literal(&format!("\"{}\", \"args\": {{", tool.name));
        rules.add(rule.clone(), format!("{head}{} \"}}\"", nest(pieces)));
    }
    rules.extend(values);
    name.to_owned()
}

/// Required pieces in a row, each optional one (and all after it) in
/// `( … )?`: ` a b ( c ( d )? )?`.
fn nest(pieces: Vec<(bool, String)>) -> String {
    let mut out = String::new();
    let mut open = 0;
    for (required, piece) in pieces {
        out.push(' ');
        if !required {
            out.push_str("( ");
            open += 1;
        }
        out.push_str(&piece);
    }
    for _ in 0..open {
        out.push_str(" )?");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::parser::ToolCall;
    use crate::tools::args::ArgSpec;

    fn tools() -> Vec<ToolShape> {
        vec![
            ToolShape::new("get_current_time", vec![]),
            ToolShape::new(
                "media_play",
                vec![
                    ArgSpec::word("id"),
                    ArgSpec::choice("mode", &["start", "pause"]).optional(),
                    ArgSpec::int("at").optional(),
                ],
            ),
            ToolShape::new(
                "messages_send",
                vec![ArgSpec::word("to"), ArgSpec::text("text")],
            ),
        ]
    }

    #[test]
    fn the_prefix_is_the_canonical_lines_own() {
        let line = ToolCall::new("get_current_time", "").line();
        assert_eq!(line, format!("{CALL_PREFIX}get_current_time"));
    }

    #[test]
    fn a_call_line_names_each_tool_and_nests_optional_arguments() {
        let mut rules = Rules::new();
        assert_eq!(call_line(&mut rules, "call", &tools()), "call");
        assert_eq!(
            rules.render(),
            "call ::= \"TOOL_CALL: \" ( call-0 | call-1 | call-2 )\n\
             call-0 ::= \"get_current_time\"\n\
             call-1 ::= \"media_play\" \"|\" word ( \"|\" ( \"start\" | \"pause\" ) ( \"|\" int )? )?\n\
             call-2 ::= \"messages_send\" \"|\" word \"|\" text\n\
             word ::= [^\\x00- \\x7F|\"'`«»“”„.,;!?:=*{}()\\[\\]<>\\\\]+\n\
             int ::= \"-\"? [0-9]{1,18}\n\
             text ::= [^\\x00- \\x7F{<|\"'`«“„] ([^\\x00-\\x1F\\x7F<]* [^\\x00- \\x7F<|=:*\"'`»”“])?\n"
        );
    }

    #[test]
    fn command_objects_name_their_arguments_in_schema_order() {
        let mut rules = Rules::new();
        assert_eq!(json_tools(&mut rules, "cmd", &tools()), "cmd");
        let text = rules.render();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "cmd ::= ( cmd-0 | cmd-1 | cmd-2 )");
        assert_eq!(
            lines[1],
            r#"cmd-0 ::= "\"get_current_time\", \"args\": {" "}""#
        );
        assert_eq!(
            lines[2],
            "cmd-1 ::= \"\\\"media_play\\\", \\\"args\\\": {\" \"\\\"id\\\": \" json-word \
             ( \", \\\"mode\\\": \" ( \"\\\"start\\\"\" | \"\\\"pause\\\"\" ) \
             ( \", \\\"at\\\": \" int )? )? \"}\""
        );
        assert!(text.contains(
            "cmd-2 ::= \"\\\"messages_send\\\", \\\"args\\\": {\" \"\\\"to\\\": \" json-word \
             \", \\\"text\\\": \" json-text \"}\"\n"
        ));
    }
}

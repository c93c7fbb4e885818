//! The grammar of a chat reply (seed 000): either an answer for the user —
//! text that never holds the `TOOL_CALL` marker, so the parser can never
//! read a garbled call into it — or one well-formed call line to a tool the
//! prompt shows, with arguments that fit its schema, after which the reply
//! ends. The call may follow a few lines of text, as the parser allows
//! (`Sure.\nTOOL_CALL: get_current_time`); a second call cannot follow (only
//! the first would run).

use crate::grammar::ToolShape;
use crate::grammar::call::call_line;
use crate::grammar::gbnf::Rules;
use crate::grammar::prose::Prose;
use crate::session::parser::MARKER;

/// The GBNF of a reply whose calls may name only `tools` (the prompt's core
/// tools with their shown choices, and the active sets' tools).
pub fn chat_reply(tools: &[ToolShape]) -> String {
    let mut rules = Rules::new();
    let hooks = if tools.is_empty() {
        Vec::new()
    } else {
        vec!["call \"\\n\"?".to_owned()]
    };
    Prose {
        start: "root",
        name: "answer",
        avoid: &[MARKER],
        hooks,
    }
    .add(&mut rules);
    if !tools.is_empty() {
        call_line(&mut rules, "call", tools);
    }
    rules.render()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::args::ArgSpec;

    #[test]
    fn the_grammar_of_two_tools_exactly() {
        let tools = [
            ToolShape::new("get_current_time", vec![]),
            ToolShape::new(
                "enable_toolset",
                vec![ArgSpec::choice("name", &["media", "notes"])],
            ),
        ];
        let expected = [
            r#"root ::= call "\n"? | [^tT\x00- ] answer-0 | [tT] answer-1"#,
            r#"answer-line ::= call "\n"? | answer-0"#,
            r#"answer-0 ::= ( "\n" answer-line | [^tT\n] answer-0 | [tT] answer-1 )?"#,
            r#"answer-1 ::= ( "\n" answer-line | [^oOtT\n] answer-0 | [tT] answer-1 | [oO] answer-2 )?"#,
            r#"answer-2 ::= ( "\n" answer-line | [^oOtT\n] answer-0 | [tT] answer-1 | [oO] answer-3 )?"#,
            r#"answer-3 ::= ( "\n" answer-line | [^lLtT\n] answer-0 | [tT] answer-1 | [lL] answer-4 )?"#,
            r#"answer-4 ::= ( "\n" answer-line | [^_tT\n] answer-0 | [tT] answer-1 | [_] answer-5 )?"#,
            r#"answer-5 ::= ( "\n" answer-line | [^cCtT\n] answer-0 | [tT] answer-1 | [cC] answer-6 )?"#,
            r#"answer-6 ::= ( "\n" answer-line | [^aAtT\n] answer-0 | [tT] answer-1 | [aA] answer-7 )?"#,
            r#"answer-7 ::= ( "\n" answer-line | [^lLtT\n] answer-0 | [tT] answer-1 | [lL] answer-8 )?"#,
            r#"answer-8 ::= ( "\n" answer-line | [^lLtT\n] answer-0 | [tT] answer-1 )?"#,
            r#"call ::= "TOOL_CALL: " ( call-0 | call-1 )"#,
            r#"call-0 ::= "get_current_time""#,
            r#"call-1 ::= "enable_toolset" "|" ( "media" | "notes" )"#,
        ];
        assert_eq!(chat_reply(&tools), expected.join("\n") + "\n");
    }

    #[test]
    fn without_tools_a_reply_is_only_text() {
        let grammar = chat_reply(&[]);
        assert!(grammar.starts_with("root ::= [^tT\\x00- ] answer-0 | [tT] answer-1\n"));
        assert!(!grammar.contains("call"), "{grammar}");
    }
}

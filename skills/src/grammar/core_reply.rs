//! The grammar of a cognitive-core reply (seed 003 §4): brief thinking,
//! `TOOL_CALL` lines of catalogue tools, and at most one commands block at
//! the end — the block's heading, one JSON object a line
//! (`{"cmd_id": "c1", "type": "diary_add", "args": {…}, "description": "…"}`,
//! the `type` a catalogue tool and `args` fitting its schema by name, ids
//! `c1`, `c2`, … so none repeats), and its closing line, after which the
//! reply ends. The thinking never holds what the command parser would read
//! as something else: the `TOOL_CALL` marker outside a call line, the words
//! that open a block, a code fence, or `</think>` (which would hide what
//! came before it).

use crate::cognition::commands::MAX_COMMANDS_PER_REPLY;
use crate::cognition::tick::{HELP_COMMAND, MESH_INTERACT_COMMAND};
use crate::grammar::ToolShape;
use crate::grammar::call::{call_line, json_tools};
use crate::grammar::gbnf::{Rules, literal};
use crate::grammar::prose::Prose;
use crate::grammar::values::json_text_rule;
use crate::session::parser::MARKER;
use crate::texts::{self, Language};
use crate::tools::args::ArgSpec;
use crate::tools::registry::ToolsetRegistry;

/// What the thinking never holds (any case): the call marker, the words a
/// commands block opens with in either language, a code fence, the end of
/// a think block.
pub const THINKING_AVOIDS: [&str; 5] = [MARKER, "commands", "команды", "```", "</think>"];

/// The commands a core reply may give: every tool of `registry`'s sets,
/// then the core's own `help` (optionally a set's name: `help|diary` lists
/// its tools) and `mesh_interact|question`.
pub fn core_catalogue(registry: &ToolsetRegistry) -> Vec<ToolShape> {
    let sets: Vec<&str> = registry.names().collect();
    let mut out: Vec<ToolShape> = registry
        .sets()
        .flat_map(|set| set.tools().iter().map(ToolShape::from))
        .collect();
    let help_args = if sets.is_empty() {
        Vec::new()
    } else {
        vec![ArgSpec::choice("topic", &sets).optional()]
    };
    out.push(ToolShape::new(HELP_COMMAND, help_args));
    out.push(ToolShape::new(
        MESH_INTERACT_COMMAND,
        vec![ArgSpec::text("question")],
    ));
    out
}

/// The GBNF of a core reply in `lang` whose commands may name only `tools`
/// (the catalogue: every set's tools and the core's own commands).
pub fn core_reply(lang: Language, tools: &[ToolShape]) -> String {
    let mut rules = Rules::new();
    let hooks = if tools.is_empty() {
        Vec::new()
    } else {
        vec![
            "call ( \"\\n\" thought-line )?".to_owned(),
            "block".to_owned(),
        ]
    };
    Prose {
        start: "root",
        name: "thought",
        avoid: &THINKING_AVOIDS,
        hooks,
    }
    .add(&mut rules);
    if tools.is_empty() {
        return rules.render();
    }
    call_line(&mut rules, "call", tools);
    let start = literal(&format!("{}\n", texts::commands_block_start(lang)));
    rules.add("block", format!("{start} command-1"));
    for n in 1..=MAX_COMMANDS_PER_REPLY {
        let head = literal(&format!("{{\"cmd_id\": \"c{n}\", "));
        let next = if n < MAX_COMMANDS_PER_REPLY {
            format!("( command-{} | block-end )", n + 1)
        } else {
            "block-end".to_owned()
        };
        rules.add(format!("command-{n}"), format!("{head} command {next}"));
    }
    let end = literal(texts::commands_block_end(lang));
    rules.add("block-end", format!("{end} \"\\n\"?"));
    rules.add(
        "command",
        "\"\\\"type\\\": \" type ( \", \\\"description\\\": \" json-text )? \"}\\n\"",
    );
    json_tools(&mut rules, "type", tools);
    json_text_rule(&mut rules);
    rules.render()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cognition::commands::extract_commands;
    use crate::tools::args::ArgSpec;

    fn tools() -> Vec<ToolShape> {
        vec![
            ToolShape::new(
                "help",
                vec![ArgSpec::choice("topic", &["diary"]).optional()],
            ),
            ToolShape::new(
                "diary_add",
                vec![ArgSpec::text("text"), ArgSpec::text("tags").optional()],
            ),
        ]
    }

    #[test]
    fn the_block_and_its_commands_exactly() {
        let grammar = core_reply(Language::En, &tools());
        let from_block: Vec<&str> = grammar
            .lines()
            .skip_while(|l| !l.starts_with("block ::="))
            .collect();
        assert_eq!(from_block[0], r##"block ::= "# Commands:\n" command-1"##);
        assert_eq!(
            from_block[1],
            r#"command-1 ::= "{\"cmd_id\": \"c1\", " command ( command-2 | block-end )"#
        );
        assert_eq!(
            from_block[16],
            r#"command-16 ::= "{\"cmd_id\": \"c16\", " command block-end"#
        );
        assert_eq!(
            &from_block[17..21],
            [
                r##"block-end ::= "# End of commands" "\n"?"##,
                r#"command ::= "\"type\": " type ( ", \"description\": " json-text )? "}\n""#,
                "type ::= ( type-0 | type-1 )",
                r#"type-0 ::= "\"help\", \"args\": {" ( "\"topic\": " ( "\"diary\"" ) )? "}""#,
            ]
        );
        assert!(grammar.starts_with("root ::= call ( \"\\n\" thought-line )? | block | [^"));
        assert!(grammar.contains("\ncall ::= \"TOOL_CALL: \" ( call-0 | call-1 )\n"));
        assert!(grammar.contains("\ncall-1 ::= \"diary_add\" \"|\" text-inner ( \"|\" text )?\n"));
    }

    #[test]
    fn the_block_lines_are_the_instructions_own_and_the_parser_reads_them() {
        for lang in [Language::En, Language::Ru] {
            let instructions = crate::cognition::texts::prompt::output_instructions(lang);
            let start = texts::commands_block_start(lang);
            let end = texts::commands_block_end(lang);
            assert!(
                instructions.contains(start) && instructions.contains(end),
                "{lang}"
            );
            let grammar = core_reply(lang, &tools());
            assert!(
                grammar.contains(&format!("block ::= \"{start}\\n\"")),
                "{lang}"
            );
            assert!(
                grammar.contains(&format!("block-end ::= \"{end}\"")),
                "{lang}"
            );
            // A reply of the grammar's shape: thinking, a call line, a block.
            let reply = format!(
                "Trust needs a record.\nTOOL_CALL: diary_add|trust grows|ethics\n{start}\n\
                 {{\"cmd_id\": \"c1\", \"type\": \"diary_add\", \"args\": {{\"text\": \"kept promises\"}}, \
                 \"description\": \"note it\"}}\n\
                 {{\"cmd_id\": \"c2\", \"type\": \"help\", \"args\": {{}}}}\n{end}\n"
            );
            let extracted = extract_commands(&reply);
            assert!(extracted.problems.is_empty(), "{:?}", extracted.problems);
            let names: Vec<&str> = extracted.commands.iter().map(|c| c.tool.as_str()).collect();
            assert_eq!(names, ["diary_add", "diary_add", "help"], "{lang}");
        }
    }

    #[test]
    fn the_catalogue_is_every_sets_tools_then_help_and_mesh_interact() {
        let empty = core_catalogue(&ToolsetRegistry::new());
        assert_eq!(
            empty,
            [
                ToolShape::new("help", vec![]),
                ToolShape::new("mesh_interact", vec![ArgSpec::text("question")]),
            ]
        );
    }

    #[test]
    fn without_tools_the_reply_is_only_thinking() {
        let grammar = core_reply(Language::En, &[]);
        assert!(!grammar.contains("block"), "{grammar}");
    }
}

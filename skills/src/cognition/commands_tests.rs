//! Tests of command extraction: each form the seed and small models write,
//! each problem message, the caps, and that no input panics.

use proptest::prelude::*;
use serde_json::json;

use super::*;

fn json_args(value: Value) -> CommandArgs {
    match value {
        Value::Object(map) => CommandArgs::Json(map),
        other => panic!("not an object: {other}"),
    }
}

fn tools(e: &Extracted) -> Vec<&str> {
    e.commands.iter().map(|c| c.tool.as_str()).collect()
}

#[test]
fn tool_call_lines_anywhere_are_commands_in_order() {
    let e = extract_commands(
        "I will record this.\nTOOL_CALL: diary_add|Mesh needs trust|mesh\nand then\n**TOOL_CALL: goals_list**",
    );
    assert_eq!(
        e.commands,
        vec![
            Command {
                cmd_id: None,
                tool: "diary_add".into(),
                args: CommandArgs::Line("Mesh needs trust|mesh".into()),
                description: None,
            },
            Command {
                cmd_id: None,
                tool: "goals_list".into(),
                args: CommandArgs::Line(String::new()),
                description: None,
            },
        ]
    );
    assert!(e.problems.is_empty());
}

#[test]
fn the_seed_example_block_reads_with_extra_keys_kept_into_args() {
    let reply = r#"Thinking about the mesh.
# Команды:
```json
{
  "cmd_id": "task-2025-07-26-01",
  "type": "llm_task",
  "target_llm": "gpt-4o",
  "args": {
    "task_description": "Проанализировать гипотезы из llm_memory"
  },
  "description": "Поручение второй LLM"
}
```
# Конец команд
"#;
    let e = extract_commands(reply);
    assert_eq!(e.problems, vec![]);
    assert_eq!(
        e.commands,
        vec![Command {
            cmd_id: Some("task-2025-07-26-01".into()),
            tool: "llm_task".into(),
            args: json_args(json!({
                "task_description": "Проанализировать гипотезы из llm_memory",
                "target_llm": "gpt-4o"
            })),
            description: Some("Поручение второй LLM".into()),
        }]
    );
}

#[test]
fn the_seeds_own_command_types_are_read_as_the_catalogues_tools() {
    let reply = r#"# Команды:
[{"type": "diary_entry", "args": {"text": "a day"}},
 {"type": "graph_add", "args": {"name": "mesh"}},
 {"type": "send_message", "args": ["anna", "hi"]},
 {"type": "shell", "args": ["ls"]},
 {"type": "file_read", "args": ["notes.txt"]}]
# Конец команд"#;
    let e = extract_commands(reply);
    let tools: Vec<&str> = e.commands.iter().map(|c| c.tool.as_str()).collect();
    assert_eq!(
        tools,
        [
            "diary_add",
            "concepts_add",
            "messages_send",
            "process_start",
            "file_read"
        ]
    );
}

#[test]
fn one_object_per_line_an_array_and_a_missing_end_line_are_tolerated() {
    let per_line = "# Commands:\n{\"type\": \"diary_add\", \"args\": {\"text\": \"a\"}}\n{\"type\": \"goals_list\"}\n# End of commands\nTOOL_CALL: tasks_list";
    assert_eq!(
        tools(&extract_commands(per_line)),
        ["diary_add", "goals_list", "tasks_list"]
    );
    let array = "## Commands\n[{\"type\": \"diary_read\", \"args\": {\"id\": 3}}, {\"type\": \"memory_list\"}]";
    let e = extract_commands(array);
    assert_eq!(tools(&e), ["diary_read", "memory_list"]);
    assert_eq!(e.commands[0].args, json_args(json!({"id": 3})));
    assert_eq!(e.commands[1].args, CommandArgs::Json(Map::new()));
    assert!(e.problems.is_empty());
}

#[test]
fn a_closing_fence_ends_a_block_without_its_closing_line() {
    let e = extract_commands(
        "# Commands:\n```json\n{\"type\": \"goals_list\"}\n```\nThat is all for this tick.\nTOOL_CALL: tasks_list",
    );
    assert_eq!(tools(&e), ["goals_list", "tasks_list"]);
    assert_eq!(
        e.problems,
        vec![],
        "the prose after the fence is not a command"
    );
    // Without a fence, prose before the end of the reply stays in the block.
    let e = extract_commands("# Commands:\n{\"type\": \"goals_list\"}\nThat is all.");
    assert_eq!(
        e.problems[0].what,
        "text in the commands block is neither a JSON command object nor a TOOL_CALL line"
    );
}

#[test]
fn the_json_can_start_on_the_heading_line() {
    let e = extract_commands("**Commands:** {\"type\": \"notes_list\"}");
    assert_eq!(tools(&e), ["notes_list"]);
}

#[test]
fn string_and_array_args_are_lines_and_type_is_normalised() {
    let e = extract_commands(
        "# Commands:\n{\"type\": \"Diary Add\", \"args\": \"text|tag\", \"cmd_id\": 7}\n{\"type\": \"cycle.pause\", \"args\": [30]}\n",
    );
    assert_eq!(tools(&e), ["diary_add", "cycle_pause"]);
    assert_eq!(e.commands[0].args, CommandArgs::Line("text|tag".into()));
    assert_eq!(e.commands[0].cmd_id.as_deref(), Some("7"));
    assert_eq!(e.commands[1].args, CommandArgs::Line("30".into()));
}

#[test]
fn a_call_wrapped_in_backticks_on_one_line_is_not_a_fence() {
    let e = extract_commands("```TOOL_CALL: diary_list```\nTOOL_CALL: goals_list");
    assert_eq!(tools(&e), ["diary_list", "goals_list"]);
}

#[test]
fn a_tool_call_line_inside_the_block_counts() {
    let e = extract_commands("# Commands:\nTOOL_CALL: diary_list\n{\"type\": \"goals_list\"}");
    assert_eq!(tools(&e), ["diary_list", "goals_list"]);
}

#[test]
fn a_fenced_json_block_of_commands_counts_without_the_heading() {
    let e = extract_commands(
        "Plan:\n```json\n{\"cmd_id\": \"c1\", \"type\": \"tasks_add\", \"args\": {\"text\": \"x\"}}\n```\nDone.",
    );
    assert_eq!(tools(&e), ["tasks_add"]);
    // JSON without a `type` in a fence is not ours: no command, no problem.
    let e = extract_commands("```json\n{\"temperature\": 0.7}\n```");
    assert_eq!(e, Extracted::default());
}

#[test]
fn malformed_json_is_a_problem_and_the_rest_still_counts() {
    let reply = "# Commands:\n{\"type\": \"diary_add\", \"args\": {\"text\": \"a\",}}\n{\"type\": \"goals_list\"}\n# End of commands";
    let e = extract_commands(reply);
    assert_eq!(tools(&e), ["goals_list"]);
    assert_eq!(e.problems.len(), 1);
    assert_eq!(
        e.problems[0].what,
        "malformed JSON in the commands block: trailing comma at line 1 column 44"
    );
    assert_eq!(
        e.problems[0].snippet,
        "{\"type\": \"diary_add\", \"args\": {\"text\": \"a\",}}"
    );
}

#[test]
fn each_problem_says_what_was_wrong() {
    let e = extract_commands(
        "# Commands:\n{\"args\": {}}\n{\"type\": \"дневник\"}\n[1]\nplease run these\n{\"type\": \"x\"",
    );
    let whats: Vec<&str> = e.problems.iter().map(|p| p.what.as_str()).collect();
    assert_eq!(
        whats,
        [
            "a command has no \"type\" (the tool name, e.g. diary_add)",
            "\"type\" \"дневник\" is not a tool name (letters, digits and _, e.g. diary_add)",
            "a command must be a JSON object, got a number",
            "text in the commands block is neither a JSON command object nor a TOOL_CALL line",
            "a JSON object in the commands block is not closed",
        ]
    );
    assert!(e.commands.is_empty());
    assert_eq!(e.problems[3].snippet, "please run these");
}

#[test]
fn a_duplicate_cmd_id_is_reported_and_not_kept_twice() {
    let e = extract_commands(
        "# Commands:\n\
         {\"cmd_id\": \"c1\", \"type\": \"diary_add\", \"args\": {\"text\": \"a\"}}\n\
         {\"cmd_id\": \"c1\", \"type\": \"diary_add\", \"args\": {\"text\": \"a\"}}\n\
         {\"cmd_id\": \"c2\", \"type\": \"goals_add\", \"args\": {\"title\": \"g\"}}\n\
         {\"type\": \"diary_list\"}\n\
         {\"type\": \"diary_list\"}\n\
         # End of commands",
    );
    assert_eq!(
        tools(&e),
        ["diary_add", "goals_add", "diary_list", "diary_list"],
        "commands without an id are not deduplicated"
    );
    assert_eq!(e.problems.len(), 1, "{:?}", e.problems);
    assert!(
        e.problems[0].what.contains("duplicate cmd_id \"c1\""),
        "{}",
        e.problems[0].what
    );
}

#[test]
fn commands_past_the_cap_are_dropped_and_said_so() {
    let mut reply = String::from("# Commands:\n");
    for i in 0..MAX_COMMANDS_PER_REPLY + 4 {
        reply.push_str(&format!(
            "{{\"type\": \"diary_read\", \"args\": {{\"id\": {i}}}}}\n"
        ));
    }
    let e = extract_commands(&reply);
    assert_eq!(e.commands.len(), MAX_COMMANDS_PER_REPLY);
    assert_eq!(e.commands[15].args, json_args(json!({"id": 15})));
    assert_eq!(
        e.problems
            .iter()
            .map(|p| p.what.as_str())
            .collect::<Vec<_>>(),
        ["the reply holds 20 commands; only the first 16 are kept, 4 dropped"]
    );
}

#[test]
fn problems_past_their_cap_stop_the_reading() {
    let reply = format!("# Commands:\n{}", "{\"type\": 1}\n".repeat(50));
    let e = extract_commands(&reply);
    assert_eq!(e.problems.len(), MAX_PROBLEMS_PER_REPLY + 1);
    assert_eq!(
        e.problems.last().unwrap().what,
        "more than 8 unreadable commands; the rest of the reply was not read"
    );
}

#[test]
fn snippets_are_collapsed_and_bounded() {
    let long = format!(
        "# Commands:\n{{\"type\": \"a\",   \n \"args\": \"{}\"",
        "x".repeat(500)
    );
    let e = extract_commands(&long);
    let s = &e.problems[0].snippet;
    assert_eq!(s.chars().count(), MAX_PROBLEM_SNIPPET_CHARS);
    assert!(s.starts_with("{\"type\": \"a\", \"args\": \"xxx"), "{s}");
    assert!(s.ends_with('…'));
}

#[test]
fn think_blocks_and_prose_mentioning_commands_are_ignored() {
    let e = extract_commands(
        "<think>TOOL_CALL: diary_delete|1</think>The commands are fine.\nTOOL_CALL: diary_list",
    );
    assert_eq!(tools(&e), ["diary_list"]);
    assert!(e.problems.is_empty());
}

#[test]
fn a_reply_without_commands_extracts_nothing() {
    assert_eq!(
        extract_commands("Just thinking about trust in the mesh."),
        Extracted::default()
    );
    assert_eq!(extract_commands(""), Extracted::default());
}

proptest! {
    #[test]
    fn arbitrary_text_never_panics_and_stays_bounded(reply in "\\PC{0,400}") {
        let e = extract_commands(&reply);
        prop_assert!(e.commands.len() <= MAX_COMMANDS_PER_REPLY);
        prop_assert!(e.problems.len() <= MAX_PROBLEMS_PER_REPLY + 2);
        for p in &e.problems {
            prop_assert!(p.snippet.chars().count() <= MAX_PROBLEM_SNIPPET_CHARS);
        }
    }

    #[test]
    fn block_like_text_never_panics(
        body in proptest::collection::vec(
            prop_oneof![
                Just("{".to_owned()), Just("}".to_owned()), Just("[".to_owned()),
                Just("]".to_owned()), Just("\"".to_owned()), Just("\\".to_owned()),
                Just(",".to_owned()), Just("\n".to_owned()), Just("```".to_owned()),
                Just("\"type\":".to_owned()), Just("\"args\":".to_owned()),
                Just("# End of commands\n".to_owned()), Just("TOOL_CALL: a|b\n".to_owned()),
                "\\PC{0,6}",
            ],
            0..60,
        )
    ) {
        let reply = format!("# Команды:\n{}", body.concat());
        let e = extract_commands(&reply);
        prop_assert!(e.commands.len() <= MAX_COMMANDS_PER_REPLY);
        prop_assert!(e.problems.len() <= MAX_PROBLEMS_PER_REPLY + 2);
    }
}

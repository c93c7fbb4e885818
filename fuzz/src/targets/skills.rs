//! Targets over `porfiry-skills`: what a language model writes (the
//! `TOOL_CALL:` line and its arguments, the HMP command block) and a
//! SKILL.md file. These decoders take text, so the bytes are read as UTF-8
//! with bad sequences replaced, as the HTTP client and the file reader hand
//! them on.

use porfiry_skills::cognition::commands::{
    MAX_COMMANDS_PER_REPLY, MAX_PROBLEM_SNIPPET_CHARS, MAX_PROBLEMS_PER_REPLY, extract_commands,
};
use porfiry_skills::skills::skill::parse_skill;
use porfiry_skills::tools::args::{ArgSpec, bind};
use porfiry_skills::{ParsedReply, SkillError, SkillOrigin, find_calls, parse_reply};

/// `parse_reply` and `find_calls`, then the arguments of every call found
/// bound (`bind`) to a few argument schemas of the node's tools.
pub fn tool_call(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let calls = find_calls(&text);
    match parse_reply(&text) {
        ParsedReply::Call { call, ignored } => {
            assert_eq!(
                calls.first(),
                Some(&call),
                "parse_reply runs the first call"
            );
            assert_eq!(ignored + 1, calls.len(), "parse_reply counts the others");
        }
        ParsedReply::Answer(_) => assert!(calls.is_empty(), "an answer holds no call"),
    }
    let schemas = [
        vec![ArgSpec::text("query"), ArgSpec::int("limit").optional()],
        vec![
            ArgSpec::word("id"),
            ArgSpec::choice("state", &["open", "done"]),
            ArgSpec::text("note").optional(),
        ],
        vec![],
    ];
    for call in &calls {
        assert!(
            !call.name.is_empty()
                && call.name.bytes().all(|b| b.is_ascii_lowercase()
                    || b.is_ascii_digit()
                    || b == b'_'
                    || b == b'-'),
            "a tool name outside [a-z0-9_-]+: {:?}",
            call.name
        );
        for schema in &schemas {
            let _ = bind(schema, &call.args);
        }
    }
}

/// `extract_commands`: the cognitive core's command block, and the bounds it
/// promises on what it keeps.
pub fn hmp_commands(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let out = extract_commands(&text);
    assert!(out.commands.len() <= MAX_COMMANDS_PER_REPLY);
    assert!(out.problems.len() <= MAX_PROBLEMS_PER_REPLY + 1);
    for problem in &out.problems {
        assert!(problem.snippet.chars().count() <= MAX_PROBLEM_SNIPPET_CHARS);
    }
}

/// `parse_skill`: a SKILL.md. The folder a skill must be named after is
/// taken from the name the file gives, so the checks after that one run too.
pub fn skill_md(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let parse = |folder: &str| parse_skill(&text, folder, "SKILL.md", SkillOrigin::Builtin);
    if let Err(SkillError::NameMismatch { name, .. }) = parse("fuzz") {
        let _ = parse(&name);
    }
}

//! The training data: deterministic by seed, never a scoring request, every
//! call one the agent's parser reads and its tool's schema binds, every
//! route of seed 000 present, and a data file read back or refused by line.

use std::collections::HashSet;
use std::path::Path;

use porfiry_skills::session::parser::parse_line;
use porfiry_skills::{Language, Role};
use porfiry_storage::db::Db;
use porfiry_storage::{DB_FILE_NAME, Store};

use super::phrasings::{INTENTS, is_scoring_request, normalize};
use super::*;
use crate::chat::tool_use::builtin_cases;

fn fresh_db(dir: &tempfile::TempDir) -> Db {
    Db::start(Store::create(dir.path().join(DB_FILE_NAME)).unwrap()).unwrap()
}

async fn data(seed: u64, turns: usize) -> Generated {
    let dir = tempfile::tempdir().unwrap();
    generate(seed, turns, &[Language::En, Language::Ru], fresh_db(&dir))
        .await
        .unwrap()
}

/// The person's requests of the data: the user messages that are not tool
/// results.
fn requests(examples: &[Example]) -> HashSet<String> {
    examples
        .iter()
        .flat_map(|e| &e.messages)
        .filter(|m| m.role == Role::User && !m.content.starts_with("TOOL_RESULT"))
        .map(|m| m.content.clone())
        .collect()
}

#[tokio::test]
async fn the_same_seed_writes_the_same_data_and_another_seed_other_data() {
    let one = data(7, 60).await;
    let again = data(7, 60).await;
    let other = data(8, 60).await;
    assert_eq!(to_jsonl(&one.examples), to_jsonl(&again.examples));
    assert_ne!(to_jsonl(&one.examples), to_jsonl(&other.examples));
}

#[tokio::test]
async fn no_scoring_request_is_ever_in_the_data() {
    let generated = data(1, 600).await;
    let scoring: HashSet<String> = builtin_cases(None)
        .iter()
        .map(|c| normalize(&c.request))
        .collect();
    let seen = requests(&generated.examples);
    assert!(seen.len() > 150, "only {} distinct requests", seen.len());
    for request in &seen {
        assert!(!scoring.contains(&normalize(request)), "{request}");
    }
    // The filter itself is what keeps them out: the phrasings can make one.
    assert!(is_scoring_request("Сколько будет 12 умножить на 7?"));
    assert!(is_scoring_request("what time is it NOW"));
}

#[tokio::test]
async fn every_turn_follows_its_script_and_every_call_binds() {
    let generated = data(3, 300).await;
    assert_eq!(generated.dropped, 0, "turns went off their script");
    let dir = tempfile::tempdir().unwrap();
    let config = crate::ChatConfig::new(crate::LlmTarget::new("http://127.0.0.1:9/v1", "m"));
    let engine = crate::chat::tool_use_run::api_agent(
        &config,
        std::sync::Arc::new(teacher::Teacher::new()),
        fresh_db(&dir),
    )
    .unwrap();
    let mut calls = 0;
    for example in &generated.examples {
        if let Some(call) = parse_line(&example.reply) {
            calls += 1;
            let known = crate::chat::tool_use::is_known_tool(engine.toolbox(), &call.name);
            assert!(known, "{}", example.reply);
            if let Some(set) = engine.toolbox().toolsets().set_of(&call.name) {
                let spec = set.tools().iter().find(|t| t.name == call.name).unwrap();
                porfiry_skills::bind(&spec.args, &call.args)
                    .unwrap_or_else(|e| panic!("{}: {e}", example.reply));
            }
        }
    }
    assert!(calls > 200, "{calls} calls");
}

#[tokio::test]
async fn the_data_holds_every_route_in_both_languages() {
    let generated = data(5, 400).await;
    let examples = &generated.examples;
    for language in [Language::En, Language::Ru] {
        let of = |kind| {
            examples
                .iter()
                .filter(|e| e.language == language && e.kind == kind)
                .count()
        };
        assert!(of(ExampleKind::Request) > 100, "{language}");
        assert!(of(ExampleKind::Episode) > 100, "{language}");
    }
    let first_replies: Vec<&str> = examples
        .iter()
        .filter(|e| e.kind == ExampleKind::Request)
        .map(|e| e.reply.as_str())
        .collect();
    // Plain answers, set activations, skill reads and direct calls.
    assert!(first_replies.iter().any(|r| parse_line(r).is_none()));
    for first in [
        "TOOL_CALL: enable_toolset|",
        "TOOL_CALL: read_skill|",
        "TOOL_CALL: media_",
    ] {
        assert!(
            first_replies.iter().any(|r| r.starts_with(first)),
            "{first}"
        );
    }
    // The loop's "NOT executed yet" answer is followed by the retry.
    assert!(examples.iter().any(|e| {
        e.messages
            .last()
            .is_some_and(|m| m.content.contains("NOT executed yet"))
            && parse_line(&e.reply).is_some()
    }));
    // A set activated in an earlier turn puts its tools in the prompt.
    assert!(
        examples
            .iter()
            .any(|e| e.system.contains("Active toolsets:") && e.kind == ExampleKind::Request)
    );
    // Every tool the intents name is taught.
    for intent in INTENTS {
        assert!(
            examples
                .iter()
                .any(|e| e.reply.contains(&format!(": {}", intent.tool))),
            "{}",
            intent.tool
        );
    }
}

#[test]
fn a_data_file_reads_back_and_a_bad_line_is_named() {
    let example = Example {
        kind: ExampleKind::Request,
        language: Language::En,
        system: "You are Porfiry.".into(),
        messages: vec![porfiry_skills::ChatMessage::new(Role::User, "Hi")],
        reply: "Hello!".into(),
    };
    let text = format!(
        "# edited by hand\n{}\n",
        to_jsonl(std::slice::from_ref(&example)).trim()
    );
    let path = Path::new("teach.jsonl");
    assert_eq!(parse_examples(&text, path).unwrap(), vec![example]);
    let bad = format!("{text}not json\n");
    let err = parse_examples(&bad, path).unwrap_err().to_string();
    assert!(err.starts_with("data file teach.jsonl line 3: "), "{err}");
    let empty_reply = text.replace("\"Hello!\"", "\"  \"");
    let err = parse_examples(&empty_reply, path).unwrap_err().to_string();
    assert!(err.contains("line 2: the reply is empty"), "{err}");
    let err = parse_examples("\n# nothing\n", path)
        .unwrap_err()
        .to_string();
    assert_eq!(err, "data file teach.jsonl: no examples in it");
}

async fn core_data(seed: u64, ticks: usize) -> CoreGenerated {
    let dir = tempfile::tempdir().unwrap();
    let out = core_examples(seed, ticks, &[Language::En, Language::Ru], dir.path())
        .await
        .unwrap();
    assert!(
        std::fs::read_dir(dir.path()).unwrap().next().is_none(),
        "the scratch nodes are removed: {:?}",
        std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect::<Vec<_>>()
    );
    out
}

#[tokio::test]
async fn core_ticks_teach_a_sentence_and_a_command_the_real_core_runs() {
    let out = core_data(5, 16).await;
    // Every tick ran its command (a reply the core did not run is dropped).
    assert_eq!((out.ticks, out.dropped, out.examples.len()), (16, 0, 16));
    let first_line = |l| {
        porfiry_skills::cognition::texts::prompt::core_system_prompt(l)
            .lines()
            .next()
            .unwrap()
    };
    for e in &out.examples {
        assert_eq!(e.kind, ExampleKind::Core);
        assert!(e.system.starts_with(first_line(e.language)), "{}", e.system);
        let (sentence, command) = e.reply.split_once('\n').unwrap();
        assert!(
            sentence.contains("\"") || sentence.contains('«'),
            "{sentence}"
        );
        assert!(
            command.starts_with("TOOL_CALL: tasks_add|")
                || command.starts_with("TOOL_CALL: diary_add|")
                || command.starts_with("# Commands:")
                || command.starts_with("# Команды:"),
            "{command}"
        );
        // The goals are in the prompt the reply answers.
        let goal = e.reply.split(['"', '«', '»']).nth(1).unwrap();
        assert!(
            e.messages.iter().any(|m| m.content.contains(goal)),
            "goal {goal:?} not in the prompt: {:?}",
            e.messages
        );
    }
    let languages: HashSet<Language> = out.examples.iter().map(|e| e.language).collect();
    assert_eq!(languages.len(), 2);
    assert!(out.examples.iter().any(|e| e.reply.contains("# Commands:")));
    assert!(out.examples.iter().any(|e| e.reply.contains("diary_add|")));
    // Deterministic by seed.
    assert_eq!(core_data(5, 16).await, out);
    assert_ne!(core_data(6, 16).await.examples, out.examples);
}

//! llama.cpp itself reads the reply grammars `porfiry_skills::grammar`
//! writes (issue 30 §4): each compiles against the real model's vocabulary,
//! and, fed token by token the way the engine checks a sampled token,
//! takes the replies the protocol wants and refuses the garbled ones. The
//! model is loaded vocabulary only (no weights), so these tests are quick;
//! they are named `real_model_…` all the same, since they need the file.

use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::sampling::LlamaSampler;
use porfiry_skills::ArgSpec;
use porfiry_skills::Language;
use porfiry_skills::grammar::{ToolShape, chat_reply, core_reply};

use crate::actor::{GRAMMAR_ROOT, allows, backend};
use crate::test_model::test_model_path;

fn vocabulary() -> LlamaModel {
    let path = test_model_path().unwrap_or_else(|e| panic!("{e}"));
    let params = LlamaModelParams::default().with_vocab_only(true);
    LlamaModel::load_from_file(backend().unwrap(), path, &params).unwrap()
}

/// Whether `grammar` takes the whole of `text` and may end after it.
fn takes(model: &LlamaModel, grammar: &str, text: &str) -> bool {
    let mut sampler = LlamaSampler::grammar(model, grammar, GRAMMAR_ROOT)
        .unwrap_or_else(|e| panic!("llama.cpp refused the grammar ({e}):\n{grammar}"));
    for token in model.vocab().tokenize(text.as_bytes(), false, false) {
        if !allows(&mut sampler, token) {
            return false;
        }
        sampler.accept(token);
    }
    allows(&mut sampler, model.vocab().eos())
}

/// What a chat prompt shows with the media set active.
fn chat_tools() -> Vec<ToolShape> {
    vec![
        ToolShape::new("get_current_time", vec![]),
        ToolShape::new("show_text", vec![ArgSpec::text("text")]),
        ToolShape::new("read_skill", vec![ArgSpec::choice("name", &["notes"])]),
        ToolShape::new(
            "enable_toolset",
            vec![ArgSpec::choice("name", &["media", "notes"])],
        ),
        ToolShape::new("disable_toolset", vec![ArgSpec::choice("name", &["media"])]),
        ToolShape::new("media_search", vec![ArgSpec::text("query")]),
        ToolShape::new(
            "media_play",
            vec![
                ArgSpec::word("id"),
                ArgSpec::choice("mode", &["start", "pause"]).optional(),
            ],
        ),
        ToolShape::new(
            "messages_send",
            vec![ArgSpec::word("to"), ArgSpec::text("text")],
        ),
        ToolShape::new("tasks_update", vec![ArgSpec::int("id")]),
    ]
}

#[test]
fn real_model_the_chat_grammar_takes_answers_and_calls_and_refuses_garbled_ones() {
    let model = vocabulary();
    let grammar = chat_reply(&chat_tools());
    for good in [
        "It is noon.",
        "Сейчас полдень, Москва.",
        "Two lines,\nof text: tools and calls are fine words.",
        "TOOL_CALL: get_current_time",
        "TOOL_CALL: get_current_time\n",
        "Sure.\nTOOL_CALL: media_search|lara croft",
        "TOOL_CALL: media_search|a | b, \"c\" (d)?",
        "TOOL_CALL: media_play|tt0133093",
        "TOOL_CALL: media_play|tt0133093|pause",
        "TOOL_CALL: messages_send|anna|I'm on my way.",
        "TOOL_CALL: enable_toolset|notes",
        "TOOL_CALL: show_text|Ужин в 7",
        "TOOL_CALL: tasks_update|-12",
    ] {
        assert!(takes(&model, &grammar, good), "refused {good:?}");
    }
    for bad in [
        "",
        " It is noon.",
        "Sure! TOOL_CALL: get_current_time",
        "tool_call get_current_time",
        "TOOL_CALL: fly_to_mars|now",
        "TOOL_CALL: get_current_time\nTOOL_CALL: get_current_time",
        "TOOL_CALL: get_current_time\nThe time is noon.",
        "TOOL_CALL: media_search",
        "TOOL_CALL: media_search|",
        "TOOL_CALL: media_search| ",
        "TOOL_CALL: media_search|\"lara\"",
        "TOOL_CALL: media_search|{\"query\": \"x\"}",
        "TOOL_CALL: media_search|x</think>",
        "TOOL_CALL: show_text|text=",
        "TOOL_CALL: media_play|tt1|rewind",
        "TOOL_CALL: media_play|tt1.",
        "TOOL_CALL: messages_send|anna|",
        "TOOL_CALL: messages_send|an na|hi",
        "TOOL_CALL: enable_toolset|web",
        "TOOL_CALL: tasks_update|two",
        "TOOL_CALL: tasks_update|1234567890123456789",
        "TOOL_CALL media_search|x",
        "TOOL_CALL:media_search|x",
    ] {
        assert!(!takes(&model, &grammar, bad), "took {bad:?}");
    }
}

#[test]
fn real_model_the_core_grammar_takes_thinking_calls_and_one_block_of_catalogue_commands() {
    let model = vocabulary();
    let tools = [
        ToolShape::new(
            "diary_add",
            vec![ArgSpec::text("text"), ArgSpec::text("tags").optional()],
        ),
        ToolShape::new(
            "help",
            vec![ArgSpec::choice("topic", &["diary"]).optional()],
        ),
    ];
    let grammar = core_reply(Language::En, &tools);
    let block = "# Commands:\n\
        {\"cmd_id\": \"c1\", \"type\": \"diary_add\", \"args\": {\"text\": \"kept promises\", \"tags\": \"ethics\"}, \"description\": \"record it\"}\n\
        {\"cmd_id\": \"c2\", \"type\": \"help\", \"args\": {}}\n\
        # End of commands";
    for good in [
        "Trust grows slowly.".to_owned(),
        format!("I should record this.\n{block}"),
        format!("{block}\n"),
        "Thinking.\nTOOL_CALL: diary_add|trust|ethics\nTOOL_CALL: help\nDone.".to_owned(),
    ] {
        assert!(takes(&model, &grammar, &good), "refused {good:?}");
    }
    for bad in [
        "I will write the commands now.".to_owned(),
        "```json\n{}\n```".to_owned(),
        "x</think>y".to_owned(),
        block.replace("diary_add", "diary_burn"),
        block.replace("\"c2\"", "\"c1\""),
        block.replace("\"args\": {}", "\"args\": {\"topic\": \"dreams\"}"),
        block.replace("\"kept promises\"", "\"\""),
        block.replace("# End of commands", "# End of commands\nMore thoughts."),
        format!("{block}\n{block}"),
    ] {
        assert!(!takes(&model, &grammar, &bad), "took {bad:?}");
    }
    let ru = core_reply(Language::Ru, &tools);
    let ru_block = block
        .replace("# Commands:", "# Команды:")
        .replace("# End of commands", "# Конец команд");
    assert!(takes(&model, &ru, &format!("Доверие растёт.\n{ru_block}")));
}

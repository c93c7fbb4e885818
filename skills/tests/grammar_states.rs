//! The reply grammar follows the prompt's state (issue 30 §4): the tools the
//! prompt shows, the sets its catalogue lists and the skills its index lists,
//! so enabling a set changes grammar and prompt together; each request of a
//! constrained session carries the grammar of its own prompt, and none
//! carries one when the loop is not constrained. Every request carries the
//! chat's stop text. The reply right after an enable calls one of the
//! enabled set's tools or answers (issue 43: a small model enabled again
//! instead of calling).

mod common;

use common::{clock, toolbox_with};
use porfiry_skills::grammar::{ToolShape, chat_reply};
use porfiry_skills::llm::stops::CHAT_REPLY_STOP;
use porfiry_skills::{ArgSpec, Clock, LoopConfig, Session, Step, ToolOutput};

fn names(tools: &[ToolShape]) -> Vec<&str> {
    tools.iter().map(|t| t.name.as_str()).collect()
}

fn choice(tools: &[ToolShape], tool: &str) -> Vec<ArgSpec> {
    tools
        .iter()
        .find(|t| t.name == tool)
        .map(|t| t.args.clone())
        .unwrap_or_default()
}

#[test]
fn the_shown_tools_are_the_prompts_with_its_lists_as_choices() {
    let tb = toolbox_with(LoopConfig::default());
    let idle = tb.prompt().shown_tools(&[]);
    assert_eq!(
        names(&idle),
        [
            "get_current_time",
            "show_text",
            "read_skill",
            "enable_toolset"
        ],
        "no set is active: nothing to disable, no set's tools"
    );
    assert_eq!(
        choice(&idle, "read_skill"),
        [ArgSpec::choice("name", &["media", "notes", "time-zones"])]
    );
    assert_eq!(
        choice(&idle, "enable_toolset"),
        [ArgSpec::choice("name", &["media", "notes"])]
    );
    let media = tb.prompt().shown_tools(&["media", "web"]);
    assert_eq!(
        names(&media),
        [
            "get_current_time",
            "show_text",
            "read_skill",
            "enable_toolset",
            "disable_toolset",
            "media_search",
            "media_info",
            "media_play",
        ]
    );
    assert_eq!(
        choice(&media, "read_skill"),
        [ArgSpec::choice("name", &["notes", "time-zones"])],
        "the active set's skill left the index"
    );
    assert_eq!(
        choice(&media, "disable_toolset"),
        [ArgSpec::choice("name", &["media"])]
    );
    assert_eq!(
        choice(&media, "enable_toolset"),
        [ArgSpec::choice("name", &["notes"])],
        "enabling the active set runs nothing, so the grammar leaves it out"
    );
    let both = tb.prompt().shown_tools(&["media", "notes"]);
    assert!(
        !names(&both).contains(&"enable_toolset"),
        "every set active: nothing left to enable, {:?}",
        names(&both)
    );
    assert_eq!(tb.prompt().grammar(&["media"]), chat_reply(&media));
}

#[test]
fn a_constrained_session_sends_its_prompts_grammar_and_after_an_enable_only_the_sets_tools() {
    let config = LoopConfig {
        constrained: true,
        ..LoopConfig::default()
    };
    let tb = toolbox_with(config);
    let mut s = Session::new(tb.clone());
    let now = clock().now();
    let Step::CallModel(first) = s.user_message("find Lara Croft", &now) else {
        panic!("a user message calls the model");
    };
    assert_eq!(
        first.grammar.as_deref(),
        Some(tb.prompt().grammar(&[]).as_str())
    );
    let first_grammar = first.grammar.unwrap_or_default();
    assert!(!first_grammar.contains("media_search"), "{first_grammar}");
    let Ok(Step::CallModel(second)) = s.model_reply("TOOL_CALL: enable_toolset|media", &now) else {
        panic!("enable calls the model again");
    };
    let second_grammar = second.grammar.clone().unwrap_or_default();
    assert!(
        second_grammar.contains("\"media_search\" \"|\" text"),
        "{second_grammar}"
    );
    assert_eq!(second.stop, CHAT_REPLY_STOP);
    // Right after the enable: only what was enabled, or an answer.
    let media: Vec<ToolShape> = tb
        .prompt()
        .shown_tools(&["media"])
        .into_iter()
        .filter(|t| t.name.starts_with("media_"))
        .collect();
    assert_eq!(second_grammar, chat_reply(&media));
    assert!(
        !second_grammar.contains("\"enable_toolset\""),
        "{second_grammar}"
    );
    assert!(
        !second_grammar.contains("\"read_skill\""),
        "{second_grammar}"
    );
    assert_eq!(
        tb.prompt().grammar_after_enable(&["media"], "notes"),
        tb.prompt().grammar(&["media"]),
        "a set that is not active gets the prompt's grammar"
    );
    // After a tool ran, the prompt's whole grammar again.
    let Ok(Step::RunTool(_)) = s.model_reply("TOOL_CALL: media_search|Lara Croft", &now) else {
        panic!("a set's tool runs");
    };
    let Ok(Step::CallModel(after_tool)) = s.tool_output(ToolOutput::ok("tt0146316"), &now) else {
        panic!("a tool's result calls the model again");
    };
    assert_eq!(
        after_tool.grammar.as_deref(),
        Some(tb.prompt().grammar(&["media"]).as_str())
    );
}

#[test]
fn an_unconstrained_session_sends_no_grammar_but_the_stop() {
    let tb = toolbox_with(LoopConfig::default());
    let mut s = Session::new(tb);
    let Step::CallModel(request) = s.user_message("hi", &clock().now()) else {
        panic!("a user message calls the model");
    };
    assert_eq!(request.grammar, None);
    assert_eq!(request.stop, ["TOOL_RESULT"]);
}

//! A fixed tool-use set for scoring a model on the tool loop (issue 30 §6):
//! ≥ 30 requests a person makes of the node's agent, each with the tools
//! that answer it, and the two rates a turn is scored by (pure).
//!
//! - **format-valid**: each model reply of the turn is either plain text
//!   (no `TOOL_CALL` marker at all) or a call the parser reads whose name is
//!   a tool the prompt can show (a core tool or a registered set's tool) and
//!   whose arguments fit that tool's schema;
//! - **right tool**: the turn called one of the request's expected tools.
//!
//! [`super::tool_use_run`] runs the set against a model; `cargo bench -p
//! porfiry-agent --bench tool_use` runs it against any OpenAI-compatible
//! server (Ollama, llama.cpp, …) or a GGUF file and prints the table
//! `docs/benchmarks.md` shows.

use porfiry_skills::Toolbox;
use porfiry_skills::session::parser::{MARKER, ToolCall, parse_line, strip_think};
use porfiry_skills::tools::args::bind;
use porfiry_skills::tools::core_tools::CoreTool;

/// One request of the set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolUseCase {
    /// What the person says.
    pub request: &'static str,
    /// Any of these tools answers it (a set's `enable_toolset|set` does not:
    /// the case asks for the tool that does the work).
    pub expected: &'static [&'static str],
}

const fn case(request: &'static str, expected: &'static [&'static str]) -> ToolUseCase {
    ToolUseCase { request, expected }
}

/// The set: time, show text, skills, toolset activation, media search,
/// details, play and control, notes, messages, diary, goals and tasks.
pub const TOOL_USE_CASES: &[ToolUseCase] = &[
    case("What time is it now?", &["get_current_time"]),
    case("What's today's date?", &["get_current_time"]),
    case("Which time zone are you in?", &["get_current_time"]),
    case("Show the text 'Dinner at 7' on my screen.", &["show_text"]),
    case("Put 'Back in 5 minutes' on the screen.", &["show_text"]),
    case(
        "How do I look up films with you? Read your skill for it.",
        &["read_skill"],
    ),
    case(
        "Read your notes skill and tell me the steps.",
        &["read_skill"],
    ),
    case("Turn on the films toolset.", &["enable_toolset"]),
    case("Enable the diary tools.", &["enable_toolset"]),
    case("Find films about Lara Croft.", &["media_search"]),
    case("Search for the Matrix.", &["media_search"]),
    case("Is there a film with dinosaurs?", &["media_search"]),
    case("Tell me about the film tt0133093.", &["media_info"]),
    case("Play the film tt0133093.", &["media_play"]),
    case("Start tt1365519 please.", &["media_play"]),
    case("Pause the film.", &["media_control"]),
    case("Stop the playback.", &["media_control"]),
    case("Write a note: buy milk.", &["notes_add"]),
    case(
        "Note for my friends: the party is on Saturday.",
        &["notes_add"],
    ),
    case("What new notes do I have?", &["notes_list"]),
    case("List my unread notes.", &["notes_list"]),
    case("Read note 3 in full.", &["notes_read"]),
    case("Send anna a message: I'm on my way.", &["messages_send"]),
    case(
        "Tell bob privately that the keys are under the mat.",
        &["messages_send"],
    ),
    case(
        "Write in the diary: slept badly, coffee helped.",
        &["diary_add"],
    ),
    case(
        "Search my diary for coffee.",
        &["diary_search", "diary_list"],
    ),
    case("Set a goal: run a 10 km race by June.", &["goals_add"]),
    case("What are my goals?", &["goals_list"]),
    case("Add a task: buy running shoes.", &["tasks_add"]),
    case("Show my tasks.", &["tasks_list"]),
    case("Mark task 2 as done.", &["tasks_update"]),
    case("Delete note 5.", &["notes_delete"]),
];

/// How one model reply reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplyForm {
    /// Plain text: no marker anywhere.
    Text,
    /// A call the parser reads, to a tool the prompt can show, with
    /// arguments that fit its schema.
    Call(String),
    /// A marker the parser cannot read, a call to no such tool, or one
    /// whose arguments do not fit.
    Garbled,
}

/// Reads one model reply against `toolbox` (what the prompt can show).
pub fn reply_form(toolbox: &Toolbox, reply: &str) -> ReplyForm {
    let text = strip_think(reply);
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.to_ascii_lowercase().contains(MARKER))
        .collect();
    let Some(first) = lines.first() else {
        return ReplyForm::Text;
    };
    match parse_line(first) {
        Some(call) if fits(toolbox, &call) => ReplyForm::Call(call.name),
        _ => ReplyForm::Garbled,
    }
}

/// Whether `call` names a core tool or a registered set's tool and its
/// arguments bind to that tool's schema.
fn fits(toolbox: &Toolbox, call: &ToolCall) -> bool {
    match CoreTool::from_name(&call.name) {
        Some(core) => bind(&core.spec(toolbox.language()).args, &call.args).is_ok(),
        None => toolbox.prepare(&call.name, &call.args).is_ok(),
    }
}

/// The score of one turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TurnScore {
    /// Model replies in the turn.
    pub replies: usize,
    /// Of them, format-valid.
    pub valid: usize,
    /// The turn called an expected tool.
    pub right_tool: bool,
}

/// Scores a turn from its model replies, in order.
pub fn score(toolbox: &Toolbox, case: &ToolUseCase, replies: &[String]) -> TurnScore {
    let forms: Vec<ReplyForm> = replies.iter().map(|r| reply_form(toolbox, r)).collect();
    TurnScore {
        replies: forms.len(),
        valid: forms.iter().filter(|f| **f != ReplyForm::Garbled).count(),
        right_tool: forms
            .iter()
            .any(|f| matches!(f, ReplyForm::Call(name) if case.expected.contains(&name.as_str()))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use porfiry_skills::{LoopConfig, SkillRegistry};
    use porfiry_toolsets::{ToolsetOptions, node_toolsets};

    fn toolbox() -> Toolbox {
        let sets = node_toolsets(&ToolsetOptions::default()).unwrap();
        Toolbox::new(sets, SkillRegistry::new(), LoopConfig::default())
    }

    #[test]
    fn the_set_is_large_enough_and_names_only_real_tools_of_the_api() {
        assert!(TOOL_USE_CASES.len() >= 30);
        let known = [
            "get_current_time",
            "show_text",
            "read_skill",
            "enable_toolset",
            "media_search",
            "media_info",
            "media_play",
            "media_control",
            "notes_add",
            "notes_list",
            "notes_read",
            "notes_delete",
            "messages_send",
            "diary_add",
            "diary_search",
            "diary_list",
            "goals_add",
            "goals_list",
            "tasks_add",
            "tasks_list",
            "tasks_update",
        ];
        for case in TOOL_USE_CASES {
            assert!(!case.expected.is_empty(), "{case:?}");
            for tool in case.expected {
                assert!(known.contains(tool), "{tool} in {case:?}");
            }
        }
    }

    #[test]
    fn replies_read_as_text_a_known_call_or_garbled() {
        let tb = toolbox();
        assert_eq!(reply_form(&tb, "It is noon."), ReplyForm::Text);
        assert_eq!(
            reply_form(&tb, "<think>hm</think>TOOL_CALL: media_search|matrix"),
            ReplyForm::Call("media_search".into())
        );
        assert_eq!(
            reply_form(&tb, "Sure! tool_call: get_current_time"),
            ReplyForm::Call("get_current_time".into())
        );
        assert_eq!(
            reply_form(&tb, "TOOL_CALL: fly_to_mars|now"),
            ReplyForm::Garbled
        );
        assert_eq!(reply_form(&tb, "TOOL_CALL:"), ReplyForm::Garbled);
        assert_eq!(
            reply_form(&tb, "TOOL_CALL: media_search"),
            ReplyForm::Garbled,
            "a required argument is missing"
        );
        assert_eq!(reply_form(&tb, "TOOL_CALL: read_skill"), ReplyForm::Garbled);
        assert_eq!(
            reply_form(&tb, "TOOL_CALL: enable_toolset|media"),
            ReplyForm::Call("enable_toolset".into())
        );
        assert_eq!(
            reply_form(&tb, "TOOL_CALL {\"name\": 1}"),
            ReplyForm::Garbled
        );
    }

    #[test]
    fn a_turn_scores_its_valid_replies_and_whether_it_reached_the_tool() {
        let tb = toolbox();
        let case = TOOL_USE_CASES[9]; // "Find films about Lara Croft."
        assert_eq!(case.expected, ["media_search"]);
        let replies = [
            "TOOL_CALL: enable_toolset|media".to_owned(),
            "TOOL_CALL: media_search|lara croft".to_owned(),
            "Found two.".to_owned(),
        ];
        assert_eq!(
            score(&tb, &case, &replies),
            TurnScore {
                replies: 3,
                valid: 3,
                right_tool: true
            }
        );
        let invented = ["Lara Croft: Tomb Raider (2001), TOOL_CALL: search films".to_owned()];
        assert_eq!(
            score(&tb, &case, &invented),
            TurnScore {
                replies: 1,
                valid: 0,
                right_tool: false
            }
        );
    }
}

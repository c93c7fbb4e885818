//! The `TOOL_CALL` parser against what small models actually write.

use porfiry_skills::session::parser::{parse_line, strip_think};
use porfiry_skills::{ParsedReply, ToolCall, find_calls, parse_reply};
use proptest::prelude::*;

fn call(text: &str) -> (String, String) {
    match parse_reply(text) {
        ParsedReply::Call { call, .. } => (call.name, call.args),
        ParsedReply::Answer(a) => panic!("no call found in {text:?}; answer {a:?}"),
    }
}

fn pair(name: &str, args: &str) -> (String, String) {
    (name.to_owned(), args.to_owned())
}

#[test]
fn the_plain_form() {
    assert_eq!(
        call("TOOL_CALL: media_search|lara croft"),
        pair("media_search", "lara croft")
    );
    assert_eq!(
        call("TOOL_CALL: get_current_time"),
        pair("get_current_time", "")
    );
}

#[test]
fn spaces_anywhere() {
    assert_eq!(
        call("  TOOL_CALL :   media_search  |  lara croft  "),
        pair("media_search", "lara croft")
    );
    assert_eq!(
        call("TOOL_CALL:media_search|lara"),
        pair("media_search", "lara")
    );
    assert_eq!(
        call("\tTOOL_CALL:\tget_current_time\t"),
        pair("get_current_time", "")
    );
}

#[test]
fn inside_a_code_fence_or_backticks_or_bold() {
    assert_eq!(
        call("```\nTOOL_CALL: media_info|tt1\n```"),
        pair("media_info", "tt1")
    );
    assert_eq!(
        call("```text\nTOOL_CALL: media_info|tt1\n```"),
        pair("media_info", "tt1")
    );
    assert_eq!(
        call("```TOOL_CALL: media_info|tt1```"),
        pair("media_info", "tt1")
    );
    assert_eq!(
        call("`TOOL_CALL: media_info|tt1`"),
        pair("media_info", "tt1")
    );
    assert_eq!(
        call("**TOOL_CALL:** media_info|tt1"),
        pair("media_info", "tt1")
    );
    assert_eq!(
        call("**TOOL_CALL**: `media_info|tt1`"),
        pair("media_info", "tt1")
    );
}

#[test]
fn text_before_the_call() {
    assert_eq!(
        call("Sure, let me look that up.\nTOOL_CALL: media_search|tomb raider"),
        pair("media_search", "tomb raider")
    );
    assert_eq!(
        call("I'll search now: TOOL_CALL: media_search|tomb raider"),
        pair("media_search", "tomb raider")
    );
}

#[test]
fn a_trailing_period() {
    assert_eq!(
        call("TOOL_CALL: get_current_time."),
        pair("get_current_time", "")
    );
    // Arguments keep it; binding drops it from words and numbers, not from text.
    assert_eq!(
        call("TOOL_CALL: media_info|tt1."),
        pair("media_info", "tt1.")
    );
}

#[test]
fn lower_case_marker_and_upper_case_name() {
    assert_eq!(
        call("tool_call: Media_Search|Lara"),
        pair("media_search", "Lara")
    );
}

#[test]
fn function_style() {
    assert_eq!(
        call("TOOL_CALL: get_current_time()"),
        pair("get_current_time", "")
    );
    assert_eq!(
        call("TOOL_CALL: media_search(\"lara croft\")."),
        pair("media_search", "\"lara croft\"")
    );
    assert_eq!(
        call("TOOL_CALL: media_search(lara croft"),
        pair("media_search", "lara croft")
    );
    // With a bar, parentheses belong to the arguments.
    assert_eq!(
        call("TOOL_CALL: media_search|tomb raider (2001)"),
        pair("media_search", "tomb raider (2001)")
    );
}

#[test]
fn a_space_instead_of_the_bar() {
    assert_eq!(
        call("TOOL_CALL: enable_toolset media"),
        pair("enable_toolset", "media")
    );
    assert_eq!(
        call("TOOL_CALL: media_search  lara croft."),
        pair("media_search", "lara croft.")
    );
    assert_eq!(
        call("TOOL_CALL: get_current_time ."),
        pair("get_current_time", ".")
    );
    assert_eq!(
        call("TOOL_CALL: media_search tomb raider (2001)"),
        pair("media_search", "tomb raider (2001)")
    );
    assert_eq!(
        call("TOOL_CALL: media_search (tomb raider)"),
        pair("media_search", "tomb raider")
    );
    // Without an underscore the first word is no tool name: not a call.
    assert_eq!(parse_line("TOOL_CALL: I think so"), None);
}

#[test]
fn several_calls_run_only_the_first_and_count_the_rest() {
    let reply = "TOOL_CALL: enable_toolset|media\nTOOL_RESULT: ok\nTOOL_CALL: media_search|lara\nTOOL_CALL: media_play|tt1";
    assert_eq!(
        parse_reply(reply),
        ParsedReply::Call {
            call: ToolCall::new("enable_toolset", "media"),
            ignored: 2
        }
    );
    assert_eq!(find_calls(reply).len(), 3);
}

#[test]
fn think_blocks_are_ignored() {
    let reply = "<think>maybe TOOL_CALL: media_play|tt1</think>\nTOOL_CALL: media_search|lara";
    assert_eq!(call(reply), pair("media_search", "lara"));
    let answer = "<think>I should call TOOL_CALL: x</think>\n\nThe answer is 42.";
    assert_eq!(
        parse_reply(answer),
        ParsedReply::Answer("The answer is 42.".into())
    );
    assert_eq!(
        strip_think("reasoning without opening</think>Hello"),
        "Hello"
    );
    assert_eq!(strip_think("<think>never closed"), "<think>never closed");
    assert_eq!(strip_think("a<think>x</think>b<think>y</think>c"), "abc");
    assert_eq!(strip_think("a</think>b<think>c</think>d</think>e"), "be");
    assert_eq!(strip_think("a<think>b<think>c</think>d"), "ad");
}

#[test]
fn stray_closing_think_tags_are_stripped_in_linear_time() {
    // Found with the `tool_call` fuzz target (issue 46): every close searched
    // the whole rest of the reply for an open, so a megabyte of `</think>`
    // took minutes (it never finished within 60 s in a debug build). Now
    // milliseconds.
    let reply = format!("{}TOOL_CALL: notes_list", "</think>".repeat(125_000));
    let started = std::time::Instant::now();
    assert_eq!(call(&reply), pair("notes_list", ""));
    let took = started.elapsed();
    assert!(took < std::time::Duration::from_secs(5), "took {took:?}");
}

#[test]
fn a_reply_without_a_call_is_the_answer() {
    assert_eq!(
        parse_reply("  It is 14:05.  \n"),
        ParsedReply::Answer("It is 14:05.".into())
    );
    assert_eq!(parse_reply(""), ParsedReply::Answer(String::new()));
}

#[test]
fn prose_mentioning_the_marker_is_not_a_call() {
    assert_eq!(
        parse_reply("I would need a TOOL_CALL for that."),
        ParsedReply::Answer("I would need a TOOL_CALL for that.".into())
    );
    assert_eq!(parse_line("TOOL_CALL: ?!"), None);
    assert_eq!(
        parse_line("TOOL_CALL: поиск|фильм"),
        None,
        "names are ASCII identifiers"
    );
    assert_eq!(
        parse_line("TOOL_CALL  media_search|x"),
        None,
        "the colon is required"
    );
    // A later marker on the same line still counts.
    assert_eq!(
        parse_line("TOOL_CALL is: TOOL_CALL: get_current_time"),
        Some(ToolCall::new("get_current_time", ""))
    );
}

#[test]
fn canonical_line_for_the_history() {
    assert_eq!(
        ToolCall::new("media_search", "lara").line(),
        "TOOL_CALL: media_search|lara"
    );
    assert_eq!(
        ToolCall::new("get_current_time", "").line(),
        "TOOL_CALL: get_current_time"
    );
}

proptest! {
    #[test]
    fn never_panics_on_any_text(text in ".{0,400}") {
        let _ = parse_reply(&text);
        let _ = find_calls(&text);
    }

    #[test]
    fn never_panics_on_marker_heavy_text(text in "(TOOL_CALL|tool_call|[:|()`*. \n<>/a-zф]|<think>|</think>){0,60}") {
        let _ = parse_reply(&text);
    }

    #[test]
    fn round_trips_a_clean_call(
        name in "[a-z][a-z0-9_]{0,20}",
        args in "[^\n\r|`*]{0,40}",
        prefix in "[^\n\r]{0,20}",
    ) {
        prop_assume!(!prefix.to_ascii_lowercase().contains("tool_call"));
        prop_assume!(!args.contains("</think>") && !prefix.contains("</think>"));
        let reply = format!("{prefix}\nTOOL_CALL: {name}|{args}\n");
        let trimmed = args.trim();
        prop_assume!(!trimmed.is_empty());
        prop_assert_eq!(
            parse_reply(&reply),
            ParsedReply::Call { call: ToolCall::new(&name, trimmed), ignored: 0 }
        );
    }
}

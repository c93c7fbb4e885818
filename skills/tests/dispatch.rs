//! The dispatcher: forgiving core tools, idempotent enable/disable, prefix
//! routing, direct execution, the seed §7 substitution and the schema reply.

mod common;

use common::{MIN, block_on, clock, toolbox, toolbox_with};
use porfiry_skills::{
    Activation, CallContext, Caller, ClientEvent, Clock, Language, LoopConfig, Outcome, ResultKind,
    ToolCall, dispatch,
};

fn run(act: &mut Activation, name: &str, args: &str) -> Outcome {
    dispatch(&toolbox(), act, &ToolCall::new(name, args), &clock().now())
}

/// A visible result; a tool the dispatcher hands back to run is run here
/// (as the driver would) and its output taken as the result.
fn visible(outcome: Outcome) -> (String, ResultKind, Vec<ClientEvent>) {
    match outcome {
        Outcome::Visible { text, kind, events } => (text, kind, events),
        Outcome::Run { prepared, kind } => {
            let ctx = CallContext::new("t", Caller::User, clock().now(), Language::En);
            let out = block_on(prepared.run(&ctx));
            (out.text, kind, out.events)
        }
        other => panic!("expected a visible result, got {other:?}"),
    }
}

fn invisible(outcome: Outcome) -> (String, bool) {
    match outcome {
        Outcome::Invisible { reply, changed } => (reply, changed),
        other => panic!("expected an invisible call, got {other:?}"),
    }
}

fn fresh() -> Activation {
    Activation::new(10 * MIN as u64)
}

#[test]
fn enable_is_idempotent_and_extends_the_timeout() {
    let mut act = fresh();
    assert_eq!(
        invisible(run(&mut act, "enable_toolset", "media")),
        ("toolset media enabled".into(), true)
    );
    let first = act.deadline("media").unwrap();
    let tb = toolbox();
    let c = clock();
    c.advance_ms(MIN);
    let again = dispatch(
        &tb,
        &mut act,
        &ToolCall::new("enable_toolset", "media"),
        &c.now(),
    );
    assert_eq!(
        invisible(again),
        (
            "toolset media already active, timeout extended".into(),
            false
        )
    );
    assert_eq!(act.deadline("media"), Some(first + MIN as u64));
}

#[test]
fn enable_forgives_case_quotes_and_a_trailing_period() {
    let mut act = fresh();
    let (_, changed) = invisible(run(&mut act, "enable_toolset", " \"Media\". "));
    assert!(changed);
    assert!(act.is_active("media"));
}

#[test]
fn enable_of_an_unknown_set_lists_the_available_ones() {
    let mut act = fresh();
    let (reply, changed) = invisible(run(&mut act, "enable_toolset", "web"));
    assert_eq!(reply, "no toolset \"web\"; available: media, notes");
    assert!(!changed);
    assert!(act.is_empty());
}

#[test]
fn disable_is_forgiving_in_every_case() {
    let mut act = fresh();
    assert_eq!(
        invisible(run(&mut act, "disable_toolset", "media")),
        ("no active toolsets".into(), false)
    );
    assert_eq!(
        invisible(run(&mut act, "disable_toolset", "")),
        ("no active toolsets".into(), false)
    );
    assert_eq!(
        invisible(run(&mut act, "disable_toolset", "web")),
        ("no toolset \"web\"; available: media, notes".into(), false)
    );
    run(&mut act, "enable_toolset", "notes");
    assert_eq!(
        invisible(run(&mut act, "disable_toolset", "media")),
        ("toolset media is not active; active: notes".into(), false)
    );
    assert_eq!(
        invisible(run(&mut act, "disable_toolset", "notes")),
        ("toolset notes disabled".into(), true)
    );
    assert_eq!(
        invisible(run(&mut act, "disable_toolset", "notes")),
        ("no active toolsets".into(), false)
    );
}

#[test]
fn disable_without_a_name_switches_everything_off() {
    let mut act = fresh();
    run(&mut act, "enable_toolset", "notes");
    run(&mut act, "enable_toolset", "media");
    assert_eq!(
        invisible(run(&mut act, "disable_toolset", "")),
        ("toolset media, notes disabled".into(), true)
    );
    assert!(act.is_empty());
}

#[test]
fn a_fitting_call_to_an_inactive_set_runs_at_once_and_activates_it() {
    let mut act = fresh();
    let (text, kind, _) = visible(run(&mut act, "media_search", "lara croft"));
    assert_eq!(kind, ResultKind::ActivatedAndExecuted);
    assert!(
        text.starts_with("tt0146316 — Lara Croft: Tomb Raider (2001)"),
        "{text}"
    );
    assert!(act.is_active("media"));
    let (_, kind, _) = visible(run(&mut act, "media_info", "tt0146316"));
    assert_eq!(kind, ResultKind::Executed);
}

/// The activation reply's head for the test media set.
const MEDIA_ACTIVATED: &str = "Toolset media activated. Its tools:\n\
     media_search|query — find films by title or words\n\
     media_info|id — film details by id\n\
     media_play|id — start playing a film by id\n";

#[test]
fn an_acting_call_to_an_inactive_set_activates_it_but_runs_only_when_sent_again() {
    // Seed 000 #5: a call repeated from history ("ghost") must not play a
    // film the model did not choose again; reading tools still run at once.
    let mut act = fresh();
    let (text, kind, events) = visible(run(&mut act, "media_play", "tt0146316"));
    assert_eq!(kind, ResultKind::Substituted);
    assert!(events.is_empty(), "nothing played: {events:?}");
    assert!(act.is_active("media"));
    assert_eq!(
        text,
        format!(
            "{MEDIA_ACTIVATED}media_play was NOT executed yet. \
             To run it, call: TOOL_CALL: media_play|tt0146316"
        )
    );
    let (_, kind, events) = visible(run(&mut act, "media_play", "tt0146316"));
    assert_eq!(kind, ResultKind::Executed);
    assert!(!events.is_empty(), "the second call plays");
}

#[test]
fn a_non_fitting_call_to_an_inactive_set_is_substituted_by_activation() {
    let mut act = fresh();
    let (text, kind, events) = visible(run(&mut act, "media_search", ""));
    assert_eq!(kind, ResultKind::Substituted);
    assert!(act.is_active("media"));
    assert!(events.is_empty());
    assert_eq!(
        text,
        format!(
            "{MEDIA_ACTIVATED}media_search was NOT executed yet. \
             To run it, call: TOOL_CALL: media_search|query"
        )
    );
}

#[test]
fn substitution_in_russian_says_not_executed_too() {
    let tb = toolbox_with(LoopConfig::in_language(Language::Ru));
    let mut act = fresh();
    let out = dispatch(
        &tb,
        &mut act,
        &ToolCall::new("notes_mark", "first"),
        &clock().now(),
    );
    let (text, kind, _) = visible(out);
    assert_eq!(kind, ResultKind::Substituted);
    assert!(text.contains("notes_mark ещё НЕ выполнялся"), "{text}");
    assert!(
        text.contains("TOOL_CALL: notes_mark|n(number)|[state(done/open)]"),
        "{text}"
    );
}

#[test]
fn invalid_arguments_on_an_active_set_get_the_schema_line() {
    let mut act = fresh();
    run(&mut act, "enable_toolset", "notes");
    let (text, kind, _) = visible(run(&mut act, "notes_mark", "seven"));
    assert_eq!(kind, ResultKind::InvalidArgs);
    assert_eq!(
        text,
        "arguments invalid, expected: notes_mark|n(number)|[state(done/open)]"
    );
    let (text, _, _) = visible(run(&mut act, "notes_mark", "7|later"));
    assert_eq!(
        text,
        "arguments invalid, expected: notes_mark|n(number)|[state(done/open)]"
    );
    let (text, kind, _) = visible(run(&mut act, "notes_mark", "7|Open."));
    assert_eq!(
        (text.as_str(), kind),
        ("note 7 is open", ResultKind::Executed)
    );
}

#[test]
fn any_call_of_a_set_extends_its_deadline_even_an_invalid_one() {
    let tb = toolbox();
    let c = clock();
    let mut act = fresh();
    dispatch(
        &tb,
        &mut act,
        &ToolCall::new("enable_toolset", "notes"),
        &c.now(),
    );
    c.advance_ms(9 * MIN);
    dispatch(&tb, &mut act, &ToolCall::new("notes_mark", "x"), &c.now());
    assert_eq!(
        act.deadline("notes"),
        Some(c.now().unix_ms() + 10 * MIN as u64)
    );
}

#[test]
fn the_prefix_routes_to_the_right_set() {
    let mut act = fresh();
    // notes_add acts: the first call activates its set, the second runs.
    let (_, kind, _) = visible(run(&mut act, "notes_add", "shop|buy milk | and bread"));
    assert_eq!(kind, ResultKind::Substituted);
    assert!(act.is_active("notes"));
    assert!(!act.is_active("media"));
    let (text, _, _) = visible(run(&mut act, "notes_add", "shop|buy milk | and bread"));
    assert_eq!(text, "added [shop] buy milk | and bread");
    let (text, _, _) = visible(run(&mut act, "notes_list", "ignored"));
    assert_eq!(text, "1. buy milk");
}

#[test]
fn an_unknown_verb_of_a_known_set_activates_it_and_lists_its_tools() {
    let mut act = fresh();
    let (text, kind, _) = visible(run(&mut act, "media_stop", ""));
    assert_eq!(kind, ResultKind::UnknownVerb);
    assert!(
        text.starts_with(
            "no tool \"media_stop\". Toolset media is active, its tools:\nmedia_search|query"
        ),
        "{text}"
    );
    assert!(act.is_active("media"));
}

#[test]
fn an_unknown_tool_lists_core_tools_and_sets() {
    let mut act = fresh();
    let (text, kind, _) = visible(run(&mut act, "web_fetch", "x"));
    assert_eq!(kind, ResultKind::UnknownTool);
    assert_eq!(
        text,
        "no tool \"web_fetch\"; core tools: get_current_time, show_text, read_skill, enable_toolset, disable_toolset; toolsets: media, notes"
    );
    assert!(act.is_empty());
}

#[test]
fn read_skill_returns_the_body_or_lists_the_skills() {
    let mut act = fresh();
    let (text, kind, _) = visible(run(&mut act, "read_skill", "Media."));
    assert_eq!(kind, ResultKind::Core);
    assert!(text.starts_with("# Films: find, details, play"), "{text}");
    assert!(text.contains("enable_toolset|media"));
    let (text, _, _) = visible(run(&mut act, "read_skill", "cooking"));
    // Only skills this node can follow are offered: the built-in diary,
    // goals, messages and tasks skills need sets this toolbox lacks.
    assert_eq!(
        text,
        "no skill \"cooking\"; available: media, notes, time-zones"
    );
    let (text, _, _) = visible(run(&mut act, "read_skill", "diary"));
    assert!(
        text.starts_with("no skill \"diary\"; available: media"),
        "a skill of a missing set is not read: {text}"
    );
    assert!(act.is_empty(), "reading a skill activates nothing");
}

#[test]
fn show_text_emits_a_display_event_and_empty_text_gets_the_schema() {
    let mut act = fresh();
    let (text, _, events) = visible(run(&mut act, "show_text", "Tomb Raider | 2001"));
    assert_eq!(text, "shown to the user");
    assert_eq!(
        events,
        [ClientEvent::ShowText {
            text: "Tomb Raider | 2001".into()
        }]
    );
    let (text, kind, events) = visible(run(&mut act, "show_text", "  "));
    assert_eq!(kind, ResultKind::InvalidArgs);
    assert_eq!(text, "arguments invalid, expected: show_text|text");
    assert!(events.is_empty());
}

#[test]
fn get_current_time_reads_the_injected_clock() {
    let mut act = fresh();
    let (text, _, _) = visible(run(&mut act, "get_current_time", "please."));
    assert_eq!(text, "2026-08-22T14:05:00+03:00 Europe/Moscow, Saturday");
}

#[test]
fn media_play_emits_an_action_for_the_client() {
    let mut act = fresh();
    run(&mut act, "enable_toolset", "media");
    let (text, _, events) = visible(run(&mut act, "media_play", "TT0133093"));
    assert_eq!(text, "playing: The Matrix");
    assert_eq!(
        events,
        [ClientEvent::Action {
            tool: "media_play".into(),
            value: "tt0133093".into()
        }]
    );
}

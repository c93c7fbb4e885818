//! The prompt in seed §6's three states, in seed §3's order, byte-identical
//! for the same state, with a stable core + catalogue prefix.

mod common;

use common::{MIN, clock, media_only, toolbox};
use porfiry_skills::{Clock, Language, PromptBuilder, Session, SkillRegistry, ToolsetRegistry};

const STATE_1_EN: &str = "\
You are Porfiry, a brief helpful assistant.
To use a tool, reply with one line: TOOL_CALL: name|arg1|arg2
One call per reply, then wait for TOOL_RESULT. A reply without TOOL_CALL goes to the user.
Core tools:
get_current_time — date, time, time zone
show_text|text — show text on the user's screen
read_skill|name — read a skill's steps
enable_toolset|name — turn a toolset on
disable_toolset|name — turn a toolset off
Toolsets (turn on with enable_toolset|name):
media — films: search, details, play
Skills (steps via read_skill|name):
media — films (find, details, play, pause) — call enable_toolset|media
";

const STATE_3_EN: &str = "\
You are Porfiry, a brief helpful assistant.
To use a tool, reply with one line: TOOL_CALL: name|arg1|arg2
One call per reply, then wait for TOOL_RESULT. A reply without TOOL_CALL goes to the user.
Core tools:
get_current_time — date, time, time zone
show_text|text — show text on the user's screen
read_skill|name — read a skill's steps
enable_toolset|name — turn a toolset on
disable_toolset|name — turn a toolset off
Toolsets (turn on with enable_toolset|name):
media — films: search, details, play
Active toolsets: media. Their tools:
media_search|query — find films by title or words
media_info|id — film details by id
media_play|id — start playing a film by id
";

#[test]
fn state_1_is_core_then_catalogue_then_skill_index() {
    let tb = media_only(Language::En);
    let mut s = Session::new(tb);
    assert_eq!(s.current_prompt(&clock().now()), STATE_1_EN);
}

#[test]
fn state_3_lists_active_tools_and_drops_the_sets_skill() {
    let tb = media_only(Language::En);
    let prompt = tb.prompt().build(&["media"]);
    assert_eq!(prompt, STATE_3_EN);
    assert!(
        !prompt.contains("read_skill|name):"),
        "no skill section is left"
    );
}

#[test]
fn state_2_enable_turns_state_1_into_state_3_on_the_next_request() {
    let tb = media_only(Language::En);
    let mut s = Session::new(tb);
    let now = clock().now();
    let porfiry_skills::Step::CallModel(first) = s.user_message("find Lara Croft", &now) else {
        panic!("a user message calls the model");
    };
    assert_eq!(first.system, STATE_1_EN);
    let next = s
        .model_reply("TOOL_CALL: enable_toolset|media", &now)
        .unwrap();
    let porfiry_skills::Step::CallModel(second) = next else {
        panic!("enable calls the model again");
    };
    assert_eq!(second.system, STATE_3_EN);
    assert_eq!(
        second.messages, first.messages,
        "enable left no trace in the history"
    );
}

#[test]
fn sections_come_in_seed_order_with_every_set_and_skill() {
    let tb = toolbox();
    let p = tb.prompt().build(&["notes"]);
    let pos = |needle: &str| {
        p.find(needle)
            .unwrap_or_else(|| panic!("{needle:?} missing in\n{p}"))
    };
    assert!(pos("Core tools:") < pos("Toolsets ("));
    assert!(pos("Toolsets (") < pos("Active toolsets: notes."));
    assert!(pos("Active toolsets: notes.") < pos("Skills ("));
    assert!(
        pos("media — films: search") < pos("notes — notes: add"),
        "catalogue in name order"
    );
    assert!(p.contains("notes_add|topic|text — add a note\n"));
    assert!(p.contains("notes_mark|n(number)|[state(done/open)] — mark a note\n"));
    assert!(!p.contains("media_search"), "inactive set's tools stay out");
    assert!(
        p.contains("media — films (find"),
        "skill of an inactive set stays"
    );
    assert!(
        !p.contains("notes — notes — call"),
        "skill of the active set leaves"
    );
    assert!(p.contains("time-zones — convert times"));
}

#[test]
fn the_same_state_gives_byte_identical_text_and_the_prefix_never_changes() {
    let tb = toolbox();
    let fresh = common::toolbox();
    let prefix = tb.prompt().prefix().to_owned();
    let states: [&[&str]; 3] = [&[], &["media"], &["notes", "media"]];
    let mut seen = std::collections::BTreeSet::new();
    for active in states {
        let text = tb.prompt().build(active);
        assert!(seen.insert(text.clone()), "each state has its own text");
        assert!(text.starts_with(&prefix), "prefix kept for {active:?}");
        assert_eq!(
            text.as_bytes(),
            fresh.prompt().build(active).as_bytes(),
            "a rebuilt toolbox renders {active:?} the same"
        );
    }
    assert_eq!(
        tb.prompt().build(&["notes", "media"]),
        tb.prompt().build(&["media", "notes"]),
        "the order sets were enabled in does not show"
    );
    // Reached by another path — media on, notes on and off again — the
    // session's prompt is the bytes of "media active".
    let mut s = Session::new(tb.clone());
    let now = clock().now();
    s.user_message("films and notes", &now);
    for call in [
        "TOOL_CALL: enable_toolset|media",
        "TOOL_CALL: enable_toolset|notes",
        "TOOL_CALL: disable_toolset|notes",
    ] {
        s.model_reply(call, &now).unwrap();
    }
    assert_eq!(s.current_prompt(&now), tb.prompt().build(&["media"]));
}

#[test]
fn unknown_and_duplicate_active_names_are_ignored() {
    let tb = media_only(Language::En);
    assert_eq!(tb.prompt().build(&["ghost"]), STATE_1_EN);
    assert_eq!(tb.prompt().build(&["media", "media"]), STATE_3_EN);
}

#[test]
fn empty_registries_leave_out_their_sections() {
    let pb = PromptBuilder::new(Language::En, &ToolsetRegistry::new(), &SkillRegistry::new());
    let p = pb.build(&[]);
    assert!(
        p.ends_with("disable_toolset|name — turn a toolset off\n"),
        "{p}"
    );
    assert!(!p.contains("Toolsets ("));
    assert!(!p.contains("Skills ("));
}

#[test]
fn russian_prompt_uses_russian_texts_and_english_identifiers() {
    let tb = media_only(Language::Ru);
    let p = tb.prompt().build(&["media"]);
    assert!(p.starts_with("Ты Порфирий"), "{p}");
    assert!(p.contains("Базовые инструменты:\n"));
    assert!(p.contains("Активные наборы: media. Их инструменты:\n"));
    assert!(p.contains("media_search|query — найти фильмы по названию или словам\n"));
    assert!(p.contains("TOOL_CALL: имя|арг1|арг2"));
    let idle = tb.prompt().build(&[]);
    assert!(
        idle.contains(
            "media — фильмы (поиск, детали, запуск, пауза) — вызови enable_toolset|media\n"
        )
    );
}

#[test]
fn an_expired_set_leaves_the_prompt_when_it_is_next_built() {
    let c = clock();
    let tb = media_only(Language::En);
    let mut s = Session::new(tb);
    s.user_message("films", &c.now());
    s.model_reply("TOOL_CALL: enable_toolset|media", &c.now())
        .unwrap();
    c.advance_ms(10 * MIN);
    assert_eq!(
        s.current_prompt(&c.now()),
        STATE_3_EN,
        "at exactly 10:00 still active"
    );
    c.advance_ms(1);
    assert_eq!(s.current_prompt(&c.now()), STATE_1_EN);
    assert!(s.activation().is_empty(), "the stale entry was removed");
}

/// Worked examples, when the loop asks for them, sit between the preamble
/// and the core tools, in the prompt's language, and the rest is unchanged
/// (issue 43: the cheap remedy measured beside teaching).
#[test]
fn worked_examples_follow_the_preamble_in_either_language() {
    let (skills, toolsets) = (SkillRegistry::new(), ToolsetRegistry::new());
    for (lang, marker) in [(Language::En, "Examples"), (Language::Ru, "Примеры")] {
        let plain = PromptBuilder::new(lang, &toolsets, &skills);
        let with = plain.clone().with_worked_examples();
        let preamble = porfiry_skills::texts::preamble(lang);
        assert!(with.prefix().starts_with(preamble));
        let examples = &with.prefix()[preamble.len()..];
        assert!(examples.starts_with(marker), "{examples}");
        assert!(examples.contains("TOOL_CALL: get_current_time\n"));
        assert_eq!(
            with.prefix()
                .replace(porfiry_skills::texts::worked_examples(lang), ""),
            plain.prefix()
        );
    }
}

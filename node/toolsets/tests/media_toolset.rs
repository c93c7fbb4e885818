//! The node's data-driven media toolset: search ranking and limits, details,
//! play, unknown ids, and the catalogue JSON shape the node loads.

use porfiry_skills::{
    Args, CallContext, Caller, ClientEvent, Clock, Language, PrepareError, Prepared, SystemClock,
    ToolEffect, Toolset, ToolsetRegistry,
};
use porfiry_toolsets::media::MAX_MEDIA_SEARCH_RESULTS;
use porfiry_toolsets::{MediaEntry, MediaToolset};

/// A small film catalogue.
fn films() -> Vec<MediaEntry> {
    let film = |id: &str, title: &str, year: Option<i32>, description: &str| MediaEntry {
        id: id.into(),
        title: title.into(),
        year,
        description: description.into(),
    };
    vec![
        film(
            "tt0146316",
            "Lara Croft: Tomb Raider",
            Some(2001),
            "An archaeologist races rivals for an ancient artifact.",
        ),
        film(
            "tt0325703",
            "Lara Croft Tomb Raider: The Cradle of Life",
            Some(2003),
            "Lara hunts Pandora's box.",
        ),
        film(
            "tt1365519",
            "Tomb Raider",
            Some(2018),
            "Young Lara Croft searches for her missing father.",
        ),
        film(
            "tt0133093",
            "The Matrix",
            Some(1999),
            "A hacker learns the world is a simulation.",
        ),
        film("tt0000001", "Untitled Home Video", None, ""),
    ]
}

fn registry(entries: Vec<MediaEntry>, lang: Language) -> ToolsetRegistry {
    let mut r = ToolsetRegistry::new();
    r.register(MediaToolset::new(entries, lang)).unwrap();
    r
}

fn ctx() -> CallContext {
    CallContext::new("t", Caller::User, SystemClock::utc().now(), Language::En)
}

/// Runs a prepared call (the set answers at once, so any executor will do).
fn ran(prepared: Result<Prepared, PrepareError>) -> porfiry_skills::ToolOutput {
    let prepared = prepared.unwrap();
    futures::executor::block_on(prepared.run(&ctx()))
}

#[test]
fn search_puts_title_hits_first_and_ignores_case_and_punctuation() {
    let r = registry(films(), Language::En);
    let out = ran(r.prepare("media_search", "LARA, croft!"));
    assert_eq!(
        out.text,
        "tt0146316 — Lara Croft: Tomb Raider (2001)\n\
         tt0325703 — Lara Croft Tomb Raider: The Cradle of Life (2003)\n\
         tt1365519 — Tomb Raider (2018)"
    );
    let out = ran(r.prepare("media_search", "simulation"));
    assert_eq!(out.text, "tt0133093 — The Matrix (1999)");
}

#[test]
fn search_reports_nothing_found_in_words() {
    let r = registry(films(), Language::En);
    assert_eq!(
        ran(r.prepare("media_search", "godzilla")).text,
        "nothing found for \"godzilla\""
    );
    assert_eq!(
        ran(r.prepare("media_search", "?!")).text,
        "nothing found for \"?!\""
    );
    let ru = registry(films(), Language::Ru);
    assert_eq!(
        ran(ru.prepare("media_search", "годзилла")).text,
        "по запросу \"годзилла\" ничего не найдено"
    );
}

#[test]
fn search_shows_at_most_the_limit_and_says_how_many_more() {
    let many: Vec<MediaEntry> = (0..MAX_MEDIA_SEARCH_RESULTS + 3)
        .map(|i| MediaEntry {
            id: format!("id{i}"),
            title: format!("Star film {i}"),
            year: None,
            description: String::new(),
        })
        .collect();
    let out = ran(registry(many, Language::En).prepare("media_search", "star"));
    let lines: Vec<&str> = out.text.lines().collect();
    assert_eq!(lines.len(), MAX_MEDIA_SEARCH_RESULTS + 1);
    assert_eq!(lines[0], "id0 — Star film 0");
    assert_eq!(*lines.last().unwrap(), "…and 3 more; refine the query");
}

#[test]
fn info_gives_details_and_handles_missing_years_and_descriptions() {
    let r = registry(films(), Language::En);
    assert_eq!(
        ran(r.prepare("media_info", "tt0133093")).text,
        "tt0133093 — The Matrix (1999): A hacker learns the world is a simulation."
    );
    assert_eq!(
        ran(r.prepare("media_info", "tt0000001")).text,
        "tt0000001 — Untitled Home Video"
    );
}

#[test]
fn play_emits_an_action_and_unknown_ids_fail_in_words() {
    let r = registry(films(), Language::En);
    let out = ran(r.prepare("media_play", "tt1365519"));
    assert!(out.ok);
    assert_eq!(out.text, "playing: Tomb Raider");
    assert_eq!(
        out.events,
        [ClientEvent::Action {
            tool: "media_play".into(),
            value: "tt1365519".into()
        }]
    );
    let out = ran(r.prepare("media_play", "tt9"));
    assert!(!out.ok);
    assert!(out.events.is_empty());
}

#[test]
fn control_pauses_resumes_and_stops_and_anything_else_is_refused_with_the_schema() {
    let r = registry(films(), Language::En);
    for action in ["pause", "Resume", "stop"] {
        let out = ran(r.prepare("media_control", action));
        assert!(out.ok);
        let lower = action.to_ascii_lowercase();
        assert_eq!(out.text, format!("player told: {lower}"));
        assert_eq!(
            out.events,
            [ClientEvent::Action {
                tool: "media_control".into(),
                value: lower
            }]
        );
    }
    let err = r
        .prepare("media_control", "rewind")
        .unwrap_err()
        .to_string();
    assert!(err.contains("pause/resume/stop"), "{err}");
}

#[test]
fn a_direct_call_with_an_unlisted_tool_answers_instead_of_panicking() {
    let set = MediaToolset::new(films(), Language::En);
    let out = futures::executor::block_on(set.call("media_stop", &Args::default(), &ctx()));
    assert!(!out.ok);
    assert!(out.text.contains("media_search|query"), "{}", out.text);
}

#[test]
fn reads_are_read_and_play_and_control_are_writes_and_named_arguments_bind() {
    let r = registry(films(), Language::En);
    let effects: Vec<_> = MediaToolset::new(films(), Language::En)
        .tools()
        .iter()
        .map(|t| (t.name.clone(), t.effect))
        .collect();
    assert_eq!(
        effects,
        [
            ("media_search".to_owned(), ToolEffect::Read),
            ("media_info".to_owned(), ToolEffect::Read),
            ("media_play".to_owned(), ToolEffect::Write),
            ("media_control".to_owned(), ToolEffect::Write),
        ]
    );
    let out = ran(r.prepare("media_info", r#"{"id": "tt0133093"}"#));
    assert!(
        out.text.starts_with("tt0133093 — The Matrix (1999)"),
        "{}",
        out.text
    );
}

#[test]
fn catalogue_entries_read_from_json_with_optional_fields() {
    let json = r#"[{"id":"a","title":"A","year":2001,"description":"d"},{"id":"b","title":"B"}]"#;
    let entries: Vec<MediaEntry> = serde_json::from_str(json).unwrap();
    assert_eq!(entries[0].year, Some(2001));
    assert_eq!(entries[1].year, None);
    assert_eq!(entries[1].description, "");
    let set = MediaToolset::new(entries, Language::En);
    assert_eq!(set.entries().len(), 2);
    assert_eq!(set.summary(), "films: search, details, play");
}

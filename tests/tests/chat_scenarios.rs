//! End to end: the seed's hardware scenarios (§11) with real `porfiry chat`
//! processes (and, for two sessions of one process, the embedding API)
//! against the scripted model, asserting on exactly what the model server
//! received — the prompt per state and the history.

mod chat_common;

use std::time::Duration;

use chat_common::*;
use porfiry_agent::chat::{ChatConfig, ChatEngine};
use porfiry_agent::llm::{LlmConfig, LlmTarget};
use porfiry_tests::{Reply, ScriptedLlm};

/// Chat settings for an in-process engine against `llm`: no retries.
fn engine_config(llm: &ScriptedLlm) -> ChatConfig {
    ChatConfig::new(LlmTarget {
        config: LlmConfig {
            max_retries: Some(0),
            timeout_ms: Some(10_000),
            ..LlmConfig::default()
        },
        ..LlmTarget::new(llm.url(), "test-model")
    })
}

/// Question → read_skill|media → enable_toolset|media → media_search → answer,
/// then show_text and media_play in a second turn.
#[test]
fn question_read_skill_enable_search_answer() {
    let llm = ScriptedLlm::queue(vec![
        Reply::text("TOOL_CALL: read_skill|media"),
        Reply::text("TOOL_CALL: enable_toolset|media"),
        Reply::text("TOOL_CALL: media_search|lara croft"),
        Reply::text("I found three: Lara Croft: Tomb Raider (2001), The Cradle of Life (2003), Tomb Raider (2018)."),
        Reply::text("TOOL_CALL: show_text|Lara Croft: Tomb Raider (2001)"),
        Reply::text("TOOL_CALL: media_play|tt0146316"),
        Reply::text("Playing Lara Croft: Tomb Raider."),
    ])
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let run = chat(
        dir.path(),
        &llm.url(),
        &[],
        "Find me Lara Croft films\nPlay the first one\n",
    );
    assert!(run.status.success(), "{run:?}");
    assert_eq!(
        run.stdout,
        "I found three: Lara Croft: Tomb Raider (2001), The Cradle of Life (2003), Tomb Raider (2018).\n\
         [show] Lara Croft: Tomb Raider (2001)\n\
         [action] media_play tt0146316\n\
         Playing Lara Croft: Tomb Raider.\n"
    );

    let r = llm.recorded();
    assert_eq!(r.len(), 7, "one request per model reply");

    // State 1: core tools, the catalogue, the skill index with media.
    let s1 = system(&r[0]);
    assert!(s1.contains("Core tools:\n"), "{s1}");
    assert!(s1.contains(CATALOGUE_LINE), "{s1}");
    assert!(s1.contains(MEDIA_SKILL_LINE), "{s1}");
    assert!(!s1.contains("Active toolsets"), "{s1}");
    assert!(
        !s1.contains("media_search|query"),
        "no media tools yet: {s1}"
    );
    assert_eq!(history(&r[0]), [msg("user", "Find me Lara Croft films")]);

    // read_skill: its body enters the history; the prompt is unchanged.
    assert_eq!(system(&r[1]), s1, "same state, byte-identical prompt");
    let h1 = history(&r[1]);
    assert_eq!(h1.len(), 3);
    assert_eq!(h1[1], msg("assistant", "TOOL_CALL: read_skill|media"));
    assert!(
        h1[2]
            .1
            .starts_with("TOOL_RESULT read_skill: # Films: find, details, play"),
        "{:?}",
        h1[2]
    );

    // State 3 after the invisible enable: active section with the tools, no
    // media skill line, and the history exactly as before the enable.
    let s3 = system(&r[2]);
    assert!(s3.contains(ACTIVE_MEDIA), "{s3}");
    assert!(
        !s3.contains(MEDIA_SKILL_LINE),
        "the skill leaves the prompt: {s3}"
    );
    let prefix = &s1[..s1.find("Skills (").expect("skill index heading")];
    assert!(
        s3.starts_with(prefix),
        "core + catalogue prefix kept for the KV cache"
    );
    assert_eq!(history(&r[2]), h1, "enable never enters the history");

    // The search ran and its result is in the history.
    let h3 = history(&r[3]);
    assert_eq!(
        h3[3],
        msg("assistant", "TOOL_CALL: media_search|lara croft")
    );
    assert_eq!(
        h3[4],
        msg(
            "user",
            &format!("TOOL_RESULT media_search: {}", LARA_HITS.join("\n"))
        )
    );
    assert_eq!(system(&r[3]), s3);

    // Turn 2 keeps the whole history and the active set.
    let h4 = history(&r[4]);
    assert_eq!(h4.len(), 7);
    assert_eq!(h4[5].0, "assistant");
    assert_eq!(h4[6], msg("user", "Play the first one"));
    assert_eq!(system(&r[4]), s3);
    let h6 = history(&r[6]);
    assert_eq!(
        h6[8],
        msg("user", "TOOL_RESULT show_text: shown to the user")
    );
    assert_eq!(
        h6[10],
        msg(
            "user",
            "TOOL_RESULT media_play: playing: Lara Croft: Tomb Raider"
        )
    );
    assert_no_invisible_calls_in_history(&r);
}

/// A call to a tool of an inactive set whose arguments do not fit: the set is
/// activated and the model is told the call was NOT executed.
#[test]
fn call_to_an_inactive_set_is_substituted_by_activation() {
    let llm = ScriptedLlm::queue(vec![
        Reply::text("TOOL_CALL: media_search"),
        Reply::text("TOOL_CALL: media_search|stalker"),
        Reply::text("Stalker (1979) is about a trip through the Zone."),
    ])
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let run = chat(dir.path(), &llm.url(), &[], "What is Stalker about?\n");
    assert!(run.status.success(), "{run:?}");
    assert_eq!(
        run.stdout,
        "Stalker (1979) is about a trip through the Zone.\n"
    );

    let r = llm.recorded();
    assert_eq!(r.len(), 3);
    assert!(!system(&r[0]).contains("Active toolsets"));
    let h = history(&r[1]);
    assert_eq!(h[1], msg("assistant", "TOOL_CALL: media_search"));
    let reply = &h[2].1;
    assert!(
        reply.starts_with("TOOL_RESULT media_search: Toolset media activated."),
        "{reply}"
    );
    assert!(
        reply.contains("media_search|query — find films by title or words"),
        "{reply}"
    );
    assert!(
        reply.contains(
            "media_search was NOT executed yet. To run it, call: TOOL_CALL: media_search|query"
        ),
        "{reply}"
    );
    assert!(
        !reply.contains("tt0079944"),
        "nothing was searched: {reply}"
    );
    assert!(
        system(&r[1]).contains(ACTIVE_MEDIA),
        "the set is now active"
    );
    assert_eq!(
        history(&r[2])[4],
        msg(
            "user",
            "TOOL_RESULT media_search: tt0079944 — Stalker (1979)"
        )
    );
}

/// A call to a tool of an inactive set whose arguments fit runs at once and
/// activates the set.
#[test]
fn call_to_an_inactive_set_with_fitting_args_runs_at_once() {
    let llm = ScriptedLlm::queue(vec![
        Reply::text("TOOL_CALL: media_info|tt0079944"),
        Reply::text("A guide leads two men to a wish-granting room."),
    ])
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let run = chat(dir.path(), &llm.url(), &[], "Tell me about tt0079944\n");
    assert!(run.status.success(), "{run:?}");
    assert_eq!(
        run.stdout,
        "A guide leads two men to a wish-granting room.\n"
    );

    let r = llm.recorded();
    assert_eq!(r.len(), 2);
    assert!(!system(&r[0]).contains("Active toolsets"));
    assert_eq!(
        history(&r[1])[2],
        msg(
            "user",
            "TOOL_RESULT media_info: tt0079944 — Stalker (1979): A guide leads a writer and a \
             scientist through the Zone to a room that grants wishes."
        )
    );
    assert!(system(&r[1]).contains(ACTIVE_MEDIA));
    assert!(!system(&r[1]).contains(MEDIA_SKILL_LINE));
}

/// Enable twice, disable twice: the repeats change nothing, are shown to the
/// model once (so it does not loop) and never enter the history.
#[test]
fn double_enable_and_double_disable_are_forgiving() {
    let llm = ScriptedLlm::queue(vec![
        Reply::text("TOOL_CALL: enable_toolset|media"),
        Reply::text("TOOL_CALL: enable_toolset|media"),
        Reply::text("Films are on."),
        Reply::text("TOOL_CALL: disable_toolset|media"),
        Reply::text("TOOL_CALL: disable_toolset|media"),
        Reply::text("Films are off."),
        Reply::text("Hello!"),
    ])
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let run = chat(dir.path(), &llm.url(), &[], "films on\nfilms off\nhi\n");
    assert!(run.status.success(), "{run:?}");
    assert_eq!(run.stdout, "Films are on.\nFilms are off.\nHello!\n");

    let r = llm.recorded();
    assert_eq!(r.len(), 7);
    let s1 = system(&r[0]);
    // Second enable: state 3 stays; the no-op call and its reply ride along once.
    assert!(system(&r[1]).contains(ACTIVE_MEDIA));
    assert_eq!(history(&r[1]), [msg("user", "films on")]);
    assert_eq!(system(&r[2]), system(&r[1]));
    assert_eq!(
        history(&r[2]),
        [
            msg("user", "films on"),
            msg("assistant", "TOOL_CALL: enable_toolset|media"),
            msg(
                "user",
                "TOOL_RESULT enable_toolset: toolset media already active, timeout extended"
            ),
        ]
    );
    // Next turn: the note is gone; the history holds only the dialogue.
    let dialogue = [
        msg("user", "films on"),
        msg("assistant", "Films are on."),
        msg("user", "films off"),
    ];
    assert_eq!(history(&r[3]), dialogue);
    // First disable: back to state 1, byte for byte.
    assert_eq!(system(&r[4]), s1);
    assert_eq!(history(&r[4]), dialogue);
    // Second disable: "no active toolsets", shown once.
    let mut with_note = dialogue.to_vec();
    with_note.push(msg("assistant", "TOOL_CALL: disable_toolset|media"));
    with_note.push(msg(
        "user",
        "TOOL_RESULT disable_toolset: no active toolsets",
    ));
    assert_eq!(history(&r[5]), with_note);
    assert_eq!(system(&r[5]), s1);
    // The next turn sees a clean history.
    assert_no_invisible_calls_in_history(&r[6..]);
    assert_eq!(history(&r[6]).len(), 5);
}

/// Two sessions of ONE process (one engine, one model server): enabling a
/// set in session A leaves session B's next prompt exactly the state-1 prompt
/// (no active set, no tool lines), and A keeps its set.
#[tokio::test]
async fn activation_in_one_session_is_not_seen_by_another() {
    let llm = ScriptedLlm::queue(vec![
        Reply::text("TOOL_CALL: enable_toolset|media"),
        Reply::text("A: films on."),
        Reply::text("B: hello."),
        Reply::text("A: still on."),
    ])
    .unwrap();
    let engine = ChatEngine::new(&engine_config(&llm)).unwrap();
    let mut a = engine.session();
    let mut b = engine.session();
    assert_eq!(a.send("A wants films").await.unwrap().text, "A: films on.");
    assert_eq!(a.active_toolsets(), ["media"]);
    assert_eq!(b.send("B says hi").await.unwrap().text, "B: hello.");
    assert!(b.active_toolsets().is_empty());
    assert_eq!(a.send("A again").await.unwrap().text, "A: still on.");

    let r = llm.recorded();
    assert_eq!(r.len(), 4);
    let state1 = system(&r[0]);
    assert!(!state1.contains("Active toolsets"), "{state1}");
    assert!(system(&r[1]).contains(ACTIVE_MEDIA), "A is in state 3");
    assert_eq!(
        system(&r[2]),
        state1,
        "B's prompt is the state-1 prompt byte for byte: A's set is not in it"
    );
    assert!(
        !system(&r[2]).contains("media_search"),
        "no media tool lines"
    );
    assert_eq!(
        history(&r[2]),
        [msg("user", "B says hi")],
        "B sees none of A's dialogue"
    );
    assert_eq!(system(&r[3]), system(&r[1]), "A still has media");
}

/// A restarted chat (a new `porfiry chat` process on the same data dir)
/// starts with no active toolset: its first prompt is the state-1 prompt,
/// even though the previous process ended with `media` active.
#[test]
fn a_restarted_chat_has_no_active_toolset() {
    let dir = tempfile::tempdir().unwrap();
    let first = ScriptedLlm::queue(vec![
        Reply::text("TOOL_CALL: enable_toolset|media"),
        Reply::text("On."),
    ])
    .unwrap();
    let run = chat(dir.path(), &first.url(), &[], "films\n");
    assert!(run.status.success(), "{run:?}");
    assert_eq!(run.stdout, "On.\n");
    let before = first.recorded();
    assert!(
        system(&before[1]).contains(ACTIVE_MEDIA),
        "media was active"
    );

    let second = ScriptedLlm::queue(vec![Reply::text("Hello.")]).unwrap();
    let run = chat(dir.path(), &second.url(), &[], "films again\n");
    assert!(run.status.success(), "{run:?}");
    assert_eq!(run.stdout, "Hello.\n");
    let after = second.recorded();
    assert_eq!(after.len(), 1);
    let prompt = system(&after[0]);
    assert!(!prompt.contains("Active toolsets"), "{prompt}");
    assert!(!prompt.contains("media_search"), "{prompt}");
    assert_eq!(
        prompt,
        system(&before[0]),
        "the state-1 prompt, byte for byte"
    );
    assert_eq!(history(&after[0]), [msg("user", "films again")]);
}

/// `--toolset-idle-secs 0`: a set expires as soon as any time passes after
/// its last use. The model's reply is delayed 50 ms, so the next turn's
/// prompt is built after the deadline for sure; with the default idle time
/// the same script keeps the set active.
#[test]
fn a_shortened_idle_time_expires_the_set_at_the_next_prompt() {
    let script = || {
        ScriptedLlm::queue(vec![
            Reply::text("TOOL_CALL: enable_toolset|media"),
            Reply::delayed(Duration::from_millis(50), Reply::text("On.")),
            Reply::text("Next."),
        ])
        .unwrap()
    };
    let dir = tempfile::tempdir().unwrap();

    let short = script();
    let run = chat(
        dir.path(),
        &short.url(),
        &["--toolset-idle-secs", "0"],
        "films\nmore\n",
    );
    assert!(run.status.success(), "{run:?}");
    assert_eq!(run.stdout, "On.\nNext.\n");
    let r = short.recorded();
    let s3 = system(&r[2]);
    assert!(!s3.contains("Active toolsets"), "expired: {s3}");
    assert!(
        s3.contains(MEDIA_SKILL_LINE),
        "the skill is back in the index: {s3}"
    );
    assert_eq!(s3, system(&r[0]), "state 1 again, byte for byte");

    let default = script();
    let run = chat(dir.path(), &default.url(), &[], "films\nmore\n");
    assert!(run.status.success(), "{run:?}");
    assert!(
        system(&default.recorded()[2]).contains(ACTIVE_MEDIA),
        "10 min not over"
    );
}

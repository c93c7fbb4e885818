//! End to end: `porfiry chat`'s flags and inputs — help text, the media
//! catalogue file (good and bad), user skills from the data dir, language,
//! `--trace`, and that a chat needs (and creates) nothing in a fresh data dir.

mod chat_common;

use std::fs;

use chat_common::*;
use porfiry_tests::{Reply, ScriptedLlm};

#[test]
fn help_documents_the_output_format() {
    let out = std::process::Command::new(porfiry_tests::porfiry_bin::porfiry_bin())
        .args(["chat", "--help"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "[show] TEXT",
        "[action] TOOL VALUE",
        "[error] MESSAGE",
        "--llm-url",
        "PORFIRY_LLM_URL",
        "--llm-model",
        "PORFIRY_LLM_MODEL",
        "--llm-timeout-secs",
        "--media-catalog",
        "--language",
        "--toolset-idle-secs",
        "--trace",
    ] {
        assert!(help.contains(needle), "help lacks {needle:?}:\n{help}");
    }
}

#[test]
fn without_a_model_url_it_says_which_flag_or_variable_is_missing() {
    let out = std::process::Command::new(porfiry_tests::porfiry_bin::porfiry_bin())
        .args(["chat", "--llm-model", "m"])
        .env_remove("PORFIRY_LLM_URL")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--llm-url"), "{err}");
}

#[test]
fn a_fresh_data_dir_is_enough_and_stays_untouched() {
    let llm = ScriptedLlm::queue(vec![Reply::text("Hello.")]).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("never-created");
    let run = chat(&dir, &llm.url(), &[], "hi\n");
    assert!(run.status.success(), "{run:?}");
    assert_eq!(run.stdout, "Hello.\n");
    assert!(
        !dir.exists(),
        "chat creates no identity, database or folder"
    );
}

#[test]
fn end_of_input_without_messages_exits_zero_without_calling_the_model() {
    let llm = ScriptedLlm::queue(vec![]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let run = chat(dir.path(), &llm.url(), &[], "\n   \n");
    assert!(run.status.success(), "{run:?}");
    assert_eq!(run.stdout, "");
    assert_eq!(llm.request_count(), 0);
}

#[test]
fn a_catalogue_file_replaces_the_sample() {
    let llm = ScriptedLlm::queue(vec![
        Reply::text("TOOL_CALL: media_search|cats"),
        Reply::text("Found it."),
    ])
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("films.json");
    fs::write(
        &file,
        r#"[{"id":"home1","title":"Our Cats","year":2024,"description":"The cats at home."}]"#,
    )
    .unwrap();
    let run = chat(
        dir.path(),
        &llm.url(),
        &["--media-catalog", file.to_str().unwrap()],
        "cats?\n",
    );
    assert!(run.status.success(), "{run:?}");
    assert_eq!(
        history(&llm.recorded()[1])[2],
        msg("user", "TOOL_RESULT media_search: home1 — Our Cats (2024)")
    );
}

#[test]
fn a_bad_catalogue_stops_the_chat_with_one_line_naming_the_file() {
    let llm = ScriptedLlm::queue(vec![]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken.json");
    fs::write(
        &broken,
        "[{\"id\": \"a\", \"title\": \"A\"},\n {\"id\": \"b\"}]",
    )
    .unwrap();
    let missing = dir.path().join("missing.json");
    for (file, why) in [
        (&broken, "missing field `title` at line 2"),
        (&missing, "cannot read it"),
    ] {
        let run = chat(
            dir.path(),
            &llm.url(),
            &["--media-catalog", file.to_str().unwrap()],
            "hi\n",
        );
        assert_eq!(run.status.code(), Some(1), "{run:?}");
        let err = run.stderr.trim();
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        assert!(
            err.contains(&*file.to_string_lossy()),
            "names the file: {err}"
        );
        assert!(err.contains(why), "says why: {err}");
    }
    assert_eq!(llm.request_count(), 0);
}

#[test]
fn user_skills_come_from_the_data_dir_and_broken_ones_are_skipped_by_name() {
    let llm = ScriptedLlm::queue(vec![
        Reply::text("TOOL_CALL: read_skill|weather"),
        Reply::text("Take an umbrella."),
    ])
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let skills = dir.path().join("skills");
    fs::create_dir_all(skills.join("weather")).unwrap();
    fs::write(
        skills.join("weather/SKILL.md"),
        "---\nname: weather\ndescription: rain or sun — read this first\n---\nLook out of the window.\n",
    )
    .unwrap();
    fs::create_dir_all(skills.join("broken")).unwrap();
    fs::write(skills.join("broken/SKILL.md"), "no front matter here\n").unwrap();

    let run = chat(dir.path(), &llm.url(), &[], "will it rain?\n");
    assert!(run.status.success(), "{run:?}");
    assert_eq!(run.stdout, "Take an umbrella.\n");
    assert!(
        run.stderr.contains("broken/SKILL.md"),
        "warning names the file: {}",
        run.stderr
    );
    let r = llm.recorded();
    let s = system(&r[0]);
    assert!(
        s.contains("weather — rain or sun — read this first\n"),
        "{s}"
    );
    assert!(s.contains(MEDIA_SKILL_LINE), "built-in skills stay: {s}");
    assert!(!s.contains("broken"), "{s}");
    assert_eq!(
        history(&r[1])[2],
        msg("user", "TOOL_RESULT read_skill: Look out of the window.")
    );
}

#[test]
fn russian_prompts_and_tool_texts() {
    let llm = ScriptedLlm::queue(vec![
        Reply::text("TOOL_CALL: enable_toolset|media"),
        Reply::text("Готово."),
    ])
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let run = chat(dir.path(), &llm.url(), &["--language", "ru"], "фильмы\n");
    assert!(run.status.success(), "{run:?}");
    assert_eq!(run.stdout, "Готово.\n");
    let r = llm.recorded();
    let s1 = system(&r[0]);
    assert!(s1.contains("Базовые инструменты:\n"), "{s1}");
    assert!(
        s1.contains("media — фильмы: поиск, детали, запуск\n"),
        "{s1}"
    );
    assert!(
        system(&r[1]).contains("Активные наборы: media. Их инструменты:\n"),
        "{}",
        system(&r[1])
    );
}

#[test]
fn trace_shows_each_prompt_state_and_tool_call_on_stderr_only() {
    let llm = ScriptedLlm::queue(vec![
        Reply::text("TOOL_CALL: enable_toolset|media"),
        Reply::text("TOOL_CALL: media_search|matrix"),
        Reply::text("TOOL_CALL: media_info|tt9999999"),
        Reply::text("The Matrix."),
    ])
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let run = chat(dir.path(), &llm.url(), &["--trace"], "matrix\n");
    assert!(run.status.success(), "{run:?}");
    assert_eq!(run.stdout, "The Matrix.\n", "stdout stays the transcript");
    let err = &run.stderr;
    assert!(err.contains("[trace] request 1: new prompt state"), "{err}");
    assert!(
        err.contains(
            "[trace] invisible call TOOL_CALL: enable_toolset|media -> toolset media enabled"
        ),
        "{err}"
    );
    assert!(err.contains("[trace] request 2: new prompt state"), "{err}");
    assert!(
        err.contains("[trace]   | Active toolsets: media. Their tools:"),
        "{err}"
    );
    assert!(
        err.contains("[trace] tool call TOOL_CALL: media_search|matrix -> Executed ok=true: tt0133093 — The Matrix (1999)"),
        "{err}"
    );
    assert!(
        err.contains("[trace] tool call TOOL_CALL: media_info|tt9999999 -> Executed ok=false: "),
        "a failed call is marked: {err}"
    );
    assert!(err.contains("[trace] request 3: prompt unchanged"), "{err}");
    assert!(err.contains("[trace] answer to the user"), "{err}");
}

//! `read_skill` reads a user's skill whole and from disk at the time of the
//! call (seed 000: skills are read lazily): a 20 KiB recipe reaches the model
//! to its last line, an edited file needs no restart, a file gone since the
//! start keeps the loaded body.

mod common;

use std::sync::Arc;

use common::{ScriptedLlm, block_on, clock};
use porfiry_skills::{
    ChatSession, LoopConfig, SkillRepository, Toolbox, ToolsetRegistry,
    limits::MAX_TOOL_RESULT_CHARS,
};

fn write_skill(dir: &std::path::Path, body: &str) {
    let folder = dir.join("big-recipe");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(
        folder.join("SKILL.md"),
        format!("---\nname: big-recipe\ndescription: a long recipe\n---\n{body}"),
    )
    .unwrap();
}

fn toolbox(dir: &std::path::Path) -> Arc<Toolbox> {
    let load = SkillRepository::new(porfiry_skills::Language::En)
        .with_user_dir(dir)
        .load();
    assert!(load.skipped.is_empty(), "{:?}", load.skipped);
    Arc::new(Toolbox::new(
        ToolsetRegistry::new(),
        load.registry,
        LoopConfig::default(),
    ))
}

/// The `TOOL_RESULT read_skill` message the model saw on its second call.
fn read_through_a_turn(tb: Arc<Toolbox>) -> String {
    let llm = Arc::new(ScriptedLlm::new(&[
        "TOOL_CALL: read_skill|big-recipe",
        "Done.",
    ]));
    let mut chat = ChatSession::new(tb, llm.clone(), Arc::new(clock()));
    block_on(chat.send("cook")).unwrap();
    let requests = llm.requests();
    requests[1]
        .messages
        .iter()
        .find(|m| m.content.starts_with("TOOL_RESULT read_skill"))
        .map(|m| m.content.clone())
        .expect("the skill's result")
}

#[test]
fn a_20_kib_skill_reaches_the_model_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let line = "Stir for one minute, then taste and adjust the salt.\n";
    let mut body = line.repeat(20 * 1024 / line.len());
    body.push_str("LAST STEP: serve warm.");
    assert!(body.chars().count() > 3 * MAX_TOOL_RESULT_CHARS);
    write_skill(tmp.path(), &body);
    let result = read_through_a_turn(toolbox(tmp.path()));
    assert!(
        result.ends_with("LAST STEP: serve warm."),
        "cut: …{}",
        &result[result.len() - 80..]
    );
    assert!(!result.contains("[truncated]"));
}

#[test]
fn an_edited_skill_is_read_as_it_is_now_and_a_vanished_one_as_it_was() {
    let tmp = tempfile::tempdir().unwrap();
    write_skill(tmp.path(), "Old steps.");
    let tb = toolbox(tmp.path());
    write_skill(tmp.path(), "New steps, edited while the node ran.");
    assert!(read_through_a_turn(tb.clone()).ends_with("New steps, edited while the node ran."));
    std::fs::remove_dir_all(tmp.path().join("big-recipe")).unwrap();
    assert!(read_through_a_turn(tb).ends_with("Old steps."));
}

//! Validation of the core's commands by other models (seed 003 §6) on a
//! real SQLite file with scripted models: a -3 vote keeps a command from
//! running and is stored, a lone validator that is the main model (by name,
//! or at its endpoint and model) is self-validation, a hung validator
//! abstains at its deadline.

mod core_support;

use core_support::*;
use porfiry_skills::Language;
use porfiry_storage::{DiaryEntry, LlmEntry, ProcessEntry, ProcessStatus, RecentResponse};

#[tokio::test]
async fn a_validator_voting_minus_3_keeps_commands_from_running_and_the_vote_is_stored() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    add_validator(&db, entry("judge")).await;
    let main = thinker("main", "TOOL_CALL: diary_add|a dubious claim");
    let judge = ScriptLlm::new("judge", |_| Ok("-3".to_owned()));
    let mut core = quiet_core(
        &db,
        ScriptMaker::default().with(main).with(judge.clone()),
        clock(),
    )
    .await;
    let done = core.tick().await.unwrap();
    assert_eq!(done.report.executed(), 0);
    assert_eq!(judge.calls(), 1);
    // What the validator is sent (seed §6): the seed's question, the reply
    // and the prompt it answered, without the core's system prompt.
    let asked = &judge.seen()[0];
    assert!(
        asked.system.starts_with(
            "Rate the correctness of this message from -3 (completely incorrect) to +3"
        ),
        "{}",
        asked.system
    );
    let sent: String = asked.messages.iter().map(|m| m.content.as_str()).collect();
    assert!(
        sent.contains("TOOL_CALL: diary_add|a dubious claim"),
        "{sent}"
    );
    assert!(
        sent.contains("## 1. Your recent replies"),
        "the prompt: {sent}"
    );
    let context_0 = porfiry_skills::cognition::texts::prompt::core_system_prompt(Language::En);
    assert!(!sent.contains(&context_0[..60]), "no system prompt: {sent}");
    assert!(!asked.system.contains(&context_0[..60]));
    let (diary, responses, processes) = read(&db, |s| {
        (
            all::<DiaryEntry>(s),
            all::<RecentResponse>(s),
            all::<ProcessEntry>(s),
        )
    })
    .await;
    assert!(diary.is_empty(), "the write command did not run");
    let r = &responses[0].row;
    assert!(!r.auto_pass);
    assert_eq!(r.rating, -3.0);
    assert_eq!(r.validators.len(), 1);
    assert_eq!(r.validators[0].llm, "judge");
    assert_eq!(r.validators[0].rating, -3);
    let json = serde_json::to_string(&r.validators).unwrap();
    assert!(json.contains(r#""LLM":"judge""#), "{json}");
    assert_eq!(r.distribution.get("-3"), Some(&1));
    assert_eq!(processes[0].row.status, ProcessStatus::Warning);
    assert!(
        processes[0]
            .row
            .result
            .as_deref()
            .unwrap()
            .contains("not validated"),
        "{:?}",
        processes[0].row.result
    );
}

/// A main model that writes a diary entry and, asked as a validator,
/// rates its own reply +2.
fn self_rating_main() -> std::sync::Arc<ScriptLlm> {
    ScriptLlm::new("main", |req| {
        Ok(if is_main_call(req, Language::En) {
            "TOOL_CALL: diary_add|my own idea".to_owned()
        } else if req.system.starts_with("Rate the correctness") {
            "+2".to_owned()
        } else {
            "[]".to_owned()
        })
    })
}

#[tokio::test]
async fn a_lone_validator_that_is_the_main_model_is_recorded_as_self_validation() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    add_validator(&db, entry("main")).await;
    let main = self_rating_main();
    let mut core = quiet_core(&db, ScriptMaker::default().with(main), clock()).await;
    let done = core.tick().await.unwrap();
    assert_eq!(done.report.executed(), 1, "+2 reaches the write threshold");
    let r = read(&db, all::<RecentResponse>).await.remove(0).row;
    assert!(r.self_validation && !r.auto_pass);
    let json = serde_json::to_value(&r.validators).unwrap();
    assert_eq!(
        json,
        serde_json::json!([{"LLM": "main", "rating": 2, "self_validation": true}]),
        "seed §6: recorded inside validators as self-validation"
    );
}

#[tokio::test]
async fn a_lone_validator_under_another_name_at_the_main_models_address_is_self_validation() {
    // Issue 42, seed 003 #10: once matched by name only.
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    add_validator(
        &db,
        LlmEntry {
            endpoint: format!("{}/", entry("main").endpoint),
            model: "main".into(),
            ..entry("main-again")
        },
    )
    .await;
    let main = self_rating_main();
    let maker = ScriptMaker::default()
        .with(main.clone())
        .with_named("main-again", main);
    let mut core = quiet_core(&db, maker, clock()).await;
    core.tick().await.unwrap();
    let r = read(&db, all::<RecentResponse>).await.remove(0).row;
    assert!(r.self_validation && !r.auto_pass);
    assert_eq!(
        serde_json::to_value(&r.validators).unwrap(),
        serde_json::json!([{"LLM": "main-again", "rating": 2, "self_validation": true}])
    );
}

#[tokio::test(start_paused = true)]
async fn a_hung_validator_abstains_at_the_deadline_and_writes_wait_for_a_vote() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    add_validator(&db, entry("slow")).await;
    let main = thinker("main", "TOOL_CALL: diary_add|x\nTOOL_CALL: diary_list");
    let maker = ScriptMaker::default()
        .with(main)
        .with_named("slow", std::sync::Arc::new(HungLlm("slow".into())));
    let mut core = quiet_core(&db, maker, clock()).await;
    // Paused time: the 90 s reflect deadline passes at once, no real wait.
    let done = core.tick().await.unwrap();
    let v = done.report.validation.clone().unwrap();
    assert_eq!(v.abstained.len(), 1, "{v:?}");
    assert!(v.abstained[0].1.contains("no answer within"), "{v:?}");
    assert!(!v.auto_pass);
    let diary = read(&db, all::<DiaryEntry>).await;
    assert!(diary.is_empty(), "no vote: the write waits");
    assert_eq!(done.report.executed(), 1, "the read (threshold 0) ran");
}

/// Registers `llm` as a validator.
async fn add_validator(db: &porfiry_storage::db::Db, llm: LlmEntry) {
    let row = LlmEntry {
        is_validator: true,
        ..llm
    };
    db.write(move |s| s.add(&row, 1)).await.unwrap().unwrap();
}

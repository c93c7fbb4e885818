//! The cognitive core under `--constrained` (issue 30 §4): each tick's
//! request carries the grammar of a reply whose commands block names only
//! catalogue tools — built from the very registry the core runs commands
//! through — and the tick's stop texts; its evaluations carry no grammar;
//! a reply of the grammar's form runs its command. Unconstrained, a tick
//! carries the stop texts only.

mod core_support;

use std::sync::Arc;

use core_support::*;
use porfiry_agent::llm::registry_models::RegistryModels;
use porfiry_skills::Language;
use porfiry_skills::grammar::{core_catalogue, core_reply};
use porfiry_skills::llm::stops::tick_answer_stop;
use porfiry_storage::DiaryEntry;
use porfiry_toolsets::{StoreTools, ToolsetOptions, core_toolsets};

/// A block of the grammar's form: one catalogue command.
const BLOCK_REPLY: &str = "Worth keeping.\n# Commands:\n\
    {\"cmd_id\": \"c1\", \"type\": \"diary_add\", \"args\": {\"text\": \"links decay\"}, \"description\": \"note it\"}\n\
    # End of commands";

fn main_model() -> Arc<ScriptLlm> {
    ScriptLlm::new("main", |req| {
        if is_main_call(req, Language::En) {
            Ok(BLOCK_REPLY.to_owned())
        } else {
            Ok(r#"{"novel": "yes", "novelty": 0.8, "new_ideas": ["a"], "refined_ideas": [], "discarded_ideas": [], "tags": ["mesh"], "emotions": ["joy:3"]}"#.to_owned())
        }
    })
}

async fn tick(constrained: bool) -> (Arc<ScriptLlm>, porfiry_storage::db::Db, tempfile::TempDir) {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    let main = main_model();
    let setup = Setup {
        constrained,
        ..Setup::default()
    };
    let maker = Arc::new(ScriptMaker::default().with(main.clone()));
    let mut core = core_from(&db, maker, "main", start_clock(), setup).await;
    let done = core.tick().await.unwrap();
    assert_eq!(done.report.error, None);
    (main, db, tmp)
}

#[tokio::test]
async fn a_constrained_tick_carries_the_catalogues_grammar_and_runs_its_block() {
    let (main, db, _tmp) = tick(true).await;
    let tools = StoreTools {
        db: db.clone(),
        language: Language::En,
        events: porfiry_agent::cognition::CoreEvents::new(),
        node: None,
    };
    let registry = core_toolsets(
        &ToolsetOptions::default(),
        &tools,
        Arc::new(RegistryModels::new(None)),
    )
    .unwrap();
    let expected = core_reply(Language::En, &core_catalogue(&registry));
    let seen = main.seen();
    let (ticks, others): (Vec<_>, Vec<_>) =
        seen.iter().partition(|r| is_main_call(r, Language::En));
    assert_eq!(ticks.len(), 1);
    assert_eq!(ticks[0].grammar.as_deref(), Some(expected.as_str()));
    assert_eq!(ticks[0].stop, tick_answer_stop(Language::En));
    assert!(!others.is_empty() && others.iter().all(|r| r.grammar.is_none()));
    let diary = db
        .read(|s| {
            s.list::<DiaryEntry>(&Default::default())
                .map(|rows| rows.into_iter().map(|r| r.row.text).collect::<Vec<_>>())
        })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(diary, ["links decay"]);
}

#[tokio::test]
async fn an_unconstrained_tick_carries_the_stop_texts_only() {
    let (main, _db, _tmp) = tick(false).await;
    let seen = main.seen();
    let tick = seen.iter().find(|r| is_main_call(r, Language::En)).unwrap();
    assert_eq!(tick.grammar, None);
    assert_eq!(tick.stop, ["# End of commands", "TOOL_RESULT"]);
}

//! The cognitive core on a real SQLite file, the node's real toolset
//! registry and a scripted in-process model: what one tick writes, the
//! anti-stagnation reflex, auto_pass (validators: `cognition_validation.rs`),
//! a model failure recorded and retried (idle mode:
//! `cognition_idle.rs`), and the budget at a busy node's size (stalls and
//! strategies: `cognition_stagnation.rs`).

mod core_support;

use core_support::*;
use porfiry_skills::Language;
use porfiry_skills::cognition::{CycleSettings, NoteFilter};
use porfiry_skills::llm::LlmError;
use porfiry_storage::{
    DiaryEntry, LlmEntry, Note, NoteSource, ProcessEntry, ProcessStatus, RecentResponse, TickRecord,
};

#[tokio::test]
async fn a_tick_runs_a_write_command_with_auto_pass_and_records_it() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    let main = thinker(
        "main",
        "I should note this.\nTOOL_CALL: diary_add|mesh links decay|mesh",
    );
    let mut core = quiet_core(&db, ScriptMaker::default().with(main.clone()), clock()).await;
    let done = core.tick().await.unwrap();
    assert_eq!(done.report.error, None);
    assert_eq!(done.report.executed(), 1);
    let (diary, responses, processes, ticks) = read(&db, |s| {
        (
            all::<DiaryEntry>(s),
            all::<RecentResponse>(s),
            all::<ProcessEntry>(s),
            all::<TickRecord>(s),
        )
    })
    .await;
    assert_eq!(diary.len(), 1);
    assert_eq!(diary[0].row.text, "mesh links decay");
    assert_eq!(responses.len(), 1);
    let r = &responses[0].row;
    assert!(r.auto_pass, "no validators: auto_pass");
    assert_eq!(r.validators.len(), 0);
    assert!(r.content.contains("diary_add"));
    assert_eq!(processes.len(), 1);
    assert_eq!(processes[0].row.name, "diary_add");
    assert_eq!(processes[0].row.status, ProcessStatus::Ok);
    assert_eq!(ticks.len(), 1);
    let t = &ticks[0].row;
    assert_eq!((t.tick, t.commands_total, t.commands_executed), (1, 1, 1));
    assert_eq!(t.error, None);
    assert!(t.prompt_tokens > 0 && t.model_calls >= 2, "{t:?}");
    assert_eq!(t.response_id, Some(responses[0].id));
}

#[tokio::test]
async fn the_same_reply_twice_fires_the_reflex_and_is_stored_once() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    let main = thinker("main", "Same thought.\nTOOL_CALL: diary_add|same thought");
    let mut core = quiet_core(&db, ScriptMaker::default().with(main.clone()), clock()).await;
    core.tick().await.unwrap();
    let calls_after_first = main.calls();
    let second = core.tick().await.unwrap();
    assert!(second.report.repeat);
    assert_eq!(
        main.calls(),
        calls_after_first + 1,
        "a repeat needs no evaluation calls"
    );
    let (diary, responses) = read(&db, |s| (all::<DiaryEntry>(s), all::<RecentResponse>(s))).await;
    assert_eq!(diary.len(), 1, "the repeated command did not run again");
    assert_eq!(responses.len(), 2);
    let stored_replies = responses
        .iter()
        .filter(|r| r.row.content.contains("Same thought."))
        .count();
    assert_eq!(stored_replies, 1, "the repeated reply is not stored again");
    assert!(responses[1].row.stagnation_reflex);
    assert_eq!(responses[1].row.novelty_score, Some(0.0));
    assert!(responses[1].row.content.contains("anti-stagnation reflex"));
}

#[tokio::test]
async fn a_long_run_of_the_same_reply_runs_its_commands_only_the_first_time() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    let main = thinker("main", "Same thought.\nTOOL_CALL: diary_add|same thought");
    let mut core = quiet_core(&db, ScriptMaker::default().with(main), clock()).await;
    // Longer than any short window the check might look back over.
    let ticks = 12;
    let mut repeats = Vec::new();
    for _ in 0..ticks {
        repeats.push(core.tick().await.unwrap().report.repeat);
    }
    let mut expected = vec![true; ticks];
    expected[0] = false;
    assert_eq!(repeats, expected, "every reply after the first repeats it");
    let (diary, responses) = read(&db, |s| (all::<DiaryEntry>(s), all::<RecentResponse>(s))).await;
    assert_eq!(
        diary.len(),
        1,
        "the repeated command ran only the first time"
    );
    let stored_replies = responses
        .iter()
        .filter(|r| r.row.content.contains("Same thought."))
        .count();
    assert_eq!(stored_replies, 1, "the repeated reply is stored once");
    // Cleanup keeping fewer rows than the run is long (the `cycle` set's
    // cleanup, or the per-tick bound on a run past it) keeps the reply too.
    db.write(|s| s.responses_keep_latest(2))
        .await
        .unwrap()
        .unwrap();
    assert!(core.tick().await.unwrap().report.repeat);
    let diary = read(&db, all::<DiaryEntry>).await;
    assert_eq!(diary.len(), 1, "not even after cleanup");
}

#[tokio::test]
async fn a_reworded_repeat_evaluated_as_nothing_new_fires_the_reflex() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    let replies = std::sync::Mutex::new(
        [
            "Trust grows slowly.\nTOOL_CALL: diary_add|trust grows slowly",
            "Slowly, trust grows.\nTOOL_CALL: diary_add|slowly trust grows",
        ]
        .into_iter(),
    );
    let main = ScriptLlm::new("main", move |req| {
        if is_main_call(req, Language::En) {
            Ok(replies.lock().unwrap().next().unwrap_or("-").to_owned())
        } else if req.system.contains("Compare") {
            Ok(r#"{"novel": "no", "novelty": 0, "new_ideas": [], "tags": ["trust"]}"#.into())
        } else {
            Ok("[]".into())
        }
    });
    let mut core = quiet_core(&db, ScriptMaker::default().with(main), clock()).await;
    assert!(!core.tick().await.unwrap().report.repeat);
    let second = core.tick().await.unwrap();
    assert!(second.report.repeat, "{:?}", second.report.reflex);
    let (diary, responses) = read(&db, |s| (all::<DiaryEntry>(s), all::<RecentResponse>(s))).await;
    assert_eq!(diary.len(), 1, "the reworded repeat's command did not run");
    assert_eq!(responses.len(), 2);
    assert!(
        !responses[1].row.content.contains("Slowly"),
        "not stored again"
    );
    assert!(responses[1].row.stagnation_reflex);
    assert_eq!(responses[1].row.novelty_score, Some(0.0));
    let processes = read(&db, all::<ProcessEntry>).await;
    let commands = processes
        .iter()
        .filter(|p| p.row.name != "stagnation_strategy")
        .count();
    assert_eq!(commands, 1, "no row for the skipped command");
}

#[tokio::test]
async fn a_model_failure_is_recorded_and_the_next_tick_retries() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    let failed_once = std::sync::atomic::AtomicBool::new(false);
    let main = ScriptLlm::new("main", move |req| {
        if is_main_call(req, Language::En)
            && !failed_once.swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            return Err(LlmError::Other("connection refused".into()));
        }
        Ok("Back again.".to_owned())
    });
    let mut core = quiet_core(&db, ScriptMaker::default().with(main), clock()).await;
    let first = core.tick().await.unwrap();
    assert!(
        first
            .report
            .error
            .as_deref()
            .unwrap()
            .contains("connection refused")
    );
    let second = core.tick().await.unwrap();
    assert_eq!(second.report.error, None);
    let ticks = read(&db, all::<TickRecord>).await;
    assert_eq!(ticks.len(), 2);
    assert!(
        ticks[0]
            .row
            .error
            .as_deref()
            .unwrap()
            .contains("connection refused")
    );
    assert!(ticks[0].row.summary.contains("model call failed"));
    assert_eq!(ticks[1].row.error, None);
}

#[tokio::test]
async fn malformed_command_blocks_are_recorded_and_the_tick_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    let main = thinker(
        "main",
        "Plan.\n# Commands:\n{\"cmd_id\": \"c1\", \"type\": \"diary_add\", \"args\": {\"text\": \"from a block\"}}\n{\"type\": \"diary_add\", \"args\": {oops}\n# End of commands",
    );
    let mut core = quiet_core(&db, ScriptMaker::default().with(main), clock()).await;
    let done = core.tick().await.unwrap();
    assert_eq!(done.report.executed(), 1);
    let (diary, processes) = read(&db, |s| (all::<DiaryEntry>(s), all::<ProcessEntry>(s))).await;
    assert_eq!(diary[0].row.text, "from a block");
    let block = processes
        .iter()
        .find(|p| p.row.name == "command_block")
        .expect("the malformed object is recorded");
    assert_eq!(block.row.status, ProcessStatus::Error);
    let ran = processes
        .iter()
        .find(|p| p.row.name == "diary_add")
        .unwrap();
    assert_eq!(ran.row.cmd_id.as_deref(), Some("c1"));
}

/// The user message of the first main call `llm` saw.
fn first_prompt(llm: &ScriptLlm) -> String {
    llm.seen()
        .into_iter()
        .find(|r| is_main_call(r, Language::En))
        .unwrap()
        .messages
        .iter()
        .map(|m| m.content.clone())
        .collect()
}

#[tokio::test]
async fn context_5_shows_roles_and_config_and_manual_context_4_hashtags_and_source() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    let (user_note, cli_note) = db
        .write(|s| {
            s.add(
                &porfiry_storage::Identity {
                    name: "Porfiry".into(),
                    role: "family assistant".into(),
                    ..Default::default()
                },
                1,
            )
            .unwrap();
            s.add(
                &LlmEntry {
                    is_validator: true,
                    ..entry("judge")
                },
                1,
            )
            .unwrap();
            s.config_set("process.allow", &["uptime"], 1).unwrap();
            let note = |text: &str, source, hashtags: &[&str], priority| Note {
                text: text.into(),
                source,
                hashtags: hashtags.iter().map(|h| (*h).to_owned()).collect(),
                priority,
                ..Default::default()
            };
            (
                s.add(
                    &note("relays are full", NoteSource::User, &["mesh", "relay"], 2),
                    2,
                )
                .unwrap(),
                s.add(&note("from the shell", NoteSource::Cli, &[], 0), 3)
                    .unwrap(),
            )
        })
        .await
        .unwrap();
    let main = thinker("main", "Looking around.");
    let judge = ScriptLlm::new("judge", |_| Ok("1".into()));
    let mut core = quiet_core(
        &db,
        ScriptMaker::default().with(main.clone()).with(judge),
        clock(),
    )
    .await;
    core.tick().await.unwrap();
    let prompt = first_prompt(&main);
    for want in [
        "model = main",
        "language = en",
        "roles = Porfiry — family assistant",
        "validators = judge",
        "thresholds = read +0, write +1, network +2",
        r#"process.allow = ["uptime"]"#,
        &format!("#{user_note} p2 user #mesh #relay"),
        &format!("#{cli_note} p0 cli"),
    ] {
        assert!(prompt.contains(want), "{want:?} missing from:\n{prompt}");
    }
    assert!(
        !prompt.contains("core.stagnation"),
        "bookkeeping is not a parameter"
    );
    assert!(
        !prompt.contains("relays are full"),
        "manual mode shows ids, not texts"
    );
}

#[tokio::test]
async fn help_lists_the_sets_and_one_sets_commands() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    let main = thinker("main", "TOOL_CALL: help\nTOOL_CALL: help|diary");
    let mut core = quiet_core(&db, ScriptMaker::default().with(main), clock()).await;
    core.tick().await.unwrap();
    let processes = read(&db, all::<ProcessEntry>).await;
    let index = processes[0].row.result.clone().unwrap();
    assert!(
        index.contains("diary — ") && index.contains("process — "),
        "{index}"
    );
    let diary = processes[1].row.result.clone().unwrap();
    assert!(
        diary.contains("diary_add|") && !diary.contains("process_"),
        "{diary}"
    );
}

#[tokio::test]
async fn the_prompt_fits_the_budget_on_a_busy_node() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    fill_busy(&db).await;
    let main = thinker("main", "Many notes today.");
    let mut core = quiet_core(&db, ScriptMaker::default().with(main.clone()), clock()).await;
    let done = core.tick().await.unwrap();
    let budget = porfiry_skills::cognition::budget::DEFAULT_CONTEXT_TOKENS;
    assert!(
        done.report.prompt_tokens <= budget,
        "{}",
        done.report.prompt_tokens
    );
    assert!(!done.report.cut.is_empty(), "something had to be cut");
    let sent = &main.seen()[0];
    let text: String = std::iter::once(sent.system.as_str())
        .chain(sent.messages.iter().map(|m| m.content.as_str()))
        .collect();
    assert!(
        porfiry_skills::cognition::budget::estimate_tokens(&text) <= budget,
        "the request as sent fits too"
    );
}

#[tokio::test]
async fn tens_of_megabytes_of_notes_stay_within_the_budget() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    // A family server: 1,200 notes of 30 KB (about 36 MB), shown in auto mode.
    db.write(|s| {
        let body = "family news and plans for the weekend ".repeat(800);
        let notes: Vec<Note> = (0..1_200)
            .map(|i| Note {
                text: format!("note {i}: {body}"),
                ..Default::default()
            })
            .collect();
        s.add_many(&notes, 2_000).unwrap();
        set_cycle(
            s,
            CycleSettings {
                notes: porfiry_skills::cognition::NotesMode::Auto {
                    filter: NoteFilter::default(),
                },
                ..Default::default()
            },
            2_000,
        );
    })
    .await
    .unwrap();
    let main = thinker("main", "Lots to read.");
    let mut core = quiet_core(&db, ScriptMaker::default().with(main.clone()), clock()).await;
    let done = core.tick().await.unwrap();
    let budget = porfiry_skills::cognition::budget::DEFAULT_CONTEXT_TOKENS;
    assert!(
        done.report.prompt_tokens <= budget,
        "{}",
        done.report.prompt_tokens
    );
    let sent = &main.seen()[0];
    let user: usize = sent.messages.iter().map(|m| m.content.len()).sum();
    assert!(
        user < 16_000,
        "the prompt carries clipped notes, not 30 KB ones: {user} bytes"
    );
    assert!(
        sent.messages[0].content.contains("note 1199:"),
        "the newest note is shown"
    );
}

#[tokio::test]
async fn results_the_budget_cut_stay_open_until_a_tick_shows_them() {
    // Issue 42, seed 003 #3: six long results at 2,048 tokens; only those
    // context 2 showed are closed, the rest wait for a later tick.
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    db.write(|s| {
        for i in 0..6 {
            s.add(
                &ProcessEntry {
                    name: "diary_search".into(),
                    command: serde_json::json!({ "query": format!("q{i}") }),
                    result: Some(format!(
                        "result {i}: {}",
                        "a long line of found text ".repeat(40)
                    )),
                    status: ProcessStatus::Ok,
                    ..Default::default()
                },
                1_000 + i,
            )
            .unwrap();
        }
    })
    .await
    .unwrap();
    let main = thinker("main", "Noted the results.");
    let setup = Setup {
        context_tokens: 2_048,
        ..Setup::default()
    };
    let maker = std::sync::Arc::new(ScriptMaker::default().with(main.clone()));
    let mut core = core_from(&db, maker, "main", clock(), setup).await;
    let done = core.tick().await.unwrap();
    assert_eq!(done.report.error, None);
    let shown = main
        .seen()
        .iter()
        .find(|r| is_main_call(r, Language::En))
        .map(|r| r.messages[0].content.clone())
        .unwrap();
    let rows = read(&db, all::<ProcessEntry>).await;
    let results: Vec<_> = rows
        .iter()
        .filter(|p| p.row.name == "diary_search")
        .collect();
    let closed = results
        .iter()
        .filter(|p| p.row.status == ProcessStatus::Close)
        .count();
    assert!(
        closed >= 1,
        "the newest result was shown and closed: {shown}"
    );
    assert!(closed < 6, "the budget cut some: {shown}");
    for p in &results {
        let text = p.row.result.as_deref().unwrap();
        let head = &text[..9];
        assert_eq!(
            p.row.status == ProcessStatus::Close,
            shown.contains(head),
            "{head}: closed exactly when shown"
        );
    }
}

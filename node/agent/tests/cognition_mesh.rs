//! `mesh_interact`: the core's explicit question to friends. Posted as a
//! note through the asker, opened as a running process, filled with the
//! friends' answers (notes replying to it) at the next tick and shown in
//! context 2; unanswered for a day, it times out; with no way to friends
//! the command says so.

mod core_support;

use std::sync::{Arc, Mutex};

use core_support::*;
use porfiry_agent::cognition::mesh_interact::{MESH_ANSWER_WAIT, MESH_INTERACT_PROCESS};
use porfiry_agent::cognition::{CognitiveCore, FriendsAsker};
use porfiry_protocol::ItemId;
use porfiry_skills::llm::ModelRequest;
use porfiry_skills::{BoxFuture, Clock, Language, ManualClock};
use porfiry_storage::db::Db;
use porfiry_storage::{ListQuery, Note, NoteSource, ProcessEntry, ProcessStatus, Store, Stored};

/// Posts the question as a published note (with an item id), as the node does.
struct StoreAsker {
    db: Db,
    asked: Mutex<Vec<String>>,
}

impl FriendsAsker for StoreAsker {
    fn ask<'a>(&'a self, text: String) -> BoxFuture<'a, Result<i64, String>> {
        Box::pin(async move {
            self.asked.lock().unwrap().push(text.clone());
            self.db
                .write(move |s| {
                    s.add(
                        &Note {
                            text,
                            source: NoteSource::Llm,
                            item_id: Some(ItemId::of_envelope(b"the question")),
                            ..Default::default()
                        },
                        1,
                    )
                })
                .await
                .map_err(|e| e.to_string())?
                .map_err(|e| e.to_string())
        })
    }
}

fn asking(replies: &'static [&'static str]) -> (Arc<ScriptLlm>, Arc<Mutex<Vec<String>>>) {
    let prompts = Arc::new(Mutex::new(Vec::new()));
    let seen = prompts.clone();
    let llm = ScriptLlm::new("main", move |req: &ModelRequest| {
        if is_main_call(req, Language::En) {
            let mut seen = seen.lock().unwrap();
            seen.push(req.messages.iter().map(|m| m.content.clone()).collect());
            Ok(replies[(seen.len() - 1).min(replies.len() - 1)].to_owned())
        } else {
            Ok(r#"{"novel": "yes", "novelty": 0.7}"#.into())
        }
    });
    (llm, prompts)
}

async fn core_with_asker(
    db: &Db,
    main: Arc<ScriptLlm>,
    clock: ManualClock,
    asker: Option<Arc<dyn FriendsAsker>>,
) -> CognitiveCore {
    let setup = Setup {
        asker,
        ..Setup::default()
    };
    core_from(
        db,
        Arc::new(ScriptMaker::default().with(main)),
        "main",
        clock,
        setup,
    )
    .await
}

fn processes(s: &Store) -> Vec<Stored<ProcessEntry>> {
    s.list::<ProcessEntry>(&ListQuery {
        limit: Some(100),
        oldest_first: true,
        ..Default::default()
    })
    .unwrap()
}

async fn question(db: &Db) -> Stored<ProcessEntry> {
    db.read(|s| {
        processes(s)
            .into_iter()
            .find(|p| p.row.name == MESH_INTERACT_PROCESS)
            .expect("the question's process")
    })
    .await
    .unwrap()
}

#[tokio::test]
async fn a_question_to_friends_gets_its_answers_into_process_log_and_context_2() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    let (main, prompts) = asking(&[
        "TOOL_CALL: mesh_interact|what would you explore now?",
        "Waiting for friends.",
        "Reading the answers.",
    ]);
    let asker = Arc::new(StoreAsker {
        db: db.clone(),
        asked: Mutex::new(Vec::new()),
    });
    let clock = start_clock();
    let main_seen = main.clone();
    let mut core = core_with_asker(&db, main, clock.clone(), Some(asker.clone())).await;
    let first = core.tick().await.unwrap();
    assert_eq!(first.report.executed(), 1, "{:?}", first.report.commands);
    assert_eq!(
        *asker.asked.lock().unwrap(),
        ["what would you explore now?"]
    );
    let open = question(&db).await;
    assert_eq!(open.row.status, ProcessStatus::Warning);
    assert!(open.row.result.is_none(), "running");
    // Nothing came yet: the next tick leaves it running.
    clock.advance_ms(60_000);
    core.tick().await.unwrap();
    assert!(question(&db).await.row.result.is_none());
    // A friend answers (a note merged from the mesh replying to it).
    db.write(|s| {
        s.add(
            &Note {
                text: "clubs! nobody has mapped them".into(),
                reply_to: Some(ItemId::of_envelope(b"the question")),
                origin_author: Some("bob".into()),
                origin_item_id: Some(ItemId::of_envelope(b"bob's answer")),
                ..Default::default()
            },
            2,
        )
    })
    .await
    .unwrap()
    .unwrap();
    clock.advance_ms(60_000);
    core.tick().await.unwrap();
    let answered = question(&db).await;
    assert_eq!(
        answered.row.result.as_deref(),
        Some("bob: clubs! nobody has mapped them")
    );
    let prompts = prompts.lock().unwrap().clone();
    assert!(
        prompts[2].contains(&format!(
            "#{} mesh_interact [ok] bob: clubs! nobody has mapped them",
            answered.id
        )),
        "{}",
        prompts[2]
    );
    let system = &main_seen.seen()[0].system;
    assert!(
        system.contains("mesh — mesh_interact|question: ask your friends"),
        "context 0 lists the command: {system}"
    );
}

#[tokio::test]
async fn an_unanswered_question_times_out_after_a_day() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    let (main, prompts) = asking(&["TOOL_CALL: mesh_interact|anyone?", "Still thinking."]);
    let asker = Arc::new(StoreAsker {
        db: db.clone(),
        asked: Mutex::new(Vec::new()),
    });
    let clock = start_clock();
    let mut core = core_with_asker(&db, main, clock.clone(), Some(asker)).await;
    core.tick().await.unwrap();
    let created = question(&db).await.created_ms;
    let wait = u64::try_from(MESH_ANSWER_WAIT.as_millis()).unwrap();
    clock.advance_ms(i64::try_from(created + wait - clock.now().unix_ms()).unwrap());
    core.tick().await.unwrap();
    let q = question(&db).await;
    let shown = format!(
        "#{} mesh_interact [timeout] no friend answered within 24 h",
        q.id
    );
    let second = prompts.lock().unwrap()[1].clone();
    assert!(second.contains(&shown), "{second}");
    assert_eq!(
        q.row.status,
        ProcessStatus::Close,
        "shown once, then closed"
    );
    assert!(q.row.result.unwrap().contains("no friend answered"));
}

#[tokio::test]
async fn without_a_way_to_friends_or_a_question_the_command_fails_and_asks_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    let (main, _) = asking(&["TOOL_CALL: mesh_interact|hello?\nTOOL_CALL: mesh_interact|"]);
    let mut core = core_with_asker(&db, main, start_clock(), None).await;
    core.tick().await.unwrap();
    let rows = db.read(processes).await.unwrap();
    assert!(
        rows.iter()
            .all(|p| p.row.name != MESH_INTERACT_PROCESS || p.row.status == ProcessStatus::Error)
    );
    let results: Vec<String> = rows.iter().filter_map(|p| p.row.result.clone()).collect();
    assert!(
        results.iter().any(|r| r.contains("cannot ask friends")),
        "{results:?}"
    );
    assert!(
        results.iter().any(|r| r.contains("needs a question")),
        "{results:?}"
    );
}

/// A friend's answer to the question, merged from the mesh.
async fn answer(db: &Db, text: &str) {
    let text = text.to_owned();
    db.write(move |s| {
        s.add(
            &Note {
                text,
                reply_to: Some(ItemId::of_envelope(b"the question")),
                origin_author: Some("bob".into()),
                origin_item_id: Some(ItemId::of_envelope(b"bob's answer")),
                ..Default::default()
            },
            2,
        )
    })
    .await
    .unwrap()
    .unwrap();
}

/// A fresh asker that posts questions as notes into `db`, as each start of
/// the node makes one.
fn store_asker(db: &Db) -> Option<Arc<dyn FriendsAsker>> {
    Some(Arc::new(StoreAsker {
        db: db.clone(),
        asked: Mutex::new(Vec::new()),
    }))
}

#[tokio::test]
async fn a_question_outlives_a_restart_and_gets_its_answers_after_it() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    let clock = start_clock();
    let asker = || store_asker(&db);
    let (main, _) = asking(&["TOOL_CALL: mesh_interact|who maps clubs?"]);
    let mut before = core_with_asker(&db, main, clock.clone(), asker()).await;
    before.tick().await.unwrap();
    drop(before);
    // The node restarts while the question waits.
    clock.advance_ms(60_000);
    let (main, prompts) = asking(&["Reading the answers."]);
    let mut after = core_with_asker(&db, main, clock.clone(), asker()).await;
    let waiting = question(&db).await;
    assert_eq!(
        (waiting.row.status, waiting.row.result.as_deref()),
        (ProcessStatus::Warning, None),
        "a restart is no reason to stop waiting for friends"
    );
    answer(&db, "clubs! nobody has").await;
    clock.advance_ms(60_000);
    after.tick().await.unwrap();
    let answered = question(&db).await;
    assert_eq!(
        answered.row.result.as_deref(),
        Some("bob: clubs! nobody has")
    );
    let shown = prompts.lock().unwrap()[0].clone();
    assert!(
        shown.contains(&format!("#{} mesh_interact [ok] bob:", answered.id)),
        "{shown}"
    );
}

#[tokio::test]
async fn a_question_past_its_deadline_at_a_restart_times_out_as_its_own() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    let clock = start_clock();
    let asker = || store_asker(&db);
    let (main, _) = asking(&["TOOL_CALL: mesh_interact|anyone?"]);
    let mut before = core_with_asker(&db, main, clock.clone(), asker()).await;
    before.tick().await.unwrap();
    drop(before);
    let created = question(&db).await.created_ms;
    let wait = u64::try_from(MESH_ANSWER_WAIT.as_millis()).unwrap();
    clock.advance_ms(i64::try_from(created + wait - clock.now().unix_ms()).unwrap());
    let (main, prompts) = asking(&["Still thinking."]);
    let mut after = core_with_asker(&db, main, clock.clone(), asker()).await;
    after.tick().await.unwrap();
    let q = question(&db).await;
    let first = prompts.lock().unwrap()[0].clone();
    assert!(
        first.contains(&format!(
            "#{} mesh_interact [timeout] no friend answered within 24 h",
            q.id
        )),
        "{first}"
    );
}

//! The write-ahead journal of a tick's commands (issue 46 §3). A tick
//! stopped while its commands run (its future dropped in the middle of a
//! command, as a shutdown leaves it; a kill leaves the same file) is
//! recorded when a core starts again on the database: under its own number,
//! with one process row per command — the result the journal kept, or a
//! warning that the node stopped while it ran or before it started — and
//! the next tick's context 2 shows those rows. A recorded tick leaves no
//! journal, and a start without one changes nothing. Real SQLite on disk,
//! a manual clock, a scripted model; the command the tick stops in is a
//! question to friends whose asker never answers.

mod core_support;

use std::sync::Arc;

use core_support::*;
use porfiry_agent::cognition::journal::{
    JournalOutcome, TICK_JOURNAL_CONFIG_KEY, TickJournal, command_interrupted, command_not_started,
    left,
};
use porfiry_agent::cognition::{CognitiveCore, FriendsAsker, Trace};
use porfiry_skills::{BoxFuture, Language};
use porfiry_storage::db::Db;
use porfiry_storage::{
    DiaryEntry, ProcessEntry, ProcessStatus, RecentResponse, Store, Stored, TickRecord,
};
use tokio::sync::Notify;

/// An asker that says it was asked and then never answers: the tick hangs
/// in its `mesh_interact` command until the test drops it.
struct HangingAsker(Arc<Notify>);

impl FriendsAsker for HangingAsker {
    fn ask<'a>(&'a self, _: String) -> BoxFuture<'a, Result<i64, String>> {
        self.0.notify_one();
        Box::pin(std::future::pending())
    }
}

/// A core on `db` whose main model answers with `replies` in turn, asking
/// friends through `asker`.
async fn core_asking(
    db: &Db,
    replies: &[&str],
    asker: Option<Arc<dyn FriendsAsker>>,
    trace: Trace,
) -> (CognitiveCore, Arc<std::sync::Mutex<Vec<String>>>) {
    let (main, prompts) = scripted(replies);
    let setup = Setup {
        asker,
        trace,
        ..Setup::default()
    };
    let maker = Arc::new(ScriptMaker::default().with(main));
    (
        core_from(db, maker, "main", start_clock(), setup).await,
        prompts,
    )
}

/// Runs one tick of a core whose reply is `reply` until its question to
/// friends hangs, then drops the tick there (the node stops); returns the
/// journal it left.
async fn stop_in_question(db: &Db, reply: &str) -> TickJournal {
    let asked = Arc::new(Notify::new());
    let asker: Arc<dyn FriendsAsker> = Arc::new(HangingAsker(asked.clone()));
    let (mut core, _) = core_asking(db, &[reply], Some(asker), Trace::off()).await;
    tokio::select! {
        done = core.tick() => panic!("the tick ended: {:?}", done.map(|d| d.report)),
        () = asked.notified() => {}
    }
    drop(core);
    read(db, |s| left(s).unwrap())
        .await
        .expect("a journal is left")
}

/// The process row of `tool`.
fn row_of(processes: &[Stored<ProcessEntry>], tool: &str) -> ProcessEntry {
    processes
        .iter()
        .find(|p| p.row.name == tool)
        .unwrap_or_else(|| panic!("no {tool} row in {processes:?}"))
        .row
        .clone()
}

#[tokio::test]
async fn a_tick_stopped_in_its_first_command_is_recorded_at_start_with_unknown_outcomes() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    let reply = "Asking first.\nTOOL_CALL: mesh_interact|what now?\nTOOL_CALL: diary_add|after the question|t";
    let journal = stop_in_question(&db, reply).await;
    assert_eq!(journal.tick, 1);
    assert_eq!(journal.model, "main");
    assert_eq!(journal.reply, reply);
    let tools: Vec<(&str, &str)> = journal
        .commands
        .iter()
        .map(|c| (c.tool.as_str(), c.args.as_str()))
        .collect();
    assert_eq!(
        tools,
        [
            ("mesh_interact", "what now?"),
            ("diary_add", "after the question|t")
        ]
    );
    assert!(journal.commands.iter().all(|c| c.outcome.is_none()));
    // Nothing of the tick is recorded yet.
    assert!(read(&db, all::<TickRecord>).await.is_empty());

    // The node starts again: the tick is recorded, numbering goes on.
    let (mut core, prompts) = core_asking(&db, &["Seen."], None, Trace::off()).await;
    assert_eq!(core.next_tick(), 2);
    assert_eq!(read(&db, |s| left(s).unwrap()).await, None);
    let ticks = read(&db, all::<TickRecord>).await;
    assert_eq!(ticks.len(), 1, "{ticks:?}");
    let tick = &ticks[0].row;
    assert_eq!(tick.tick, 1);
    assert_eq!(tick.commands_total, 2);
    assert_eq!(tick.commands_executed, 1, "the running one was started");
    assert_eq!(tick.llm_id.as_deref(), Some("main"));
    let responses = read(&db, all::<RecentResponse>).await;
    assert_eq!(Some(responses.last().unwrap().id), tick.response_id);
    assert_eq!(responses.last().unwrap().row.content, reply);
    let processes = read(&db, all::<ProcessEntry>).await;
    let question = row_of(&processes, "mesh_interact");
    assert_eq!(question.status, ProcessStatus::Warning);
    assert_eq!(
        question.result.as_deref(),
        Some(command_interrupted(Language::En))
    );
    let diary = row_of(&processes, "diary_add");
    assert_eq!(diary.status, ProcessStatus::Warning);
    assert_eq!(
        diary.result.as_deref(),
        Some(command_not_started(Language::En))
    );
    assert_eq!(diary.command["args"], "after the question|t");
    assert!(
        read(&db, all::<DiaryEntry>)
            .await
            .iter()
            .all(|d| d.row.text != "after the question"),
        "the command after the stop never ran"
    );

    // The next tick shows both rows in context 2 and closes them.
    core.tick().await.unwrap();
    let prompt = prompts.lock().unwrap()[0].clone();
    assert!(
        prompt.contains(command_interrupted(Language::En)),
        "{prompt}"
    );
    assert!(
        prompt.contains(command_not_started(Language::En)),
        "{prompt}"
    );
    let processes = read(&db, all::<ProcessEntry>).await;
    for tool in ["mesh_interact", "diary_add"] {
        assert_eq!(row_of(&processes, tool).status, ProcessStatus::Close);
    }
}

#[tokio::test]
async fn a_tick_stopped_after_one_of_two_commands_keeps_the_finished_result() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    let reply = "TOOL_CALL: diary_add|before the question|t\nTOOL_CALL: mesh_interact|what now?";
    let journal = stop_in_question(&db, reply).await;
    let written = match &journal.commands[0].outcome {
        Some(JournalOutcome { ok: true, output }) => output.clone(),
        other => panic!("the diary command's outcome: {other:?}"),
    };
    assert_eq!(journal.commands[1].outcome, None);

    let (core, _) = core_asking(&db, &["Seen."], None, Trace::off()).await;
    assert_eq!(core.next_tick(), 2);
    let ticks = read(&db, all::<TickRecord>).await;
    assert_eq!(ticks.len(), 1, "{ticks:?}");
    assert_eq!(ticks[0].row.commands_total, 2);
    assert_eq!(ticks[0].row.commands_executed, 2);
    let processes = read(&db, all::<ProcessEntry>).await;
    let diary = row_of(&processes, "diary_add");
    assert_eq!(diary.status, ProcessStatus::Ok);
    assert_eq!(diary.result.as_deref(), Some(written.as_str()));
    let question = row_of(&processes, "mesh_interact");
    assert_eq!(question.status, ProcessStatus::Warning);
    assert_eq!(
        question.result.as_deref(),
        Some(command_interrupted(Language::En))
    );
    let entries: Vec<Stored<DiaryEntry>> = read(&db, all::<DiaryEntry>)
        .await
        .into_iter()
        .filter(|d| d.row.text == "before the question")
        .collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert!(
        written.ends_with(&format!("#{}", entries[0].id)),
        "{written}"
    );
}

/// What a start may change: ticks, process rows, replies and settings.
async fn snapshot(db: &Db) -> (usize, usize, usize, Vec<String>) {
    read(db, |s| {
        (
            all::<TickRecord>(s).len(),
            all::<ProcessEntry>(s).len(),
            all::<RecentResponse>(s).len(),
            s.config_all().unwrap().into_keys().collect(),
        )
    })
    .await
}

#[tokio::test]
async fn a_start_without_a_journal_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    let before = snapshot(&db).await;
    let (core, _) = core_asking(&db, &["-"], None, Trace::off()).await;
    assert_eq!(core.next_tick(), 1);
    assert_eq!(snapshot(&db).await, before);
}

#[tokio::test]
async fn a_recorded_tick_leaves_no_journal_and_its_restart_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    // Each command's trace line comes after its outcome is journaled:
    // read the journal there through a second connection to the file.
    let path = tmp.path().join("node.db");
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let during = seen.clone();
    let trace = Trace::to(move |line| {
        if line.starts_with("[trace] command ") {
            let store = Store::open(&path).unwrap();
            during.lock().unwrap().push(left(&store).unwrap());
        }
    });
    let reply = "TOOL_CALL: diary_add|a whole tick|t";
    let (mut core, _) = core_asking(&db, &[reply], None, trace).await;
    let done = core.tick().await.unwrap();
    assert_eq!(done.report.executed(), 1, "{:?}", done.report.commands);
    let during = seen.lock().unwrap().clone();
    assert_eq!(during.len(), 1, "{during:?}");
    let journal = during[0].as_ref().expect("journaled while it ran");
    assert_eq!(journal.tick, 1);
    assert!(
        journal.commands[0].outcome.as_ref().is_some_and(|o| o.ok),
        "{journal:?}"
    );
    // Recorded: no journal left, neither decoded nor raw.
    assert_eq!(read(&db, |s| left(s).unwrap()).await, None);
    let raw = read(&db, |s| s.config_value(TICK_JOURNAL_CONFIG_KEY).unwrap()).await;
    assert_eq!(raw, None);
    drop(core);
    let before = snapshot(&db).await;
    let (core, _) = core_asking(&db, &["-"], None, Trace::off()).await;
    assert_eq!(core.next_tick(), 2);
    assert_eq!(snapshot(&db).await, before);
}

#[tokio::test]
async fn an_unreadable_journal_is_dropped_without_recording_anything() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    db.write(|s| {
        s.config_set(TICK_JOURNAL_CONFIG_KEY, "not a journal", 5)
            .unwrap()
    })
    .await
    .unwrap();
    let (core, _) = core_asking(&db, &["-"], None, Trace::off()).await;
    assert_eq!(core.next_tick(), 1);
    assert!(read(&db, all::<TickRecord>).await.is_empty());
    let raw = read(&db, |s| s.config_value(TICK_JOURNAL_CONFIG_KEY).unwrap()).await;
    assert_eq!(raw, None);
}

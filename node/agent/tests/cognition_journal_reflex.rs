//! The write-ahead journal of the anti-stagnation reflex's strategies
//! (issue 46 §3). A node stopped while the reflex applies its strategies
//! (the tick's future dropped inside a mechanism, as a shutdown leaves it;
//! a kill leaves the same file) records them when a core starts again on
//! the database: one `stagnation_strategy` row each, in the order they
//! were applied — the row a finished reflex writes for a strategy that
//! ended, a warning that the node stopped while it applied or before it
//! started for the others — and no tick twice: the tick itself was recorded
//! before its reflex, and numbering goes on after it. A reflex that
//! finished leaves no journal.
//!
//! Real SQLite on disk, a manual clock, a model repeating itself, and three
//! strategies: two cheap restructurings of the thinking (the first stall,
//! a repeated reply, takes one of them) and a question to friends of
//! another class, which the escalated stall combines with the other
//! restructuring. The question is where the node stops: its asker says it
//! was asked and never answers.

mod core_support;

use std::sync::{Arc, Mutex};

use core_support::*;
use porfiry_agent::cognition::journal::{
    JournalPart, STRATEGY_ROW, TICK_JOURNAL_CONFIG_KEY, TickJournal, command_interrupted,
    command_not_started, left,
};
use porfiry_agent::cognition::{CognitiveCore, FriendsAsker, Trace};
use porfiry_skills::cognition::strategy::Mechanism;
use porfiry_skills::{BoxFuture, Language, ManualClock};
use porfiry_storage::db::Db;
use porfiry_storage::{ProcessEntry, ProcessStatus, StagnationStrategy, Store, TickRecord};
use tokio::sync::Notify;

/// Ticks before the escalated stall must have come: a repeat on tick 2
/// (one strategy), its cooldown, the escalation after it (tick 5).
const MAX_TICKS: usize = 8;

/// The note id the answering asker gives.
const NOTE: i64 = 42;

/// Asks friends: answers at once, or, hanging, says it was asked and never
/// answers (the reflex hangs in its question until the test drops it).
struct Asker {
    hang: Option<Arc<Notify>>,
}

impl FriendsAsker for Asker {
    fn ask<'a>(&'a self, _: String) -> BoxFuture<'a, Result<i64, String>> {
        match &self.hang {
            Some(asked) => {
                asked.notify_one();
                Box::pin(std::future::pending())
            }
            None => Box::pin(async { Ok(NOTE) }),
        }
    }
}

/// A fresh node whose stall can choose only the test's three strategies;
/// the question to friends costs `ask_cost`: 0 applies it before the other
/// restructuring, 3 after it.
async fn node(dir: &std::path::Path, ask_cost: i64) -> Db {
    let db = fresh_db(dir);
    db.write(move |s| {
        for st in all::<StagnationStrategy>(s) {
            s.delete::<StagnationStrategy>(st.id).unwrap();
        }
        let row = |name: &str, class: &str, cost: i64, mechanism: Mechanism| StagnationStrategy {
            name: name.into(),
            class: class.into(),
            description: "-".into(),
            cost,
            tags: vec![mechanism.tag()],
            ..Default::default()
        };
        let meta = row("meta", "internal_restructuring", 1, Mechanism::MetaAnalysis);
        let why = row("why", "internal_restructuring", 2, Mechanism::Rationale);
        let ask = row("friends", "context_switch", ask_cost, Mechanism::AskFriends);
        for r in [meta, why, ask] {
            s.add(&r, 1).unwrap();
        }
    })
    .await
    .unwrap();
    db
}

/// A core on `db` whose model says the same every tick, asking friends
/// through `asker`; its main prompts.
async fn core_on(
    db: &Db,
    clock: &ManualClock,
    asker: Asker,
    trace: Trace,
) -> (CognitiveCore, Arc<Mutex<Vec<String>>>) {
    let (main, prompts) = scripted(&["Round and round."]);
    let setup = Setup {
        asker: Some(Arc::new(asker)),
        trace,
        ..Setup::default()
    };
    let maker = Arc::new(ScriptMaker::default().with(main));
    (
        core_from(db, maker, "main", clock.clone(), setup).await,
        prompts,
    )
}

/// Ticks until the reflex hangs in its question to friends, then drops the
/// tick there (the node stops): the tick it stopped in.
async fn stop_in_reflex(db: &Db, clock: &ManualClock) -> u64 {
    let asked = Arc::new(Notify::new());
    let hanging = Asker {
        hang: Some(asked.clone()),
    };
    let (mut core, _) = core_on(db, clock, hanging, Trace::off()).await;
    for _ in 0..MAX_TICKS {
        clock.advance_ms(60_000);
        let tick = core.next_tick();
        let stopped = tokio::select! {
            done = core.tick() => {
                done.unwrap();
                false
            }
            () = asked.notified() => true,
        };
        if stopped {
            drop(core);
            return tick;
        }
    }
    panic!("the stall never asked friends in {MAX_TICKS} ticks");
}

/// A strategy row as the model sees it.
type Row = (String, serde_json::Value, Option<String>, ProcessStatus);

/// The reflex's rows, in the order they were written.
fn strategy_rows(s: &Store) -> Vec<Row> {
    let mut rows: Vec<_> = all::<ProcessEntry>(s)
        .into_iter()
        .filter(|p| p.row.name == STRATEGY_ROW)
        .collect();
    rows.sort_by_key(|p| p.id);
    rows.into_iter()
        .map(|p| (p.row.name, p.row.command, p.row.result, p.row.status))
        .collect()
}

/// The recorded ticks' numbers.
fn tick_numbers(s: &Store) -> Vec<i64> {
    all::<TickRecord>(s)
        .into_iter()
        .map(|t| t.row.tick)
        .collect()
}

/// The journal as a finished reflex left it while a strategy's trace line
/// was written (read through a second connection to the file).
type Seen = Arc<Mutex<Vec<Option<TickJournal>>>>;

/// The reflex's rows of a node whose friends answer, after `ticks` ticks,
/// and the journal seen at each "applied" trace line; its database.
async fn finished(dir: &std::path::Path, ask_cost: i64, ticks: u64) -> (Db, Vec<Row>, Seen) {
    let db = node(dir, ask_cost).await;
    let path = dir.join("node.db");
    let seen: Seen = Arc::default();
    let during = seen.clone();
    let trace = Trace::to(move |line| {
        if line.starts_with("[trace] stagnation: applied ") {
            let store = Store::open(&path).unwrap();
            during.lock().unwrap().push(left(&store).unwrap());
        }
    });
    let clock = start_clock();
    let (mut core, _) = core_on(&db, &clock, Asker { hang: None }, trace).await;
    for _ in 0..ticks {
        clock.advance_ms(60_000);
        core.tick().await.unwrap();
        let raw = read(&db, |s| s.config_value(TICK_JOURNAL_CONFIG_KEY).unwrap()).await;
        assert_eq!(raw, None, "a finished tick and reflex leave no journal");
    }
    let rows = read(&db, strategy_rows).await;
    (db, rows, seen)
}

/// The mechanism a journaled strategy names.
fn mechanism(journal: &TickJournal, i: usize) -> String {
    let command: serde_json::Value = serde_json::from_str(&journal.commands[i].args).unwrap();
    command["mechanism"].as_str().unwrap().to_owned()
}

/// `row` as recovery writes it for a strategy the journal has no outcome for.
fn unfinished(row: &Row, result: &str) -> Row {
    (
        row.0.clone(),
        row.1.clone(),
        Some(result.to_owned()),
        ProcessStatus::Warning,
    )
}

#[tokio::test]
async fn a_journal_of_a_reflex_stopped_in_its_first_strategy_records_it_unknown_and_the_next_not_run()
 {
    let tmp = tempfile::tempdir().unwrap();
    let db = node(tmp.path(), 0).await;
    let clock = start_clock();
    let tick = stop_in_reflex(&db, &clock).await;

    // Left: the journal of the reflex, its tick recorded, none of its rows.
    let journal = read(&db, |s| left(s).unwrap())
        .await
        .expect("a journal is left");
    assert_eq!(journal.part, JournalPart::Stagnation);
    assert_eq!(journal.tick, tick);
    assert_eq!(
        (0..journal.commands.len())
            .map(|i| mechanism(&journal, i))
            .collect::<Vec<_>>(),
        ["ask_friends", "rationale"],
        "{journal:?}"
    );
    assert!(journal.commands.iter().all(|c| c.outcome.is_none()));
    let ticks: Vec<i64> = (1..=i64::try_from(tick).unwrap()).collect();
    assert_eq!(read(&db, tick_numbers).await, ticks);
    let before = read(&db, strategy_rows).await;
    assert_eq!(
        before.len(),
        1,
        "only the first stall's strategy: {before:?}"
    );

    // The node starts again: the strategies are recorded, no tick twice.
    let (mut core, prompts) = core_on(&db, &clock, Asker { hang: None }, Trace::off()).await;
    assert_eq!(core.next_tick(), tick + 1);
    assert_eq!(read(&db, |s| left(s).unwrap()).await, None);
    assert_eq!(read(&db, tick_numbers).await, ticks);
    let recovered = read(&db, strategy_rows).await;
    // Exactly what a reflex that finished writes, but for what the journal
    // could not know.
    let other = tempfile::tempdir().unwrap();
    let (_, reference, _) = finished(other.path(), 0, tick).await;
    assert_eq!(reference.len(), 3, "{reference:?}");
    assert_eq!(
        recovered,
        [
            reference[0].clone(),
            unfinished(&reference[1], command_interrupted(Language::En)),
            unfinished(&reference[2], command_not_started(Language::En)),
        ]
    );

    // The next tick is numbered on and shows both rows to the model.
    clock.advance_ms(60_000);
    assert_eq!(core.tick().await.unwrap().report.tick, tick + 1);
    let prompt = prompts.lock().unwrap()[0].clone();
    assert!(
        prompt.contains(command_interrupted(Language::En)),
        "{prompt}"
    );
    assert!(
        prompt.contains(command_not_started(Language::En)),
        "{prompt}"
    );
}

#[tokio::test]
async fn a_journal_of_a_reflex_stopped_in_its_second_strategy_keeps_the_first_ones_result() {
    let tmp = tempfile::tempdir().unwrap();
    let db = node(tmp.path(), 3).await;
    let clock = start_clock();
    let tick = stop_in_reflex(&db, &clock).await;
    let journal = read(&db, |s| left(s).unwrap())
        .await
        .expect("a journal is left");
    assert_eq!(
        (journal.part, journal.tick),
        (JournalPart::Stagnation, tick)
    );
    assert_eq!(mechanism(&journal, 0), "rationale");
    assert_eq!(mechanism(&journal, 1), "ask_friends");
    let done = journal.commands[0].outcome.clone().expect("it finished");
    assert!(done.ok, "{done:?}");
    assert_eq!(journal.commands[1].outcome, None);

    let (core, _) = core_on(&db, &clock, Asker { hang: None }, Trace::off()).await;
    assert_eq!(core.next_tick(), tick + 1);
    let other = tempfile::tempdir().unwrap();
    let (_, reference, _) = finished(other.path(), 3, tick).await;
    assert_eq!(reference.len(), 3, "{reference:?}");
    assert_eq!(reference[1].2.as_ref(), Some(&done.output));
    assert_eq!(
        read(&db, strategy_rows).await,
        [
            reference[0].clone(),
            reference[1].clone(),
            unfinished(&reference[2], command_interrupted(Language::En)),
        ]
    );
}

/// What a start may change: ticks, process rows and settings.
async fn snapshot(db: &Db) -> (Vec<i64>, usize, Vec<String>) {
    read(db, |s| {
        (
            tick_numbers(s),
            all::<ProcessEntry>(s).len(),
            s.config_all().unwrap().into_keys().collect(),
        )
    })
    .await
}

#[tokio::test]
async fn a_finished_reflex_journals_each_strategy_then_leaves_no_journal() {
    let tmp = tempfile::tempdir().unwrap();
    let ticks = 5;
    // `finished` checks that no tick left a journal.
    let (db, rows, seen) = finished(tmp.path(), 3, ticks).await;
    assert_eq!(rows.len(), 3, "{rows:?}");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 3, "one per applied strategy: {seen:?}");
    // While each strategy's line was written, the journal held its tick's
    // strategies with that one's outcome: what its row then said.
    let journals: Vec<TickJournal> = seen
        .into_iter()
        .map(|j| j.expect("journaled while the reflex ran"))
        .collect();
    assert!(journals.iter().all(|j| j.part == JournalPart::Stagnation));
    let first = &journals[0];
    assert_eq!((first.commands.len(), first.tick), (1, 2), "{first:?}");
    let last = &journals[2];
    assert_eq!(last.tick, journals[1].tick);
    assert_eq!(last.commands.len(), 2, "{last:?}");
    let journaled: Vec<Row> = [&first.commands[0], &last.commands[0], &last.commands[1]]
        .into_iter()
        .map(|c| {
            let outcome = c.outcome.clone().expect("applied");
            (
                c.tool.clone(),
                serde_json::from_str(&c.args).unwrap(),
                Some(outcome.output),
                ProcessStatus::Ok,
            )
        })
        .collect();
    // A row a later tick showed the model is closed since.
    let written: Vec<Row> = rows
        .into_iter()
        .map(|(name, command, result, status)| {
            let status = match status {
                ProcessStatus::Close => ProcessStatus::Ok,
                other => other,
            };
            (name, command, result, status)
        })
        .collect();
    assert_eq!(written, journaled);
    assert_eq!(
        journals[1].commands[1].outcome, None,
        "the second strategy was still to apply"
    );
    // A restart finds nothing to record.
    let before = snapshot(&db).await;
    let (core, _) = core_on(&db, &start_clock(), Asker { hang: None }, Trace::off()).await;
    assert_eq!(core.next_tick(), ticks + 1);
    assert_eq!(snapshot(&db).await, before);
}

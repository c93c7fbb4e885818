//! The file checks of `core_crash_seeded`: after each killed run, what the
//! node's database must hold (ticks, diary entries, their `process_log`
//! rows, the journal of a tick killed while its commands ran, or of its
//! anti-stagnation reflex killed while its strategies applied), kept in a
//! [`Ledger`] from run to run.

use std::collections::{BTreeMap, BTreeSet};

use porfiry_agent::cognition::journal::{
    JournalPart, STRATEGY_ROW, TickJournal, command_interrupted, left,
};
use porfiry_skills::Language;
use porfiry_storage::limits::MAX_LIST_LIMIT;
use porfiry_storage::{
    DiaryEntry, ListQuery, ProcessEntry, ProcessStatus, Record, Store, Stored, TickRecord,
};
use porfiry_tests::mesh_node::MeshNode;

use crate::{ENTRY, Seen};

/// Every row of `T`, oldest first.
fn all<T: Record>(store: &Store) -> Vec<Stored<T>> {
    let mut rows = Vec::new();
    loop {
        let page = store
            .list::<T>(&ListQuery {
                limit: Some(MAX_LIST_LIMIT),
                offset: u32::try_from(rows.len()).expect("few rows"),
                oldest_first: true,
                ..Default::default()
            })
            .expect("rows read");
        let done = page.len() < MAX_LIST_LIMIT as usize;
        rows.extend(page);
        if done {
            return rows;
        }
    }
}

/// What the file held at the last check, and what was acknowledged.
#[derive(Default)]
pub struct Ledger {
    /// Recorded ticks (1..=ticks).
    pub ticks: i64,
    /// The script's diary entries: id → text.
    pub diary: BTreeMap<i64, String>,
    /// The journal the last kill left (a tick killed while its commands
    /// ran): the next start records it.
    pub journal: Option<TickJournal>,
    /// Every tick number a run printed.
    pub acked_ticks: BTreeSet<i64>,
    /// Every diary row a run traced as written: id → text.
    pub acked_diary: BTreeMap<i64, String>,
}

/// What a run added, as one check found it.
pub struct Added {
    /// Ticks recorded, the journaled one included.
    pub ticks: i64,
    /// Script diary entries.
    pub entries: usize,
    /// Whether the run's start recorded a tick from the journal the kill
    /// before left (a reflex's journal adds strategy rows, not a tick).
    pub recovered: bool,
    /// Entries with their `process_log` row: text → row.
    pub rows: BTreeMap<String, ProcessEntry>,
}

/// The diary text of a `diary_add|TEXT|e2e` command's arguments.
pub fn entry_text(args: &str) -> &str {
    args.split('|').next().unwrap_or_default()
}

/// Whether `row` has `status`, or is closed (a tick showed it).
fn shown(row: &ProcessEntry, status: ProcessStatus) -> bool {
    row.status == status || row.status == ProcessStatus::Close
}

/// Checks the file after a run and moves the ledger on.
pub fn check(node: &MeshNode, ledger: &mut Ledger, seen: &Seen, at: &str) -> Added {
    let store = node.store();
    store
        .check_integrity()
        .unwrap_or_else(|e| panic!("{at}: {e}"));
    // Ticks: exactly 1..=N, the journaled tick recorded first under its
    // number, and the run went on from it.
    let ticks: Vec<Stored<TickRecord>> = all(&store);
    let numbers: Vec<i64> = ticks.iter().map(|t| t.row.tick).collect();
    let n = i64::try_from(numbers.len()).expect("few ticks");
    assert_eq!(numbers, (1..=n).collect::<Vec<_>>(), "{at}: ticks");
    assert!(
        n >= ledger.ticks,
        "{at}: {n} ticks, {} before",
        ledger.ticks
    );
    let left_before = ledger.journal.take();
    // A reflex's journal: its tick was recorded before it; the start adds
    // one strategy row per journaled strategy, in order, and no tick.
    if let Some(journal) = left_before
        .as_ref()
        .filter(|j| j.part == JournalPart::Stagnation)
    {
        let strategies: Vec<serde_json::Value> = all::<ProcessEntry>(&store)
            .into_iter()
            .filter(|p| p.row.name == STRATEGY_ROW)
            .map(|p| p.row.command)
            .collect();
        let journaled: Vec<serde_json::Value> = journal
            .commands
            .iter()
            .map(|c| serde_json::from_str(&c.args).expect("a strategy's command"))
            .collect();
        assert!(
            journaled.is_empty() || strategies.windows(journaled.len()).any(|w| w == journaled),
            "{at}: recovered strategies {journaled:?} not in {strategies:?}"
        );
    }
    let recovered = left_before.filter(|j| j.part == JournalPart::Commands);
    if let Some(journal) = &recovered {
        let tick = i64::try_from(journal.tick).expect("small");
        assert_eq!(tick, ledger.ticks + 1, "{at}: the journaled tick");
        let row = &ticks
            .get(usize::try_from(tick - 1).expect("small"))
            .unwrap_or_else(|| panic!("{at}: journaled tick {tick} not recorded"))
            .row;
        assert_eq!(
            row.commands_total as usize,
            journal.commands.len(),
            "{at}: recovered tick {tick}: {row:?}"
        );
    }
    let first = ledger.ticks + 1 + i64::from(recovered.is_some());
    let resumed: Vec<i64> = (first..).take(seen.ticks.len()).collect();
    assert_eq!(seen.ticks, resumed, "{at}: the run's tick lines");
    ledger.acked_ticks.extend(&seen.ticks);
    assert!(
        ledger.acked_ticks.last().is_none_or(|&t| t <= n),
        "{at}: printed tick lost: {:?} > {n}",
        ledger.acked_ticks.last()
    );
    // Diary: nothing there before or acknowledged missing, nothing doubled.
    let diary: BTreeMap<i64, String> = all::<DiaryEntry>(&store)
        .into_iter()
        .filter(|d| d.row.text.starts_with(ENTRY))
        .map(|d| (d.id, d.row.text))
        .collect();
    let texts: BTreeSet<&String> = diary.values().collect();
    assert_eq!(texts.len(), diary.len(), "{at}: doubled entry: {diary:?}");
    ledger.acked_diary.extend(seen.diary.iter().cloned());
    for (id, text) in ledger.acked_diary.iter().chain(&ledger.diary) {
        assert_eq!(diary.get(id), Some(text), "{at}: written entry #{id} lost");
    }
    // A tick's rows are all there or none: one diary_add row per command
    // the recorded ticks ran (a recovered one's included), none twice.
    let listed: Vec<ProcessEntry> = all::<ProcessEntry>(&store)
        .into_iter()
        .filter(|p| p.row.name == "diary_add")
        .map(|p| p.row)
        .collect();
    let ran: u32 = ticks.iter().map(|t| t.row.commands_executed).sum();
    assert_eq!(listed.len(), ran as usize, "{at}: command rows vs ticks");
    let rows: BTreeMap<String, ProcessEntry> = listed
        .iter()
        .map(|p| {
            let args = p.command["args"].as_str().unwrap_or_default();
            (entry_text(args).to_owned(), p.clone())
        })
        .collect();
    assert_eq!(rows.len(), listed.len(), "{at}: command recorded twice");
    // Each row's command wrote its entry, unless the row says the node
    // stopped while it ran.
    let interrupted = command_interrupted(Language::En);
    for (text, row) in &rows {
        if row.result.as_deref() != Some(interrupted) {
            assert!(texts.contains(text), "{at}: row without entry: {row:?}");
        }
    }
    // The recovered command's row says what the journal knew: the result
    // of a command journaled as finished, else that its outcome is unknown
    // (`close` once a tick of the run showed it).
    for command in recovered.iter().flat_map(|j| &j.commands) {
        let text = entry_text(&command.args);
        let row = rows
            .get(text)
            .unwrap_or_else(|| panic!("{at}: recovered command {text:?} has no row"));
        match &command.outcome {
            Some(outcome) => {
                let status = if outcome.ok {
                    ProcessStatus::Ok
                } else {
                    ProcessStatus::Error
                };
                assert!(shown(row, status), "{at}: {row:?}");
                assert_eq!(row.result.as_ref(), Some(&outcome.output), "{at}");
            }
            None => {
                assert!(shown(row, ProcessStatus::Warning), "{at}: {row:?}");
                assert_eq!(row.result.as_deref(), Some(interrupted), "{at}");
            }
        }
    }
    // The journal this kill left: the next tick's, none of it recorded, a
    // command it says finished has its entry; or the last tick's reflex's,
    // its strategies no diary entries.
    let journal = left(&store).unwrap_or_else(|e| panic!("{at}: {e}"));
    let mut journaled = BTreeSet::new();
    if let Some(j) = journal
        .as_ref()
        .filter(|j| j.part == JournalPart::Stagnation)
    {
        assert_eq!(j.tick, u64::try_from(n).expect("small"), "{at}: {j:?}");
    }
    if let Some(j) = journal.as_ref().filter(|j| j.part == JournalPart::Commands) {
        assert_eq!(j.tick, u64::try_from(n + 1).expect("small"), "{at}: {j:?}");
        for command in &j.commands {
            let text = entry_text(&command.args);
            assert!(!rows.contains_key(text), "{at}: journaled and recorded");
            if command.outcome.as_ref().is_some_and(|o| o.ok) {
                assert!(
                    texts.contains(&text.to_owned()),
                    "{at}: finished {text:?} without entry"
                );
            }
            journaled.insert(text.to_owned());
        }
    }
    // Every entry a command wrote belongs to a recorded tick with its row,
    // or to the journaled tick the next start records.
    for text in diary.values() {
        assert!(
            rows.contains_key(text) || journaled.contains(text),
            "{at}: entry {text:?} has no row and no journal"
        );
    }
    let added = Added {
        ticks: n - ledger.ticks,
        entries: diary.len() - ledger.diary.len(),
        recovered: recovered.is_some(),
        rows,
    };
    ledger.ticks = n;
    ledger.diary = diary;
    ledger.journal = journal;
    added
}

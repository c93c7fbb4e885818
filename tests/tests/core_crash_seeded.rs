//! End to end: SIGKILL at seeded points of the cognitive core's ticks
//! (issue 46 §3). A real `porfiry think` thinks over real HTTP with a
//! scripted model whose every main reply writes one diary entry of its own
//! text; it is killed `KILLS` times, each at a point drawn from a seeded
//! stream: while a main call is in flight, while the tick's evaluation is
//! in flight (the reply is in, its command not run), right after it printed
//! a tick line, or right after it traced a diary command as written. The
//! two in-flight points are held by the model server and fully
//! deterministic; the two printed ones are events the process itself gave.
//!
//! After every kill: `PRAGMA integrity_check` is ok; the recorded ticks
//! are exactly 1..=N (none lost, none twice); every tick line and every
//! diary id the process printed, and every entry there before, is still
//! there; no diary text is doubled; a tick's command rows are recorded
//! with it or not at all. A tick killed while its commands ran leaves its
//! write-ahead journal (tick N + 1, its command with the outcome once it
//! ended) and nothing else of its own; every diary entry is either a
//! recorded tick's, with its `process_log` row, or that journal's command's
//! (and there when the journal says the command finished). A held kill
//! point (before the tick's commands) leaves no journal.
//!
//! Each restart first records a journaled tick under its number, its
//! command's row `ok` with the journaled result, or `warning` saying the
//! node stopped while it ran when the journal has no outcome, then goes on
//! from the last recorded tick. At the end a clean run of `FINAL_TICKS`
//! ticks adds exactly its ticks and entries, and leaves every entry with
//! its row. The file checks are `core_crash_common`'s.

use std::collections::{BTreeMap, VecDeque};
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::Duration;

use porfiry_skills::Language;
use porfiry_skills::cognition::texts::prompt::core_system_prompt;
use porfiry_tests::mesh_node::MeshNode;
use porfiry_tests::{Reply, Rule, ScriptedLlm, When};
use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};

mod core_crash_common;
use core_crash_common::{Ledger, check, entry_text};

/// Kills, each in a run of its own (the issue's 50).
const KILLS: usize = 50;
/// The stream of kill points; a failure names the seed and round.
const SEED: u64 = 4603;
/// A kill lands in one of a run's first this many ticks: the first tick
/// after a restart is where a fault in resuming would show, the later ones
/// are a core that has been running.
const MAX_TICK: u64 = 3;
/// Ticks of the clean run at the end.
const FINAL_TICKS: u64 = 3;
/// Longest wait for any event: far above a debug build's tick (tens of
/// milliseconds), so it only bounds a hang.
const DEADLINE: Duration = Duration::from_secs(120);
/// How long a held request waits for its reply: longer than any wait of
/// the test, so only the kill ends it.
const HOLD: Duration = Duration::from_secs(3_600);
/// Last lines of a run kept to show when it fails.
const TAIL_LINES: usize = 60;
/// The diary text every entry of the script starts with.
const ENTRY: &str = "crash entry";
/// The evaluation the reflex calls get: novel, so no stagnation reflex
/// repeats a reply.
const EVALUATION: &str =
    r#"{"novel": "yes", "novelty": 0.9, "new_ideas": ["crash"], "tags": ["e2e"]}"#;

/// Where a run is killed; `k` counts from 1 within the run.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Point {
    /// The k-th main call is held by the server; killed once it arrives.
    MainCall(u64),
    /// The first evaluation call after the k-th main reply is held: the
    /// reply is in, its command waits for the evaluation.
    Evaluation(u64),
    /// Killed once the k-th tick line is read.
    TickLine(u64),
    /// Killed once the k-th `[trace] command diary_add|…` line is read:
    /// the entry is written and journaled as finished (the trace line
    /// follows the journal), the tick's record usually not yet.
    Command(u64),
}

impl Point {
    fn draw(rng: &mut ChaCha8Rng) -> Point {
        let k = 1 + rng.next_u64() % MAX_TICK;
        match rng.next_u64() % 4 {
            0 => Point::MainCall(k),
            1 => Point::Evaluation(k),
            2 => Point::TickLine(k),
            _ => Point::Command(k),
        }
    }

    fn kind(self) -> &'static str {
        match self {
            Point::MainCall(_) => "main call",
            Point::Evaluation(_) => "evaluation",
            Point::TickLine(_) => "tick line",
            Point::Command(_) => "command",
        }
    }

    /// Whether the server holds a request (the run stops there exactly).
    fn held(self) -> Option<u64> {
        match self {
            Point::MainCall(k) | Point::Evaluation(k) => Some(k),
            Point::TickLine(_) | Point::Command(_) => None,
        }
    }
}

/// What reaches the test from a run: its lines and the held request.
enum Event {
    Out(String),
    Err(String),
    /// One of the two pipes ended.
    Eof,
    /// The server holds the request of the run's kill point.
    Held,
}

/// The diary text of main reply `m` of round `round`.
fn entry(round: usize, m: u64) -> String {
    format!("{ENTRY} r{round} m{m}")
}

/// The first words of the core's system prompt mark the tick's main call.
fn main_call() -> When {
    let head: String = core_system_prompt(Language::En).chars().take(40).collect();
    When::system_contains(head)
}

/// A model for one run: each main reply writes its own diary entry; the
/// request of `point`, if it holds one, is reported and never answered.
fn model(round: usize, point: Option<Point>, events: &Sender<Event>) -> ScriptedLlm {
    let mains = Arc::new(AtomicU64::new(0));
    let held = Arc::new(AtomicBool::new(false));
    let hold_main = match point {
        Some(Point::MainCall(k)) => Some(k),
        _ => None,
    };
    let hold_evaluation = match point {
        Some(Point::Evaluation(k)) => Some(k),
        _ => None,
    };
    let (count, tx) = (mains.clone(), events.clone());
    let main = Reply::func(move |_| {
        let m = count.fetch_add(1, Ordering::SeqCst) + 1;
        let text = entry(round, m);
        let reply = Reply::text(format!("Noted {text}.\nTOOL_CALL: diary_add|{text}|e2e"));
        if hold_main == Some(m) {
            let _ = tx.send(Event::Held);
            return Reply::delayed(HOLD, reply);
        }
        reply
    });
    let tx = events.clone();
    let evaluation = Reply::func(move |_| {
        let reply = Reply::text(EVALUATION);
        if hold_evaluation == Some(mains.load(Ordering::SeqCst))
            && !held.swap(true, Ordering::SeqCst)
        {
            let _ = tx.send(Event::Held);
            return Reply::delayed(HOLD, reply);
        }
        reply
    });
    ScriptedLlm::start(vec![Rule::new(main_call(), main), Rule::always(evaluation)])
        .expect("the scripted model starts")
}

/// A running `porfiry think`, killed when dropped (a failing test leaves
/// no process behind).
struct Think(Child);

impl Drop for Think {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `porfiry think --trace` against `llm`; its lines come as events.
fn think(node: &MeshNode, llm: &ScriptedLlm, extra: &[&str], events: &Sender<Event>) -> Think {
    let url = llm.url();
    let mut child = node
        .command()
        .args([
            "think",
            "--trace",
            "--pause-secs",
            "0",
            "--llm-retries",
            "0",
        ])
        .args(["--llm-url", &url, "--llm-model", "scripted"])
        .args(extra)
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("porfiry think starts");
    let out = child.stdout.take().expect("piped");
    let err = child.stderr.take().expect("piped");
    reader(out, events.clone(), Event::Out);
    reader(err, events.clone(), Event::Err);
    Think(child)
}

fn reader(pipe: impl Read + Send + 'static, tx: Sender<Event>, wrap: fn(String) -> Event) {
    std::thread::spawn(move || {
        for line in BufReader::new(pipe).lines() {
            let Ok(line) = line else { break };
            let _ = tx.send(wrap(line));
        }
        let _ = tx.send(Event::Eof);
    });
}

/// What one run printed.
#[derive(Default)]
struct Seen {
    /// Tick numbers of its tick lines, in order.
    ticks: Vec<i64>,
    /// Diary rows its trace said were written: (id, text).
    diary: Vec<(i64, String)>,
    eofs: usize,
    held: bool,
    tail: VecDeque<String>,
}

impl Seen {
    fn note(&mut self, event: Event, at: &str) {
        match event {
            Event::Out(line) => {
                if let Some(tick) = tick_line(&line, at) {
                    self.ticks.push(tick);
                }
                self.keep(line);
            }
            Event::Err(line) => {
                if let Some(row) = diary_line(&line, at) {
                    self.diary.push(row);
                }
                self.keep(line);
            }
            Event::Eof => self.eofs += 1,
            Event::Held => self.held = true,
        }
    }

    fn keep(&mut self, line: String) {
        if self.tail.len() == TAIL_LINES {
            self.tail.pop_front();
        }
        self.tail.push_back(line);
    }

    /// Whether the run reached `point`.
    fn reached(&self, point: Point) -> bool {
        match point {
            Point::MainCall(_) | Point::Evaluation(_) => self.held,
            Point::TickLine(k) => self.ticks.len() as u64 >= k,
            Point::Command(k) => self.diary.len() as u64 >= k,
        }
    }

    fn next(&mut self, events: &Receiver<Event>, at: &str) {
        match events.recv_timeout(DEADLINE) {
            Ok(event) => self.note(event, at),
            Err(e) => panic!(
                "{at}: no event within {DEADLINE:?} ({e}); last lines:\n{}",
                self.last_lines()
            ),
        }
    }

    /// The run's last lines, stdout and stderr as they came.
    fn last_lines(&self) -> String {
        self.tail.iter().cloned().collect::<Vec<_>>().join("\n")
    }
}

/// The number of a `tick N: 1 commands, 1 ran, …` line; every tick of the
/// script runs its one command.
fn tick_line(line: &str, at: &str) -> Option<i64> {
    let (number, rest) = line.strip_prefix("tick ")?.split_once(": ")?;
    assert!(rest.starts_with("1 commands, 1 ran"), "{at}: {line}");
    Some(number.parse().unwrap_or_else(|_| panic!("{at}: {line}")))
}

/// `[trace] command diary_add|TEXT|e2e -> ok=true added: … #ID`.
fn diary_line(line: &str, at: &str) -> Option<(i64, String)> {
    let rest = line.strip_prefix("[trace] command diary_add|")?;
    let parsed = rest.split_once(" -> ok=true ").and_then(|(args, result)| {
        let text = args.split('|').next()?;
        let id = result.rsplit_once('#')?.1.parse().ok()?;
        Some((id, text.to_owned()))
    });
    Some(parsed.unwrap_or_else(|| panic!("{at}: diary_add not written: {line}")))
}

/// Runs `porfiry think` until `point` and kills it there; returns what it
/// printed, the lines read after the kill included.
fn killed_run(node: &MeshNode, round: usize, point: Point, at: &str) -> Seen {
    let (tx, events) = channel();
    let llm = model(round, Some(point), &tx);
    let mut run = think(node, &llm, &[], &tx);
    drop(tx);
    let mut seen = Seen::default();
    while !seen.reached(point) {
        assert!(
            seen.eofs < 2,
            "{at}: ended before {point:?}:\n{}",
            seen.last_lines()
        );
        seen.next(&events, at);
    }
    run.0.kill().expect("SIGKILL");
    run.0.wait().expect("reaped");
    while seen.eofs < 2 {
        seen.next(&events, at);
    }
    seen
}

/// What the kills left, for the closing line.
#[derive(Debug, Default)]
struct Tally {
    /// Kills by kind.
    kinds: BTreeMap<&'static str, usize>,
    /// Command kills that found the tick recorded already.
    command_recorded: usize,
    /// Command kills in the window between the command and the record:
    /// a journal with the command finished.
    command_journaled: usize,
    /// Kills of any kind that left a journal with a command unfinished.
    unfinished: usize,
    /// Journals a start recorded.
    recovered: usize,
}

#[test]
fn fifty_seeded_kills_mid_tick_lose_and_double_nothing() {
    let node = MeshNode::init("thinker");
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    let mut ledger = Ledger::default();
    let mut tally = Tally::default();
    for round in 0..KILLS {
        let point = Point::draw(&mut rng);
        let at = format!("seed {SEED} round {round} ({point:?})");
        let seen = killed_run(&node, round, point, &at);
        let added = check(&node, &mut ledger, &seen, &at);
        tally.recovered += usize::from(added.recovered);
        if let Some(k) = point.held() {
            // Held in tick k: ticks 1..k done whole (after the journaled
            // one), tick k wrote nothing (its command waits for the held
            // reply or evaluation) and left no journal.
            let done = i64::try_from(k - 1).expect("small") + i64::from(added.recovered);
            assert_eq!(added.ticks, done, "{at}: ticks");
            assert_eq!(added.entries, k as usize - 1, "{at}: entries");
            assert_eq!(seen.diary.len() as u64, k - 1, "{at}: traced entries");
            assert!(ledger.journal.is_none(), "{at}: {:?}", ledger.journal);
        }
        if let Point::Command(k) = point {
            // The k-th command was traced as written, after its outcome
            // was journaled: its tick is recorded with its row, or
            // journaled with the command finished.
            let text = &seen.diary[usize::try_from(k - 1).expect("small")].1;
            let journaled = ledger
                .journal
                .iter()
                .flat_map(|j| &j.commands)
                .find(|c| entry_text(&c.args) == text);
            match journaled {
                Some(command) => {
                    assert!(
                        command.outcome.as_ref().is_some_and(|o| o.ok),
                        "{at}: traced but not journaled as finished: {command:?}"
                    );
                    tally.command_journaled += 1;
                }
                None => {
                    assert!(added.rows.contains_key(text), "{at}: {text:?} lost");
                    tally.command_recorded += 1;
                }
            }
        }
        if ledger
            .journal
            .iter()
            .flat_map(|j| &j.commands)
            .any(|c| c.outcome.is_none())
        {
            tally.unfinished += 1;
        }
        *tally.kinds.entry(point.kind()).or_default() += 1;
    }
    eprintln!("{KILLS} kills: {tally:?}; {} ticks recorded", ledger.ticks);
    // Not vacuous: kills landed between a command and its tick's record
    // and a start recorded their journals (where kills land depends on
    // scheduling, so only one is required).
    assert!(
        tally.command_journaled >= 1,
        "no kill landed between a command and its record"
    );
    // The clean run: the journaled tick if one is left, FINAL_TICKS more
    // ticks, one entry each, nothing else, and no journal left.
    let at = format!("seed {SEED} clean run");
    let (tx, events) = channel();
    let llm = model(KILLS, None, &tx);
    let final_ticks = FINAL_TICKS.to_string();
    let mut run = think(&node, &llm, &["--ticks", final_ticks.as_str()], &tx);
    drop(tx);
    let mut seen = Seen::default();
    while seen.eofs < 2 {
        seen.next(&events, &at);
    }
    let status = run.0.wait().expect("reaped");
    assert!(status.success(), "{at}: {status}:\n{}", seen.last_lines());
    let added = check(&node, &mut ledger, &seen, &at);
    let ticks = FINAL_TICKS as i64 + i64::from(added.recovered);
    assert_eq!(added.ticks, ticks, "{at}");
    assert_eq!(added.entries, FINAL_TICKS as usize, "{at}");
    assert!(ledger.journal.is_none(), "{at}: {:?}", ledger.journal);
}

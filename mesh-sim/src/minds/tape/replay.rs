//! Reading a tape back. [`TapeReplay::load`] reads and checks every line
//! (the header's form and version; each call's form, world and mind against
//! the header) and [`TapeReplay::check`] compares the header with the run's
//! before anything runs; then every model-backed mind's call is answered
//! from it by world, mind, step and prompt hash. A call the tape has no
//! answer for is a mismatch: the first is kept, the mind gets an error,
//! and the world loop stops the run after that step with one line
//! ([`TapeReplay::mismatch`]). Calls still unasked when the run ends are a
//! mismatch too ([`TapeReplay::leftover`]).

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use super::{
    MAX_LINE_BYTES, MAX_TAPE_BYTES, TAPE_VERSION, TapeEntry, TapeError, TapeHeader, WorldKey,
};

/// Where a call is answered from: world, mind, step and prompt hash.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct CallKey {
    world: WorldKey,
    node: usize,
    tick: u64,
    prompt: String,
}

/// Answers not given yet, each key's in call order: (call, outcome).
type Answers = HashMap<CallKey, VecDeque<(u32, Result<String, String>)>>;

/// A tape being replayed.
#[derive(Debug)]
pub struct TapeReplay {
    path: PathBuf,
    header: TapeHeader,
    /// Answers not given yet.
    answers: Mutex<Answers>,
    /// The first call the tape had no answer for, in words.
    missed: Mutex<Option<String>>,
}

impl TapeReplay {
    /// Reads the tape at `path`; any malformed line, or a call of a world
    /// or mind the header does not list, is one line naming it.
    pub fn load(path: &Path) -> Result<TapeReplay, TapeError> {
        let io = |source| TapeError::Io {
            path: path.to_owned(),
            source,
        };
        let size = std::fs::metadata(path).map_err(io)?.len();
        let line_err = |line: usize, detail: String| TapeError::Line {
            path: path.to_owned(),
            line,
            detail,
        };
        if size > MAX_TAPE_BYTES {
            return Err(line_err(
                1,
                format!("the tape is {size} bytes; at most {MAX_TAPE_BYTES} are read"),
            ));
        }
        let text = std::fs::read_to_string(path).map_err(io)?;
        let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
        let Some((_, first)) = lines.next() else {
            return Err(line_err(1, "empty: no header".into()));
        };
        let header: TapeHeader = serde_json::from_str(first)
            .map_err(|e| line_err(1, format!("not a mesh-sim minds tape header: {e}")))?;
        if header.porfiry_minds_tape != TAPE_VERSION {
            return Err(line_err(
                1,
                format!(
                    "format version {}; this mesh-sim reads version {TAPE_VERSION}",
                    header.porfiry_minds_tape
                ),
            ));
        }
        let mut answers = Answers::new();
        for (n, line) in lines {
            if line.len() > MAX_LINE_BYTES {
                return Err(line_err(n, format!("longer than {MAX_LINE_BYTES} bytes")));
            }
            let entry: TapeEntry =
                serde_json::from_str(line).map_err(|e| line_err(n, e.to_string()))?;
            check_entry(&header, &entry).map_err(|d| line_err(n, d))?;
            let outcome = entry.outcome();
            answers
                .entry(CallKey {
                    world: entry.world(),
                    node: entry.node,
                    tick: entry.tick,
                    prompt: entry.prompt,
                })
                .or_default()
                .push_back((entry.call, outcome));
        }
        for queue in answers.values_mut() {
            queue.make_contiguous().sort_by_key(|(call, _)| *call);
        }
        Ok(TapeReplay {
            path: path.to_owned(),
            header,
            answers: Mutex::new(answers),
            missed: Mutex::new(None),
        })
    }

    /// The tape's header.
    pub fn header(&self) -> &TapeHeader {
        &self.header
    }

    /// Refuses a tape whose header differs from `expected` (the run's,
    /// [`TapeHeader::for_run`]), in one line naming the difference.
    pub fn check(&self, expected: &TapeHeader) -> Result<(), TapeError> {
        match self.header.differs_from(expected) {
            Some(detail) => Err(self.mismatch_error(detail)),
            None => Ok(()),
        }
    }

    /// The recorded outcome of `node`'s call with `prompt` at its step
    /// `tick` in `world`, taken off the tape; `None` (and the mismatch
    /// kept) when the tape holds none.
    pub(crate) fn answer(
        &self,
        world: WorldKey,
        node: usize,
        tick: u64,
        prompt: &str,
        model: &str,
    ) -> Option<Result<String, String>> {
        let key = CallKey {
            world,
            node,
            tick,
            prompt: prompt.to_owned(),
        };
        let found = self
            .answers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_mut(&key)
            .and_then(VecDeque::pop_front)
            .map(|(_, outcome)| outcome);
        if found.is_none() {
            let mut missed = self.missed.lock().unwrap_or_else(PoisonError::into_inner);
            if missed.is_none() {
                *missed = Some(format!(
                    "mind {node} at tick {tick} ({world}) asked model {model:?} prompt {prompt} \
                     and the tape holds no answer to it there"
                ));
            }
        }
        found
    }

    /// The first call the tape had no answer for, as an error.
    pub fn mismatch(&self) -> Option<TapeError> {
        let missed = self
            .missed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        missed.map(|d| self.mismatch_error(d))
    }

    /// Refuses a tape with calls the finished run never asked for.
    pub fn leftover(&self) -> Result<(), TapeError> {
        let answers = self.answers.lock().unwrap_or_else(PoisonError::into_inner);
        let left: Vec<&CallKey> = answers
            .iter()
            .filter(|(_, q)| !q.is_empty())
            .map(|(k, _)| k)
            .collect();
        let count: usize = answers.values().map(VecDeque::len).sum();
        let Some(first) = left
            .into_iter()
            .min_by_key(|k| (k.world, k.tick, k.node, k.prompt.clone()))
        else {
            return Ok(());
        };
        Err(self.mismatch_error(format!(
            "{count} recorded call(s) were never asked, the first by mind {} at tick {} ({})",
            first.node, first.tick, first.world
        )))
    }

    fn mismatch_error(&self, detail: String) -> TapeError {
        TapeError::Mismatch {
            path: self.path.clone(),
            detail,
        }
    }
}

/// A call line against its header: one of `reply` and `error`, a world
/// and a mind the header lists, and a hex SHA-256.
fn check_entry(header: &TapeHeader, entry: &TapeEntry) -> Result<(), String> {
    if entry.reply.is_some() == entry.error.is_some() {
        return Err("a call has exactly one of `reply` and `error`".into());
    }
    if !header.worlds.contains(&entry.world()) {
        return Err(format!(
            "a call of world ({}), which the header does not list",
            entry.world()
        ));
    }
    match header.minds.iter().find(|m| m.node == entry.node) {
        None => {
            return Err(format!(
                "a call of mind {}, which the header lists with no model",
                entry.node
            ));
        }
        Some(m) if m.model != entry.model => {
            return Err(format!(
                "mind {}'s call names model {:?}, the header {:?}",
                entry.node, entry.model, m.model
            ));
        }
        Some(_) => {}
    }
    if entry.prompt.len() != 64 || !entry.prompt.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!("prompt {:?} is not a SHA-256 in hex", entry.prompt));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{TapeMind, TapeWriter};
    use super::*;

    fn world() -> WorldKey {
        WorldKey {
            seed: 1,
            sharing: true,
        }
    }

    fn header() -> TapeHeader {
        TapeHeader {
            porfiry_minds_tape: TAPE_VERSION,
            scenario: "s".into(),
            worlds: vec![world()],
            minds: vec![TapeMind {
                node: 1,
                model: "m".into(),
            }],
        }
    }

    fn entry(call: u32, prompt: &str, reply: &str) -> TapeEntry {
        TapeEntry {
            seed: 1,
            sharing: true,
            node: 1,
            tick: 0,
            call,
            model: "m".into(),
            prompt: prompt.into(),
            reply: Some(reply.into()),
            error: None,
        }
    }

    fn write(path: &Path, entries: &[TapeEntry]) {
        let mut w = TapeWriter::create(path, &header()).unwrap();
        for e in entries {
            w.write(e).unwrap();
        }
        w.flush().unwrap();
    }

    #[test]
    fn answers_come_back_in_call_order_then_a_miss_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let p = "a".repeat(64);
        write(&path, &[entry(1, &p, "second"), entry(0, &p, "first")]);
        let tape = TapeReplay::load(&path).unwrap();
        tape.check(&header()).unwrap();
        assert_eq!(
            tape.answer(world(), 1, 0, &p, "m"),
            Some(Ok("first".into()))
        );
        assert!(tape.leftover().is_err(), "one left");
        assert_eq!(
            tape.answer(world(), 1, 0, &p, "m"),
            Some(Ok("second".into()))
        );
        tape.leftover().unwrap();
        assert!(tape.mismatch().is_none());
        assert_eq!(tape.answer(world(), 1, 0, &p, "m"), None);
        let line = tape.mismatch().unwrap().to_string();
        assert!(
            line.contains("mind 1 at tick 0") && line.contains(&p),
            "{line}"
        );
        assert_eq!(line.lines().count(), 1);
    }

    #[test]
    fn a_bad_line_is_named_by_its_number() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let p = "b".repeat(64);
        let mut other = entry(0, &p, "x");
        other.node = 2;
        let mut short = entry(0, "abc", "x");
        short.node = 1;
        let mut neither = entry(0, &p, "x");
        neither.reply = None;
        for (bad, want) in [
            (other, "mind 2"),
            (short, "SHA-256"),
            (neither, "exactly one"),
        ] {
            write(&path, &[entry(0, &p, "fine"), bad]);
            let e = TapeReplay::load(&path).unwrap_err().to_string();
            assert!(e.contains("line 3") && e.contains(want), "{want}: {e}");
        }
        std::fs::write(&path, "{\"hello\": 1}\n").unwrap();
        let e = TapeReplay::load(&path).unwrap_err().to_string();
        assert!(e.contains("line 1") && e.contains("header"), "{e}");
    }
}

//! The node's own record of the turns it showed API clients (pure): for
//! each answered turn, the tool turns between the user's message and the
//! answer (`TOOL_CALL` lines and their `TOOL_RESULT`s), which a client never
//! sees and so never sends back.
//!
//! When a session's history has to be rebuilt from what a client sent (an
//! edit, a regenerate, an evicted or new session, a failed turn), each
//! client turn whose user text and answer match a record gets its tool
//! turns back ([`crate::history::rebuild`]), so the model still sees the
//! results it worked from (seed 000: the history is never cleaned). Only a
//! turn the client changed loses them.
//!
//! Records live node-wide, not in a session, so they outlast a session's
//! eviction; they are keyed by the client's scope (its session key, or the
//! conversation scope of a client that names none) and the two texts, and
//! bounded in count and bytes, oldest dropped first. Each change is also
//! kept in the node's database ([`RecordChange`], applied by
//! [`crate::backend::NodeApi::keep_turn_record`] under the same bounds), and
//! a started API loads them back ([`TurnRecords::restore`]), so a restarted
//! node still rebuilds a client's history with its tool turns.

use std::collections::{HashMap, VecDeque};

use porfiry_skills::ChatMessage;
use sha2::{Digest, Sha256};

use crate::limits::{MAX_TURN_RECORD_BYTES, MAX_TURN_RECORDS};

/// A record's key: a SHA-256 of the scope and the two texts.
pub type Key = [u8; 32];

/// A record as the node keeps it: its key and its tool turns.
pub type KeptRecord = (Key, Vec<ChatMessage>);

/// What an insert changed, for the node's database to follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordChange {
    /// The record is kept under `key`, `bytes` in size.
    Kept {
        /// Its key.
        key: Key,
        /// Its tool turns.
        turns: Vec<ChatMessage>,
        /// Its size as budgeted.
        bytes: usize,
    },
    /// No record is kept under `key` (a turn without tool turns, or one
    /// over the whole budget).
    Dropped {
        /// Its key.
        key: Key,
    },
}

/// The records, oldest first.
#[derive(Debug, Default)]
pub struct TurnRecords {
    by_key: HashMap<Key, Vec<ChatMessage>>,
    order: VecDeque<Key>,
    bytes: usize,
}

fn key(scope: &str, user: &str, answer: &str) -> Key {
    let mut hash = Sha256::new();
    for part in [scope, user.trim(), answer.trim()] {
        hash.update((part.len() as u64).to_be_bytes());
        hash.update(part.as_bytes());
    }
    hash.finalize().into()
}

/// The size a record is budgeted by: its texts plus a little per message.
pub fn size(messages: &[ChatMessage]) -> usize {
    messages.iter().map(|m| m.content.len() + 16).sum()
}

impl TurnRecords {
    /// No records.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records the tool turns of the turn `user` → `answer` (nothing for a
    /// turn without tool turns, and nothing for one larger than the whole
    /// budget). A turn recorded again replaces the older record. Returns
    /// what changed, for the database.
    pub fn insert(
        &mut self,
        scope: &str,
        user: &str,
        answer: &str,
        tool_turns: Vec<ChatMessage>,
    ) -> RecordChange {
        let k = key(scope, user, answer);
        if self.put(k, tool_turns.clone()) {
            RecordChange::Kept {
                key: k,
                bytes: size(&tool_turns),
                turns: tool_turns,
            }
        } else {
            RecordChange::Dropped { key: k }
        }
    }

    /// Takes back a record the database kept (call it oldest first): the
    /// same bounds apply.
    pub fn restore(&mut self, key: Key, tool_turns: Vec<ChatMessage>) {
        self.put(key, tool_turns);
    }

    /// Puts `tool_turns` under `k`, dropping the oldest to make room;
    /// whether it is kept.
    fn put(&mut self, k: Key, tool_turns: Vec<ChatMessage>) -> bool {
        if let Some(old) = self.by_key.remove(&k) {
            self.bytes -= size(&old);
            self.order.retain(|o| *o != k);
        }
        let bytes = size(&tool_turns);
        if tool_turns.is_empty() || bytes > MAX_TURN_RECORD_BYTES {
            return false;
        }
        while self.order.len() >= MAX_TURN_RECORDS || self.bytes + bytes > MAX_TURN_RECORD_BYTES {
            let Some(oldest) = self.order.pop_front() else {
                break;
            };
            if let Some(gone) = self.by_key.remove(&oldest) {
                self.bytes -= size(&gone);
            }
        }
        self.bytes += bytes;
        self.order.push_back(k);
        self.by_key.insert(k, tool_turns);
        true
    }

    /// The tool turns of `user` → `answer`, if recorded.
    pub fn get(&self, scope: &str, user: &str, answer: &str) -> Option<&[ChatMessage]> {
        self.by_key
            .get(&key(scope, user, answer))
            .map(Vec::as_slice)
    }

    /// Records held.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// Bytes held (texts plus a little per message).
    #[cfg(test)]
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools(result: &str) -> Vec<ChatMessage> {
        vec![
            ChatMessage::assistant("TOOL_CALL: get_current_time"),
            ChatMessage::tool_result("get_current_time", result),
        ]
    }

    #[test]
    fn a_turn_is_found_by_scope_and_both_texts_trimmed() {
        let mut r = TurnRecords::new();
        r.insert("ann", "time?", "Noon.", tools("12:00"));
        assert_eq!(
            r.get("ann", " time? ", "Noon.\n"),
            Some(&tools("12:00")[..])
        );
        assert_eq!(r.get("bob", "time?", "Noon."), None);
        assert_eq!(r.get("ann", "time?", "Midnight."), None);
        r.insert("ann", "time?", "Noon.", tools("12:01"));
        assert_eq!(r.len(), 1);
        assert_eq!(r.get("ann", "time?", "Noon."), Some(&tools("12:01")[..]));
        r.insert("ann", "hi", "hello", Vec::new());
        assert_eq!(r.len(), 1, "a turn without tool turns is not recorded");
    }

    #[test]
    fn an_insert_says_what_to_keep_and_restored_records_are_found() {
        let mut r = TurnRecords::new();
        let kept = r.insert("ann", "time?", "Noon.", tools("12:00"));
        let RecordChange::Kept { key, turns, bytes } = kept else {
            panic!("{kept:?}")
        };
        assert_eq!(
            (turns.as_slice(), bytes),
            (&tools("12:00")[..], size(&tools("12:00")))
        );
        assert_eq!(
            r.insert("ann", "time?", "Noon.", Vec::new()),
            RecordChange::Dropped { key },
            "a record replaced by none is dropped from the database too"
        );
        let mut restarted = TurnRecords::new();
        restarted.restore(key, tools("12:00"));
        assert_eq!(
            restarted.get("ann", "time?", "Noon."),
            Some(&tools("12:00")[..])
        );
    }

    #[test]
    fn at_the_count_cap_the_oldest_record_goes() {
        let mut r = TurnRecords::new();
        for i in 0..=MAX_TURN_RECORDS {
            r.insert("s", &format!("q{i}"), "a", tools("x"));
        }
        assert_eq!(r.len(), MAX_TURN_RECORDS);
        assert_eq!(r.get("s", "q0", "a"), None);
        assert!(r.get("s", "q1", "a").is_some());
        assert!(r.get("s", &format!("q{MAX_TURN_RECORDS}"), "a").is_some());
    }

    #[test]
    fn at_the_byte_cap_old_records_make_room_and_an_oversized_one_is_not_kept() {
        let mut r = TurnRecords::new();
        let big = "x".repeat(MAX_TURN_RECORD_BYTES / 3);
        for i in 0..3 {
            r.insert("s", &format!("q{i}"), "a", tools(&big));
        }
        assert!(r.bytes() <= MAX_TURN_RECORD_BYTES);
        assert_eq!(r.len(), 2);
        assert_eq!(r.get("s", "q0", "a"), None);
        r.insert("s", "huge", "a", tools(&"y".repeat(MAX_TURN_RECORD_BYTES)));
        assert_eq!(r.get("s", "huge", "a"), None);
        assert_eq!(r.len(), 2);
    }
}

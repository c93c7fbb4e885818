//! The records the model asked to see (context 3, seed §2: "их список
//! должен быть передан явно … или выводе из предыдущих запросов LLM"): each
//! `diary_read`, `concepts_read` or `links_read` that ran adds its record,
//! newest last, at most [`MAX_REQUESTED_RECORDS`]; a deleted record drops
//! out when it is no longer found. Kept in `config` so a restart keeps them.

use serde::{Deserialize, Serialize};

use crate::cognition::limits::MAX_REQUESTED_RECORDS;

/// Which table a requested record is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RecordKind {
    /// `diary_entries`.
    Diary,
    /// `concepts`.
    Concept,
    /// `links`.
    Link,
}

impl RecordKind {
    /// The word used in context 3.
    pub fn as_str(self) -> &'static str {
        match self {
            RecordKind::Diary => "diary",
            RecordKind::Concept => "concept",
            RecordKind::Link => "link",
        }
    }

    /// The kind a read tool shows, if it is one.
    pub fn of_read_tool(tool: &str) -> Option<Self> {
        match tool {
            "diary_read" => Some(RecordKind::Diary),
            "concepts_read" => Some(RecordKind::Concept),
            "links_read" => Some(RecordKind::Link),
            _ => None,
        }
    }
}

/// One requested record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordRef {
    /// Its table.
    pub kind: RecordKind,
    /// Its id.
    pub id: i64,
}

/// The list kept between ticks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Requested {
    /// Oldest request first.
    pub records: Vec<RecordRef>,
}

impl Requested {
    /// Adds (or moves to the end) a record, dropping the oldest over the cap.
    pub fn add(&mut self, record: RecordRef) {
        self.records.retain(|r| *r != record);
        self.records.push(record);
        let over = self.records.len().saturating_sub(MAX_REQUESTED_RECORDS);
        self.records.drain(..over);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_re_read_record_moves_to_the_end_and_the_oldest_drop_out() {
        let mut r = Requested::default();
        for id in 0..(MAX_REQUESTED_RECORDS as i64 + 3) {
            r.add(RecordRef {
                kind: RecordKind::Diary,
                id,
            });
        }
        assert_eq!(r.records.len(), MAX_REQUESTED_RECORDS);
        assert_eq!(r.records[0].id, 3);
        r.add(RecordRef {
            kind: RecordKind::Diary,
            id: 5,
        });
        assert_eq!(r.records.last().unwrap().id, 5);
        assert_eq!(r.records.iter().filter(|x| x.id == 5).count(), 1);
    }

    #[test]
    fn only_the_three_read_tools_request_records() {
        assert_eq!(
            RecordKind::of_read_tool("diary_read"),
            Some(RecordKind::Diary)
        );
        assert_eq!(
            RecordKind::of_read_tool("links_read"),
            Some(RecordKind::Link)
        );
        assert_eq!(RecordKind::of_read_tool("diary_list"), None);
    }
}

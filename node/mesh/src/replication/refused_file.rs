//! `refused.json`: who the quotas refused (`porfiry_protocol::engine::Quotas`)
//! and how much, as the running daemon last wrote it, for `porfiry status`
//! (a separate process). Written atomically, at most every
//! [`REFUSED_FILE_EVERY_MS`] while refusals keep coming, and once more
//! when the daemon stops.

use std::path::Path;

use porfiry_protocol::engine::Refused;
use serde::{Deserialize, Serialize};

/// The file's name in the data dir.
pub const REFUSED_FILE_NAME: &str = "refused.json";

/// Least time between two writes while a flood is being refused: a flood
/// refuses thousands of items a second, and a status a few seconds old is
/// as good as a fresh one, while a write per refusal would cost a disk
/// write per item.
pub const REFUSED_FILE_EVERY_MS: u64 = 5_000;

/// One refused author.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefusedAuthor {
    /// The author's peer id.
    pub author: String,
    /// Items refused since the daemon started.
    pub items: u64,
    /// Their envelopes' bytes.
    pub bytes: u64,
    /// When the last one was refused (Unix ms).
    pub last_ms: u64,
}

impl From<Refused> for RefusedAuthor {
    fn from(r: Refused) -> RefusedAuthor {
        RefusedAuthor {
            author: r.author,
            items: r.items,
            bytes: r.bytes,
            last_ms: r.last_ms,
        }
    }
}

/// The file's content.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefusedFile {
    /// When the daemon wrote it (Unix ms).
    pub written_ms: u64,
    /// The refused authors, most items first.
    pub refused: Vec<RefusedAuthor>,
}

impl RefusedFile {
    /// Writes it to `path` atomically (a temporary file renamed over it).
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let tmp = path.with_extension("json.tmp");
        let text = serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?;
        std::fs::write(&tmp, text)?;
        std::fs::rename(&tmp, path)
    }

    /// Reads it; `None` when there is none or it does not parse.
    pub fn read(path: &Path) -> Option<RefusedFile> {
        serde_json::from_slice(&std::fs::read(path).ok()?).ok()
    }
}

/// When the file is next due: refusals not yet written, and when the last
/// write was.
#[derive(Debug, Default)]
pub(crate) struct RefusedSchedule {
    pending: bool,
    last_write_ms: Option<u64>,
}

impl RefusedSchedule {
    /// Something was refused.
    pub(crate) fn refused(&mut self) {
        self.pending = true;
    }

    /// When a write is due, if one is.
    pub(crate) fn due_ms(&self) -> Option<u64> {
        self.pending.then(|| {
            self.last_write_ms
                .map_or(0, |t| t.saturating_add(REFUSED_FILE_EVERY_MS))
        })
    }

    /// A write happened at `now_ms`.
    pub(crate) fn written(&mut self, now_ms: u64) {
        self.pending = false;
        self.last_write_ms = Some(now_ms);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_are_spaced_while_refusals_keep_coming() {
        let mut s = RefusedSchedule::default();
        assert_eq!(s.due_ms(), None);
        s.refused();
        assert_eq!(s.due_ms(), Some(0), "the first refusal is written at once");
        s.written(1_000);
        assert_eq!(s.due_ms(), None);
        s.refused();
        assert_eq!(s.due_ms(), Some(1_000 + REFUSED_FILE_EVERY_MS));
    }

    #[test]
    fn the_file_round_trips_and_a_foreign_one_reads_as_none() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join(REFUSED_FILE_NAME);
        let f = RefusedFile {
            written_ms: 5,
            refused: vec![RefusedAuthor {
                author: "12D3KooWx".into(),
                items: 3,
                bytes: 900,
                last_ms: 4,
            }],
        };
        f.write(&path).expect("writes");
        assert_eq!(RefusedFile::read(&path), Some(f));
        std::fs::write(&path, b"not json").expect("writes");
        assert_eq!(RefusedFile::read(&path), None);
    }
}

//! The pull's decisions, pure (no IO, no clock): whether to start, resume,
//! hold or refuse ([`plan`]), the running count of bytes against what the
//! friend said ([`Transfer`]), and whether the finished file may be kept
//! ([`Transfer::verdict`]). The client in `client.rs` does the reading and
//! writing around these.

use super::list::ListedModel;

/// Room left free on the disk after a pull: the node's own database needs
/// space for its WAL and a checkpoint (the same margin a full disk waits
/// for before taking items again), so a model never fills the disk to the
/// last byte.
pub const DISK_MARGIN_BYTES: u64 = porfiry_storage::disk::RESUME_FREE_BYTES;

/// What the conditions say about starting a pull now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    /// Fetch from `from` (0: from the start; more: resume the partial file).
    Fetch {
        /// The first byte to ask for.
        from: u64,
        /// Whether the partial file must be emptied first (it was longer
        /// than the listed file: not a beginning of it).
        restart: bool,
    },
    /// Wait: the connection is metered.
    Hold,
    /// Do not start: the disk lacks room.
    NoRoom {
        /// Bytes still to fetch plus the margin.
        needed: u64,
        /// Bytes free.
        free: u64,
    },
}

/// The plan for `listed`, with `have` bytes already in the partial file,
/// `free` bytes free on the disk (`None`: the OS cannot say, so try) and
/// the connection `metered`.
pub fn plan(listed: &ListedModel, have: u64, free: Option<u64>, metered: bool) -> Plan {
    let (from, restart) = if have > listed.bytes {
        (0, true)
    } else {
        (have, false)
    };
    let needed = (listed.bytes - from).saturating_add(DISK_MARGIN_BYTES);
    if let Some(free) = free
        && free < needed
    {
        return Plan::NoRoom { needed, free };
    }
    if metered {
        return Plan::Hold;
    }
    Plan::Fetch { from, restart }
}

/// One transfer's count of bytes, from its first offset to the listed size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transfer {
    at: u64,
    total: u64,
}

/// What the finished bytes are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Every byte came and the hash is the listed one: keep it.
    Keep,
    /// The stream ended before the listed size: keep the partial file for
    /// a resume.
    Short {
        /// Bytes held.
        at: u64,
        /// The listed size.
        total: u64,
    },
    /// Every byte came but the hash differs: throw the file away.
    Corrupt {
        /// The listed hash.
        expected: String,
        /// The hash of what came.
        got: String,
    },
}

/// The friend sent more than it said it would.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the friend sent {got} bytes past the {total} it listed")]
pub struct Overrun {
    /// Bytes beyond the listed size.
    pub got: u64,
    /// The listed size.
    pub total: u64,
}

impl Transfer {
    /// A transfer of a `total`-byte file starting at `from`.
    pub fn new(from: u64, total: u64) -> Self {
        Self { at: from, total }
    }

    /// Bytes held so far.
    pub fn at(&self) -> u64 {
        self.at
    }

    /// The listed size.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// How many of the next `n` received bytes to keep; an error if any go
    /// past the listed size (the partial file is then kept up to it).
    pub fn received(&mut self, n: u64) -> Result<u64, Overrun> {
        let room = self.total - self.at;
        if n > room {
            return Err(Overrun {
                got: n - room,
                total: self.total,
            });
        }
        self.at += n;
        Ok(n)
    }

    /// Whether every listed byte is here.
    pub fn complete(&self) -> bool {
        self.at == self.total
    }

    /// What to do with the file once the stream ended, its hash `got`
    /// (hex) against the listed `expected`.
    pub fn verdict(&self, expected: &str, got: &str) -> Verdict {
        if !self.complete() {
            return Verdict::Short {
                at: self.at,
                total: self.total,
            };
        }
        if expected.eq_ignore_ascii_case(got) {
            Verdict::Keep
        } else {
            Verdict::Corrupt {
                expected: expected.to_owned(),
                got: got.to_owned(),
            }
        }
    }
}

/// Whether `name` may be a file name in the models folder: a plain name (no
/// folders, not hidden), ASCII letters, digits, `.`, `-`, `_`, at most 128
/// characters (a friend's list names it; it must not escape the folder).
pub fn safe_file_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
}

/// The partial file's name for `listed`: its file name, the first 16 hex
/// digits of its hash and `.part`, so a partial file is only ever resumed
/// into the same content (a friend's file that changed starts afresh).
pub fn part_name(listed: &ListedModel) -> String {
    let short: String = listed.sha256.chars().take(16).collect();
    format!("{}.{short}.part", listed.file)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(bytes: u64) -> ListedModel {
        ListedModel {
            name: "smol".into(),
            file: "smol.gguf".into(),
            bytes,
            sha256: "ab".repeat(32),
            kind: "model".into(),
        }
    }

    const ROOMY: Option<u64> = Some(u64::MAX);

    #[test]
    fn a_pull_starts_at_zero_resumes_at_the_partial_length_and_restarts_a_longer_one() {
        let m = listed(1000);
        assert_eq!(
            plan(&m, 0, ROOMY, false),
            Plan::Fetch {
                from: 0,
                restart: false
            }
        );
        assert_eq!(
            plan(&m, 400, ROOMY, false),
            Plan::Fetch {
                from: 400,
                restart: false
            }
        );
        // Whole but not yet verified: fetch nothing more, then verify.
        assert_eq!(
            plan(&m, 1000, ROOMY, false),
            Plan::Fetch {
                from: 1000,
                restart: false
            }
        );
        assert_eq!(
            plan(&m, 1001, ROOMY, false),
            Plan::Fetch {
                from: 0,
                restart: true
            }
        );
    }

    #[test]
    fn too_little_room_refuses_before_starting_counting_only_what_is_left_and_the_margin() {
        let m = listed(100 << 20);
        let needed = (100 << 20) + DISK_MARGIN_BYTES;
        assert_eq!(
            plan(&m, 0, Some(needed - 1), false),
            Plan::NoRoom {
                needed,
                free: needed - 1
            }
        );
        assert!(matches!(
            plan(&m, 0, Some(needed), false),
            Plan::Fetch { from: 0, .. }
        ));
        // Half of it here already: half the room is enough.
        let half = 50 << 20;
        assert!(matches!(
            plan(&m, half, Some(half + DISK_MARGIN_BYTES), false),
            Plan::Fetch { .. }
        ));
        // An OS that cannot say lets it try.
        assert!(matches!(plan(&m, 0, None, false), Plan::Fetch { .. }));
        // No room wins over metered: waiting would not help.
        assert!(matches!(plan(&m, 0, Some(0), true), Plan::NoRoom { .. }));
    }

    #[test]
    fn a_metered_connection_holds_the_pull() {
        assert_eq!(plan(&listed(10), 0, ROOMY, true), Plan::Hold);
    }

    #[test]
    fn bytes_count_up_to_the_listed_size_and_no_further() {
        let mut t = Transfer::new(4, 10);
        assert_eq!(t.received(3), Ok(3));
        assert_eq!(t.at(), 7);
        assert_eq!(t.received(5), Err(Overrun { got: 2, total: 10 }));
        assert_eq!(t.at(), 7);
        assert_eq!(t.received(3), Ok(3));
        assert!(t.complete());
    }

    #[test]
    fn only_a_whole_file_with_the_listed_hash_is_kept() {
        let sha = "ab".repeat(32);
        let mut t = Transfer::new(0, 10);
        t.received(6).unwrap();
        assert_eq!(t.verdict(&sha, &sha), Verdict::Short { at: 6, total: 10 });
        t.received(4).unwrap();
        assert_eq!(t.verdict(&sha, &sha.to_uppercase()), Verdict::Keep);
        let other = "cd".repeat(32);
        assert_eq!(
            t.verdict(&sha, &other),
            Verdict::Corrupt {
                expected: sha.clone(),
                got: other
            }
        );
    }

    #[test]
    fn file_names_from_a_friend_cannot_leave_the_folder() {
        for ok in ["smol.gguf", "Qwen2.5-0.5B_q4.gguf", "a"] {
            assert!(safe_file_name(ok), "{ok}");
        }
        for bad in ["", "../x.gguf", "a/b.gguf", ".hidden", "a b", "é.gguf"] {
            assert!(!safe_file_name(bad), "{bad}");
        }
        assert!(!safe_file_name(&"a".repeat(129)));
        assert_eq!(part_name(&listed(1)), "smol.gguf.abababababababab.part");
    }
}

//! The byte form of a range-sync frame: a header byte, on the opening frame
//! the session key, then ranges, each an upper bound, a mode and the mode's
//! payload. Only encoding and decoding live here; what a range means is
//! `mod.rs`'s business.
//!
//! ```text
//! frame  = header [key: 16 bytes, opening frame only] range*
//! range  = bound mode payload
//! bound  = varint(0 = infinity | 1 + ts - previous ts) prefix_len:u8 prefix
//! mode   = 0 skip | 1 fingerprint (8 bytes) | 2 id list (varint n, n × 8 bytes)
//! ```
//!
//! Timestamps are written as the distance from the previous bound's, so a
//! bound costs a byte or two; the id prefix is as short as tells the two
//! items beside it apart (usually empty). Integers are little-endian.

use super::RangeSyncError;
use super::set::Bound;
use crate::item::id::ItemId;

/// Header of a frame that opens a session and carries its key.
pub(super) const HEADER_OPENING: u8 = 0x71;
/// Header of every later frame, both ways.
pub(super) const HEADER_CONTINUE: u8 = 0x70;

const MODE_SKIP: u8 = 0;
const MODE_FINGERPRINT: u8 = 1;
const MODE_ID_LIST: u8 = 2;

/// Bytes of a short id and of a fingerprint on the wire.
pub(super) const HASH_BYTES: usize = 8;

/// Longest a varint of a `u64` can be.
const MAX_VARINT_BYTES: usize = 10;

/// Most bytes one range can take besides an id list's ids: a bound (varint,
/// length byte, 32-byte prefix), the mode and a fingerprint or count.
pub(super) const MAX_RANGE_OVERHEAD: usize = MAX_VARINT_BYTES + 1 + 32 + 1 + MAX_VARINT_BYTES;

/// What a range says about the items below its bound.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Mode {
    /// Nothing to do there (equal, or already settled).
    Skip,
    /// The sum of the sender's keyed item hashes there.
    Fingerprint(u64),
    /// The sender's short ids there, in its order.
    IdList(Vec<u64>),
}

/// Writes one frame.
pub(super) struct Writer {
    buf: Vec<u8>,
    last_ts: u64,
}

impl Writer {
    pub(super) fn new(header: u8) -> Self {
        Writer {
            buf: vec![header],
            last_ts: 0,
        }
    }

    pub(super) fn key(&mut self, key: [u8; 16]) {
        self.buf.extend_from_slice(&key);
    }

    pub(super) fn len(&self) -> usize {
        self.buf.len()
    }

    /// Where the frame stands now, to go back to with `rewind`.
    pub(super) fn mark(&self) -> (usize, u64) {
        (self.buf.len(), self.last_ts)
    }

    /// Drops everything written since `mark`.
    pub(super) fn rewind(&mut self, (len, last_ts): (usize, u64)) {
        self.buf.truncate(len);
        self.last_ts = last_ts;
    }

    /// True if nothing follows the header: the sender has nothing to ask.
    pub(super) fn is_empty(&self) -> bool {
        self.buf.len() == 1
    }

    pub(super) fn bound(&mut self, b: &Bound) {
        if b.is_infinite() {
            varint(&mut self.buf, 0);
        } else {
            // Bounds in a frame never go back, so the distance is ≥ 0;
            // `+ 1` keeps 0 for infinity (`ts` < u64::MAX here).
            varint(&mut self.buf, b.ts - self.last_ts + 1);
            self.last_ts = b.ts;
        }
        let prefix = b.prefix();
        self.buf.push(prefix.len() as u8);
        self.buf.extend_from_slice(prefix);
    }

    pub(super) fn skip(&mut self, b: &Bound) {
        self.bound(b);
        self.buf.push(MODE_SKIP);
    }

    pub(super) fn fingerprint(&mut self, b: &Bound, fp: u64) {
        self.bound(b);
        self.buf.push(MODE_FINGERPRINT);
        self.buf.extend_from_slice(&fp.to_le_bytes());
    }

    pub(super) fn id_list(&mut self, b: &Bound, ids: impl ExactSizeIterator<Item = u64>) {
        self.bound(b);
        self.buf.push(MODE_ID_LIST);
        varint(&mut self.buf, ids.len() as u64);
        for id in ids {
            self.buf.extend_from_slice(&id.to_le_bytes());
        }
    }

    pub(super) fn finish(self) -> Vec<u8> {
        self.buf
    }
}

fn varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

/// Reads one frame, refusing anything malformed with what was wrong.
pub(super) struct Reader<'a> {
    rest: &'a [u8],
    last_ts: u64,
    /// An infinite bound was read: it covers everything, so it must close
    /// the frame. (A bound after it could go back in time, and an answer
    /// echoing it would then write a negative distance: issue 46, found by
    /// the `range_sync` fuzz target.)
    ended: bool,
}

impl<'a> Reader<'a> {
    /// Reads the header; returns the reader and the key if it opens.
    pub(super) fn open(frame: &'a [u8]) -> Result<(Self, Option<[u8; 16]>), RangeSyncError> {
        let (&header, rest) = frame.split_first().ok_or(RangeSyncError::Empty)?;
        let mut r = Reader {
            rest,
            last_ts: 0,
            ended: false,
        };
        match header {
            HEADER_CONTINUE => Ok((r, None)),
            HEADER_OPENING => {
                let key = r.take::<16>("session key")?;
                Ok((r, Some(key)))
            }
            other => Err(RangeSyncError::Version(other)),
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    fn take<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], RangeSyncError> {
        if self.rest.len() < N {
            return Err(RangeSyncError::Truncated(what));
        }
        let (head, rest) = self.rest.split_at(N);
        self.rest = rest;
        let mut out = [0u8; N];
        out.copy_from_slice(head);
        Ok(out)
    }

    fn varint(&mut self, what: &'static str) -> Result<u64, RangeSyncError> {
        let mut v: u64 = 0;
        for i in 0..MAX_VARINT_BYTES {
            let [b] = self.take::<1>(what)?;
            let part = u64::from(b & 0x7f);
            if i == MAX_VARINT_BYTES - 1 && b > 1 {
                return Err(RangeSyncError::Malformed("varint longer than 64 bits"));
            }
            v |= part << (7 * i);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(RangeSyncError::Malformed("varint longer than 64 bits"))
    }

    /// The next range's bound.
    pub(super) fn bound(&mut self) -> Result<Bound, RangeSyncError> {
        if self.ended {
            return Err(RangeSyncError::Malformed(
                "a range after the infinite bound",
            ));
        }
        let delta = self.varint("bound")?;
        let ts = if delta == 0 {
            self.ended = true;
            u64::MAX
        } else {
            let ts = self
                .last_ts
                .checked_add(delta - 1)
                .filter(|&t| t != u64::MAX)
                .ok_or(RangeSyncError::Malformed("bound timestamp overflows"))?;
            self.last_ts = ts;
            ts
        };
        let [len] = self.take::<1>("bound")?;
        let len = usize::from(len);
        if len > 32 {
            return Err(RangeSyncError::Malformed("bound prefix longer than an id"));
        }
        if self.rest.len() < len {
            return Err(RangeSyncError::Truncated("bound prefix"));
        }
        let (prefix, rest) = self.rest.split_at(len);
        self.rest = rest;
        let mut id = [0u8; 32];
        id[..len].copy_from_slice(prefix);
        Ok(Bound::new(ts, ItemId(id), len))
    }

    /// The mode and payload after a bound.
    pub(super) fn mode(&mut self) -> Result<Mode, RangeSyncError> {
        let [mode] = self.take::<1>("mode")?;
        match mode {
            MODE_SKIP => Ok(Mode::Skip),
            MODE_FINGERPRINT => Ok(Mode::Fingerprint(u64::from_le_bytes(
                self.take::<HASH_BYTES>("fingerprint")?,
            ))),
            MODE_ID_LIST => {
                let n = self.varint("id list count")?;
                // The count comes from the friend: the frame must hold that
                // many ids before room is made for them.
                if n > (self.rest.len() / HASH_BYTES) as u64 {
                    return Err(RangeSyncError::Truncated("id list"));
                }
                let mut ids = Vec::with_capacity(n as usize);
                for _ in 0..n {
                    ids.push(u64::from_le_bytes(self.take::<HASH_BYTES>("id list")?));
                }
                Ok(Mode::IdList(ids))
            }
            other => Err(RangeSyncError::Mode(other)),
        }
    }
}

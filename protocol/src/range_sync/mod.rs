//! Range-based set reconciliation with short keyed ids: how two friends
//! find, in a round or two, which items one holds that the other lacks.
//!
//! Both sides sort their set by `(created_ms, id)`. The initiator opens
//! with the whole range cut in `BUCKETS` parts, each sent as a fingerprint;
//! the other side answers every part whose fingerprint differs from its
//! own, cut again into fingerprints if it is large, or listed id by id if
//! it holds fewer than `ID_LIST_BELOW` items there. Parts that match are
//! skipped. The initiator, given a list, knows the difference there: what
//! it holds that the list lacks (`have`, full ids) and what the list holds
//! that it lacks (`need`, short ids). Recent items differ most and sort
//! together, so the difference is usually found in one round trip.
//!
//! This is the scheme of negentropy (which the engine used before), with
//! two changes that matter on the wire, where id lists were most of the
//! catch-up bytes (mesh-sim `city`, docs/wire.md):
//! - **Short ids.** An id list carries 8-byte ids, not 32: the item id's
//!   SipHash-2-4 under a key the initiator picks per session (sent in the
//!   opening frame). A collision between two items of one range (about
//!   2⁻⁶⁴ per pair) hides one difference for one session; the next session
//!   has another key. Hiding an item on purpose would take finding another
//!   id with the same 64-bit keyed hash, about 2⁶⁴ tries, again for every
//!   session.
//! - **Keyed 8-byte fingerprints.** A range's fingerprint is the wrapping
//!   sum of its items' short ids, so after one pass over the set any range's
//!   fingerprint is a subtraction.
//!
//! Frames stay under a size limit: a side whose answer would outgrow it
//! stops there and sends one fingerprint for everything after the last
//! range it wrote, which the next round takes up.

mod frame;
mod set;

pub use set::SyncSet;

use frame::{
    HASH_BYTES, HEADER_CONTINUE, HEADER_OPENING, MAX_RANGE_OVERHEAD, Mode, Reader, Writer,
};
use set::Bound;

use crate::item::id::ItemId;

/// Parts a differing range is cut into. Sixteen fingerprints cost about
/// 200 bytes; fewer parts mean longer id lists for the same difference,
/// more parts a larger opening for every session, most of which find
/// nothing (mesh-sim `city`: 8 and 32 both cost more bytes than 16).
pub const BUCKETS: usize = 16;

/// A range with fewer items than this is listed rather than cut: 32 short
/// ids are 256 bytes, about what cutting it would cost in fingerprints and
/// a round trip more.
pub const ID_LIST_BELOW: usize = 2 * BUCKETS;

/// Smallest frame limit honoured, so every frame has room for its header,
/// the key and a few ranges (a smaller limit could not make progress).
pub const MIN_FRAME_BYTES: usize = 1024;

/// Why a frame was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RangeSyncError {
    /// Zero bytes.
    #[error("range-sync frame is empty")]
    Empty,
    /// Not a frame of this scheme (negentropy's start with 0x61).
    #[error("range-sync frame has unknown header byte {0:#04x} (this node speaks 0x70/0x71)")]
    Version(u8),
    /// The frame ends inside a field.
    #[error("range-sync frame is truncated in its {0}")]
    Truncated(&'static str),
    /// A field is out of range.
    #[error("range-sync frame is malformed: {0}")]
    Malformed(&'static str),
    /// An unknown range mode.
    #[error("range-sync frame has unknown range mode {0}")]
    Mode(u8),
    /// The opening frame came twice, or a later frame came first.
    #[error("range-sync frame out of order: {0}")]
    Order(&'static str),
}

/// A short id: an item id's keyed hash for one session.
pub type ShortId = u64;

/// One side of one session.
#[derive(Debug)]
pub struct Reconciler {
    set: SyncSet,
    initiator: bool,
    keyed: bool,
    key: [u8; 16],
    frame_limit: usize,
    /// The initiator's items already reported in `have`, one bit per item
    /// of the sorted set. A round cut short by the frame limit hands back
    /// one fingerprint for all that follows, ranges settled earlier
    /// included; when that is cut again, their items are compared a second
    /// time, and must not be sent twice.
    reported: Vec<u64>,
}

impl Reconciler {
    /// The side that starts, with its set and the session's key (see the
    /// module doc), and its opening frame. Frames stay within `frame_limit`
    /// bytes (at least `MIN_FRAME_BYTES`).
    pub fn initiator(mut set: SyncSet, key: [u8; 16], frame_limit: usize) -> (Self, Vec<u8>) {
        set.key(key);
        let words = set.len().div_ceil(64);
        let r = Reconciler {
            set,
            initiator: true,
            keyed: true,
            key,
            frame_limit: frame_limit.max(MIN_FRAME_BYTES),
            reported: vec![0; words],
        };
        let mut w = Writer::new(HEADER_OPENING);
        w.key(key);
        r.split(&mut w, 0, r.set.len(), &Bound::infinite());
        (r, w.finish())
    }

    /// The side that answers; the key comes with the opening frame.
    pub fn responder(set: SyncSet, frame_limit: usize) -> Self {
        Reconciler {
            set,
            initiator: false,
            keyed: false,
            key: [0; 16],
            frame_limit: frame_limit.max(MIN_FRAME_BYTES),
            reported: Vec::new(),
        }
    }

    /// `id`'s short id in this session (what `need` reports).
    pub fn short_id(&self, id: &ItemId) -> ShortId {
        self.set.short_id(id)
    }

    /// The responder's answer to a frame of the initiator.
    pub fn reconcile(&mut self, frame: &[u8]) -> Result<Vec<u8>, RangeSyncError> {
        if self.initiator {
            return Err(RangeSyncError::Order("the initiator got a query"));
        }
        Ok(self
            .answer(frame, &mut Vec::new(), &mut Vec::new())?
            .finish())
    }

    /// The initiator's next frame after the responder's `frame`, or `None`
    /// when reconciliation is done. Adds to `have` the ids we hold that the
    /// friend lacks (each once per session), and to `need` the short ids it
    /// holds that we lack (which a later round may repeat, after a round cut
    /// short by the frame limit).
    pub fn reconcile_with_ids(
        &mut self,
        frame: &[u8],
        have: &mut Vec<ItemId>,
        need: &mut Vec<ShortId>,
    ) -> Result<Option<Vec<u8>>, RangeSyncError> {
        if !self.initiator {
            return Err(RangeSyncError::Order("the responder got a reply"));
        }
        let w = self.answer(frame, have, need)?;
        Ok((!w.is_empty()).then(|| w.finish()))
    }

    fn answer(
        &mut self,
        frame: &[u8],
        have: &mut Vec<ItemId>,
        need: &mut Vec<ShortId>,
    ) -> Result<Writer, RangeSyncError> {
        let (mut r, key) = Reader::open(frame)?;
        match (key, self.keyed) {
            (Some(key), false) => {
                self.set.key(key);
                self.key = key;
                self.keyed = true;
            }
            (Some(_), true) => return Err(RangeSyncError::Order("a second opening frame")),
            (None, false) => return Err(RangeSyncError::Order("no opening frame first")),
            (None, true) => {}
        }
        let n = self.set.len();
        let mut w = Writer::new(HEADER_CONTINUE);
        // `lower`: where the range being read starts in our set; `prev`: the
        // friend's bound below it; `skipping`: the ranges since the last one
        // we wrote are settled, and a Skip up to `prev` is owed before the
        // next range we write.
        let mut lower = 0;
        let mut prev = Bound::new(0, ItemId([0; 32]), 0);
        let mut skipping = false;
        while !r.is_empty() {
            let bound = r.bound()?;
            let mode = r.mode()?;
            let upper = self.set.lower_bound(lower, &bound);
            let (mark, skipped) = (w.mark(), skipping);
            match mode {
                Mode::Skip => skipping = true,
                Mode::Fingerprint(theirs) if theirs == self.set.fingerprint(lower, upper) => {
                    skipping = true;
                }
                Mode::Fingerprint(_) => {
                    owe_skip(&mut w, &prev, &mut skipping);
                    self.split(&mut w, lower, upper, &bound);
                }
                Mode::IdList(theirs) if self.initiator => {
                    self.compare(lower, upper, theirs, have, need);
                    skipping = true;
                }
                Mode::IdList(_) => {
                    // Our whole list there, or as much as fits and the rest
                    // as one fingerprint.
                    owe_skip(&mut w, &prev, &mut skipping);
                    let room = self.frame_limit.saturating_sub(w.len() + RESERVE);
                    let fit = (room / HASH_BYTES).min(upper - lower);
                    if fit < upper - lower && fit > 0 {
                        let cut = lower + fit;
                        let at = Bound::between(self.set.item(cut - 1), self.set.item(cut));
                        self.list(&mut w, lower, cut, &at);
                        w.fingerprint(&Bound::infinite(), self.set.fingerprint(cut, n));
                        return Ok(w);
                    }
                    self.list(&mut w, lower, upper, &bound);
                }
            }
            if w.len() + RESERVE > self.frame_limit {
                // This range's answer does not fit: leave it, and everything
                // after it, to the next round.
                w.rewind(mark);
                if skipped {
                    w.skip(&prev);
                }
                w.fingerprint(&Bound::infinite(), self.set.fingerprint(lower, n));
                return Ok(w);
            }
            lower = upper;
            prev = bound;
        }
        Ok(w)
    }

    /// Writes `items[lower..upper]` (below `bound`) as fingerprinted parts,
    /// or as an id list if it is small.
    fn split(&self, w: &mut Writer, lower: usize, upper: usize, bound: &Bound) {
        let n = upper - lower;
        if n < ID_LIST_BELOW {
            self.list(w, lower, upper, bound);
            return;
        }
        let (per, extra) = (n / BUCKETS, n % BUCKETS);
        let mut start = lower;
        for i in 0..BUCKETS {
            let end = start + per + usize::from(i < extra);
            let at = if end == upper {
                bound.clone()
            } else {
                Bound::between(self.set.item(end - 1), self.set.item(end))
            };
            w.fingerprint(&at, self.set.fingerprint(start, end));
            start = end;
        }
    }

    fn list(&self, w: &mut Writer, lower: usize, upper: usize, bound: &Bound) {
        let items = self.set.items(lower, upper);
        w.id_list(bound, items.iter().map(|(_, id)| self.set.short_id(id)));
    }

    /// The initiator's side of an id list: the difference in that range.
    fn compare(
        &mut self,
        lower: usize,
        upper: usize,
        mut theirs: Vec<ShortId>,
        have: &mut Vec<ItemId>,
        need: &mut Vec<ShortId>,
    ) {
        theirs.sort_unstable();
        theirs.dedup();
        let mut ours: Vec<ShortId> = Vec::with_capacity(upper - lower);
        for (i, (_, id)) in (lower..upper).zip(self.set.items(lower, upper)) {
            let short = self.set.short_id(id);
            ours.push(short);
            let (word, bit) = (i / 64, 1u64 << (i % 64));
            if theirs.binary_search(&short).is_err() && self.reported[word] & bit == 0 {
                self.reported[word] |= bit;
                have.push(*id);
            }
        }
        ours.sort_unstable();
        need.extend(
            theirs
                .into_iter()
                .filter(|s| ours.binary_search(s).is_err()),
        );
    }
}

/// Room kept free in every frame for what may have to close it: an owed
/// Skip and the fingerprint of the rest.
const RESERVE: usize = 2 * MAX_RANGE_OVERHEAD;

/// Writes the Skip owed for settled ranges before the next range written.
fn owe_skip(w: &mut Writer, prev: &Bound, skipping: &mut bool) {
    if *skipping {
        w.skip(prev);
        *skipping = false;
    }
}

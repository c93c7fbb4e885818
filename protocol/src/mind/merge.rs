//! The convergence rule of mind records: given the versions of one record a
//! device holds, which one it shows, which pairs are conflicts, and which
//! versions it may forget. Pure: the same versions give the same answers on
//! every device, whatever order they arrived in.
//!
//! The rules:
//!
//! 1. **Heads.** A version is *dominated* when a held version's vector is
//!    `After` its own (that version's writer had seen it). The heads are the
//!    versions no held version dominates.
//! 2. **Winner.** With one head, it wins. With several (written apart), the
//!    winner is the greatest by `(at_ms, author peer id text, item id)`: a
//!    total order, so every device holding the same versions picks the same
//!    one. The writer's clock only breaks ties between concurrent versions;
//!    a version its writer knew to be newer always wins, whatever the clocks.
//! 3. **Dominated arrivals.** A version dominated by a held one does not
//!    change the winner. It is kept as history (until [`RecordVersions::prune`]
//!    drops it), so a conflict task can still show its text and a later
//!    arrival concurrent with it is still seen as a conflict. When the record
//!    is full ([`MAX_VERSIONS_PER_RECORD`]) the oldest history version makes
//!    room; a dominated arrival into a full record is dropped.
//! 4. **Conflicts.** Two versions are concurrent when their vectors compare
//!    `Concurrent`, or `Equal` under different item ids (a device that wrote
//!    twice with one vector, e.g. after a restore). A conflict is a pair of
//!    concurrent versions whose fields differ (their content hashes) and
//!    neither of which is a tombstone. [`RecordVersions::insert`] reports each
//!    pair the new version forms with any held version, history included:
//!    concurrency is judged by the two vectors alone, so the pair is a
//!    conflict whichever other versions are present and in whatever order
//!    they came, and every device holding both reports it. Its key
//!    ([`Conflict::key`]) is derived from the two item ids alone, so every
//!    device makes the same conflict task record and the copies merge.
//! 5. **Resolving.** A version written locally takes [`RecordVersions::next_vv`]:
//!    the merge of every held vector, bumped for the writing device. It
//!    dominates every held version, so it is the only head and forms no
//!    conflict with anything held.
//! 6. **Tombstones.** A deleted version is an ordinary version: it wins or
//!    loses by the same rules (a deletion concurrent with an edit written
//!    later by the clocks loses, and the record lives on). Deletion is soft,
//!    as HMP's: a winning tombstone, and every version it beat, may be pruned
//!    once [`TOMBSTONE_TTL_MS`] has passed since it was written; a dominated
//!    version, once that long has passed since a version dominating it was
//!    written ([`RecordVersions::prunable`]).

use sha2::{Digest, Sha256};

use crate::error::ItemError;
use crate::item::body::Body;
use crate::item::id::ItemId;
use crate::item::verified::VerifiedItem;
use crate::mind::record::MindRecord;
use crate::mind::version::{Causality, MAX_DEVICES_PER_PERSON, VersionVector};

/// Most versions of one record a device holds. Versions written by one
/// device are ordered (each saw the previous), so at most
/// [`MAX_DEVICES_PER_PERSON`] can be heads at once; twice that leaves as
/// much room again for history, and bounds a conflict search at 64 vector
/// comparisons per arriving version.
pub const MAX_VERSIONS_PER_RECORD: usize = 2 * MAX_DEVICES_PER_PERSON;

/// How long a deletion and a superseded version are kept before they may be
/// forgotten: 90 days, HMP's soft delete. A device away for up to three
/// months still learns of the deletion (instead of bringing the record
/// back) and still sees its concurrent edits as conflicts; after that the
/// space is given back.
pub const TOMBSTONE_TTL_MS: u64 = 90 * 24 * 60 * 60 * 1000;

/// Domain of [`Conflict::key`], so a conflict key is never the hash of
/// anything else.
const CONFLICT_DOMAIN: &[u8] = b"porfiry mind conflict v1\0";

/// What the merge rule needs to know of one version of a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionRef {
    /// The item carrying the version (content-derived, so unique).
    pub id: ItemId,
    /// The record's version vector in this version.
    pub vv: VersionVector,
    /// The writer's clock, Unix ms.
    pub at_ms: u64,
    /// The writing device's peer id text.
    pub author: String,
    /// A tombstone.
    pub deleted: bool,
    /// [`MindRecord::content_hash`] of the version's fields.
    pub content: [u8; 32],
}

impl VersionRef {
    /// The version `record` carried by item `id`, written by `author`.
    pub fn of(id: ItemId, author: impl Into<String>, record: &MindRecord) -> VersionRef {
        VersionRef {
            id,
            vv: record.vv.clone(),
            at_ms: record.at_ms,
            author: author.into(),
            deleted: record.deleted,
            content: record.content_hash(),
        }
    }

    /// The version a verified `mind_record` item carries; `None` for any
    /// other kind.
    pub fn of_item(item: &VerifiedItem) -> Option<VersionRef> {
        match item.body() {
            Body::MindRecord(r) => Some(VersionRef::of(item.id(), item.author_peer_id(), r)),
            _ => None,
        }
    }

    /// The order that picks a winner among concurrent heads.
    fn rank(&self) -> (u64, &str, ItemId) {
        (self.at_ms, &self.author, self.id)
    }

    /// True when `self`'s writer had seen `other`.
    fn dominates(&self, other: &VersionRef) -> bool {
        self.vv.compare(&other.vv) == Causality::After
    }

    /// True when neither writer had seen the other's version.
    fn concurrent_with(&self, other: &VersionRef) -> bool {
        self.id != other.id
            && matches!(
                self.vv.compare(&other.vv),
                Causality::Concurrent | Causality::Equal
            )
    }

    /// The conflict these two versions form, if they do (rule 4).
    fn conflict_with(&self, other: &VersionRef) -> Option<Conflict> {
        (self.concurrent_with(other)
            && !self.deleted
            && !other.deleted
            && self.content != other.content)
            .then(|| Conflict::of(self.id, other.id))
    }
}

/// Two concurrent versions of one record whose texts differ: the core gets
/// a task naming both (HMP's `resolve_conflict`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Conflict {
    /// The smaller item id of the two.
    pub a: ItemId,
    /// The greater item id of the two.
    pub b: ItemId,
    /// The first 16 bytes of SHA-256 over the domain
    /// `porfiry mind conflict v1\0`, `a` and `b`: the key of the conflict
    /// task record, the same on every device that sees this pair.
    pub key: [u8; 16],
}

impl Conflict {
    /// The conflict between versions `x` and `y`, in either order.
    pub fn of(x: ItemId, y: ItemId) -> Conflict {
        let (a, b) = if x <= y { (x, y) } else { (y, x) };
        let digest = Sha256::new()
            .chain_update(CONFLICT_DOMAIN)
            .chain_update(a.0)
            .chain_update(b.0)
            .finalize();
        let mut key = [0u8; 16];
        key.copy_from_slice(&digest[..16]);
        Conflict { a, b, key }
    }
}

/// Where an inserted version went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// Already held (same item id): nothing changed.
    Duplicate,
    /// Dominated by a held version: it does not change the winner. `kept`
    /// says whether it is held as history (false: the record was full).
    Superseded {
        /// Held as history.
        kept: bool,
    },
    /// A new head.
    Head,
    /// Not held: the record is full of heads, which only vectors written
    /// against the rules can cause. Nothing changed.
    Refused,
}

/// What [`RecordVersions::insert`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InsertOutcome {
    /// Where the version went.
    pub placement: Placement,
    /// Whether the record's winner is now another version.
    pub winner_changed: bool,
    /// The conflicts the new version forms with held versions (rule 4), at
    /// most [`MAX_VERSIONS_PER_RECORD`] − 1.
    pub conflicts: Vec<Conflict>,
    /// The history version forgotten to make room, if one was.
    pub evicted: Option<ItemId>,
}

/// Every version of one record this device holds, at most
/// [`MAX_VERSIONS_PER_RECORD`]. See the module comment for the rules.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordVersions {
    versions: Vec<VersionRef>,
}

impl RecordVersions {
    /// No versions yet.
    pub fn new() -> RecordVersions {
        RecordVersions::default()
    }

    /// The held versions, in arrival order.
    pub fn versions(&self) -> &[VersionRef] {
        &self.versions
    }

    /// How many versions are held.
    pub fn len(&self) -> usize {
        self.versions.len()
    }

    /// True when nothing is held.
    pub fn is_empty(&self) -> bool {
        self.versions.is_empty()
    }

    /// Adds one version (rules 1–4).
    pub fn insert(&mut self, version: VersionRef) -> InsertOutcome {
        let mut outcome = InsertOutcome {
            placement: Placement::Duplicate,
            winner_changed: false,
            conflicts: Vec::new(),
            evicted: None,
        };
        if self.versions.iter().any(|v| v.id == version.id) {
            return outcome;
        }
        let winner_before = self.winner().map(|w| w.id);
        let dominated = self.versions.iter().any(|v| v.dominates(&version));
        if self.versions.len() >= MAX_VERSIONS_PER_RECORD {
            if dominated {
                outcome.placement = Placement::Superseded { kept: false };
                outcome.conflicts = self.conflicts_of(&version);
                return outcome;
            }
            let Some(oldest) = self.oldest_history(&version) else {
                outcome.placement = Placement::Refused;
                return outcome;
            };
            outcome.evicted = Some(self.versions.remove(oldest).id);
        }
        outcome.conflicts = self.conflicts_of(&version);
        outcome.placement = if dominated {
            Placement::Superseded { kept: true }
        } else {
            Placement::Head
        };
        self.versions.push(version);
        outcome.winner_changed = self.winner().map(|w| w.id) != winner_before;
        outcome
    }

    /// The heads: versions no held version dominates (rule 1).
    pub fn heads(&self) -> Vec<&VersionRef> {
        self.versions
            .iter()
            .filter(|v| !self.versions.iter().any(|u| u.dominates(v)))
            .collect()
    }

    /// The version this device shows (rule 2); `None` when nothing is held.
    /// A tombstone may win: the record is then deleted.
    pub fn winner(&self) -> Option<&VersionRef> {
        self.heads()
            .into_iter()
            .max_by(|x, y| x.rank().cmp(&y.rank()))
    }

    /// Every conflict among the held versions (rule 4), sorted: what the
    /// inserts reported, for a device that rebuilds its state from storage.
    pub fn conflicts(&self) -> Vec<Conflict> {
        let mut out: Vec<Conflict> = self
            .versions
            .iter()
            .enumerate()
            .flat_map(|(i, x)| {
                self.versions[i + 1..]
                    .iter()
                    .filter_map(move |y| x.conflict_with(y))
            })
            .collect();
        out.sort();
        out
    }

    /// The vector of a version `device` writes now (rule 5): every held
    /// vector merged, bumped for `device`. Refused when that would name more
    /// than [`MAX_DEVICES_PER_PERSON`] devices.
    pub fn next_vv(&self, device: &str) -> Result<VersionVector, ItemError> {
        let mut vv = VersionVector::new();
        for v in self.heads() {
            vv.merge(&v.vv)?;
        }
        vv.bump(device)?;
        Ok(vv)
    }

    /// The ids of the held versions that may be forgotten at `now_ms`
    /// (rule 6): all of them when the winner is a tombstone written at least
    /// [`TOMBSTONE_TTL_MS`] ago; otherwise each version dominated by one
    /// written at least that long ago. The winner of a live record is never
    /// among them.
    pub fn prunable(&self, now_ms: u64) -> Vec<ItemId> {
        let expired = |v: &VersionRef| v.at_ms.saturating_add(TOMBSTONE_TTL_MS) <= now_ms;
        if self.winner().is_some_and(|w| w.deleted && expired(w)) {
            return self.versions.iter().map(|v| v.id).collect();
        }
        self.versions
            .iter()
            .filter(|v| self.versions.iter().any(|u| u.dominates(v) && expired(u)))
            .map(|v| v.id)
            .collect()
    }

    /// Forgets what [`RecordVersions::prunable`] names and returns those ids
    /// (so their items can be deleted too).
    pub fn prune(&mut self, now_ms: u64) -> Vec<ItemId> {
        let gone = self.prunable(now_ms);
        self.versions.retain(|v| !gone.contains(&v.id));
        gone
    }

    /// The conflicts `version` forms with the held versions.
    fn conflicts_of(&self, version: &VersionRef) -> Vec<Conflict> {
        self.versions
            .iter()
            .filter_map(|v| v.conflict_with(version))
            .collect()
    }

    /// The index of the oldest (by `(at_ms, id)`) held version that is
    /// dominated by another held version or by `incoming`.
    fn oldest_history(&self, incoming: &VersionRef) -> Option<usize> {
        self.versions
            .iter()
            .enumerate()
            .filter(|(_, v)| incoming.dominates(v) || self.versions.iter().any(|u| u.dominates(v)))
            .min_by_key(|(_, v)| (v.at_ms, v.id))
            .map(|(i, _)| i)
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod convergence;

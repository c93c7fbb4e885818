//! A person's long-term memory as its devices replicate it: the body of a
//! `mind_record` item (one version of one row of the diary, concepts,
//! links, goals, tasks, the core's notebook, the person's own strategies,
//! thinking methods and ratings, or the model registry), the version vector each
//! version carries, and the pure rule that makes every device holding the
//! same versions show the same one and report the same conflicts.
//!
//! `version` is the vector, `record` the item body and its checks, `merge`
//! the convergence rule over the versions of one record. No IO: the caller
//! stores the versions and turns conflicts into task records.

pub mod merge;
pub mod record;
pub mod version;

pub use merge::{
    Conflict, InsertOutcome, MAX_VERSIONS_PER_RECORD, Placement, RecordVersions, TOMBSTONE_TTL_MS,
    VersionRef,
};
pub use record::{
    MAX_MIND_FIELDS, MAX_MIND_RECORD_TEXT_BYTES, MAX_MIND_TEXT_BYTES, MindRecord, MindTable,
    MindValue,
};
pub use version::{Causality, MAX_DEVICES_PER_PERSON, VersionVector};

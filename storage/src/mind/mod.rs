//! A person's long-term memory as its devices share it (issue 45): the
//! diary, concepts, links, goals, tasks, the core's notebook, the person's
//! own strategies, thinking methods and ratings, and the model registry
//! stay in their tables; each row is a record with a key every device uses
//! (`mind_records`; a local row's key is random), each change of it a signed `mind_record` version
//! (`mind_versions`), merged by the protocol's rule. Files by job:
//! [`columns`] (what travels), [`rows`] (row ↔ fields, record ↔ row),
//! [`config`] (the registry's secret stays on each device), [`target`] (a
//! rating names what it rates by record key), [`seeds`] (what every node
//! seeds is one record on all devices),
//! [`outbox`] (what this device changed), [`versions`] (what arrived, the
//! winner shown, conflicts queued), [`prune`] (what is forgotten after the
//! time to live, and never taken back).

mod columns;
mod config;
mod outbox;
mod prune;
mod rows;
mod seeds;
mod target;
mod versions;

pub use outbox::{MindChange, OutboxEntry};
pub use prune::{MIND_PRUNE_BATCH, MindPruned};
pub use rows::{RecordKey, Written};
pub use versions::{MAX_WAITING_RETRIES_PER_BATCH, OpenConflict};

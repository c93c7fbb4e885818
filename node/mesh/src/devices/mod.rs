//! A person's devices (issue 45): `porfiry devices link` makes a one-time
//! code (an invitation of kind `device`), `porfiry devices join CODE` on
//! another node of the same person presents it over `/porfiry/invite/1`
//! with request version 2; the two nodes sign one link statement, become
//! friends, and each stores the link as a `device_link` item for its other
//! devices. From then on the long-term memory travels between them, and
//! only between them, as `mind_record` items of audience `devices`.
//!
//! Files by job: [`statements`] (signing and storing link and unlink
//! items, the listing), [`exchange`] (the inviter's side of the stream),
//! [`join`] (the joiner's side), [`publish`] (this device's memory changes
//! as signed versions, conflicts as tasks), [`prune`] (when the memory
//! forgets deletions and superseded versions), [`seeds`] (what every node
//! seeds is one record on all devices), [`texts`] (what the core reads of
//! a conflict, in English and Russian).

pub mod exchange;
pub mod join;
pub mod prune;
pub mod publish;
pub mod seeds;
pub mod statements;
pub mod texts;

pub(crate) use exchange::link_exchange;
pub use join::{DeviceJoinError, join_device};
pub use publish::{MindPublished, publish_mind};
pub use statements::{DeviceListing, DevicesError, list_devices, store_statement, unlink_device};

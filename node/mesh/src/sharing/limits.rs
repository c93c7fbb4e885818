//! Named limits of publishing (local rows becoming items), each with the
//! reason for its number.

/// Hops a note posted here may travel when the author names none: 4 reaches
/// friends of friends of friends of friends, a wide social circle, while
/// staying at half the protocol's `MAX_HOPS` so a public note does not flood
/// the whole mesh by default.
pub const DEFAULT_NOTE_MAX_HOPS: u8 = 4;

/// Hops of a direct message (`peer:ID`): one, the only distance it may
/// travel. Writing 1 keeps the item honest about it; routing would stop it
/// after one hop anyway.
pub const DIRECT_MESSAGE_MAX_HOPS: u8 = 1;

/// Hops a shared strategy, thinking method or rating travels: know-how is
/// worth spreading as far as a public note.
pub const DEFAULT_KNOWHOW_MAX_HOPS: u8 = DEFAULT_NOTE_MAX_HOPS;

/// Rows read per table per publishing pass: the storage list cap; a bigger
/// backlog is taken over the following passes.
pub const PUBLISH_SCAN_LIMIT: u32 = porfiry_storage::limits::MAX_LIST_LIMIT;

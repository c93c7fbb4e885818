//! Named limits of the node handle, each with the reason for its number.

/// Commands (published notes, friend changes, status questions) a
/// `NodeHandle` may queue for the replication loop before its callers wait:
/// the loop takes one in well under a millisecond unless a catch-up is
/// writing, so 64 covers a burst of API calls; beyond that callers wait
/// (backpressure) rather than pile memory up.
pub const COMMAND_QUEUE_CAPACITY: usize = 64;

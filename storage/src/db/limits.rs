//! Named limits of the database actor, each with the reason for its number.

/// Write requests that may wait for the writer thread before callers are
/// made to wait (backpressure, never loss): a write is a short transaction
/// (well under a millisecond for a note, a few ms for a frame's worth of
/// items), so 64 queued writes is tens of milliseconds of work — enough to
/// absorb a burst of API posts and replication batches, small enough that a
/// flood cannot pile up memory behind a slow disk.
pub const WRITE_QUEUE_CAPACITY: usize = 64;

/// Read requests that may wait for a read connection. Reads are as short
/// as writes; the same reasoning and number apply.
pub const READ_QUEUE_CAPACITY: usize = 64;

/// Read connections (and their threads): two lets an API list notes while
/// the status page counts items, on a machine with 2 cores; each costs a
/// connection's page cache (a few hundred KB), which matters on a phone.
pub const READ_CONNECTIONS: usize = 2;

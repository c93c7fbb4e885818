//! Named limits of the running node (the replication glue), each with the
//! reason for its number. Replication timing lives in the engine's config,
//! transport caps in `crate::net::limits`, publishing defaults in
//! `crate::sharing::limits`.

use std::time::Duration;

use crate::net::Profile;

/// How often a server asks SQLite whether another process changed the
/// file (`PRAGMA data_version` on the writer connection, one read of the
/// WAL index, which the node's own commits never change): 50 ms makes a
/// `notes post` or `friends add` from another terminal leave for friends
/// within a blink, at 20 trivial checks a second on an always-on machine.
/// Writes made inside the process through a `NodeHandle` do not wait for
/// it: they tell the loop directly.
pub const CHANGE_POLL_INTERVAL: Duration = Duration::from_millis(50);

/// How often a server looks for any commit at all, its own included (on a
/// read connection of the watcher's own): some in-process writes leave
/// rows to publish without telling the loop (a thinking core's shareable
/// rating, a chat tool's strategy), and the scan this starts publishes
/// them. 250 ms sends those within a quarter second, while a server busy
/// storing received items (a commit per frame) scans for them at most four
/// times a second.
pub const ANY_CHANGE_POLL_INTERVAL: Duration = Duration::from_millis(250);

/// Both checks on a phone: at most once every 5 s, and with inotify
/// (Linux, Android) only while the database's files are written, so an
/// idle phone does not wake for them at all; where the watch has to poll,
/// no more than 12 times a minute. On a phone the app writes through its `NodeHandle`, which
/// notifies the loop at once; only another process writing the file (rare
/// there) or a core's shareable rating waits up to 5 s.
pub const PHONE_CHANGE_POLL_INTERVAL: Duration = Duration::from_secs(5);

/// The two change polls of one profile (see `watch.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PollIntervals {
    /// Another connection's commit (another process).
    pub others: Duration,
    /// Any commit, the node's own writes included.
    pub any: Duration,
}

/// The change poll intervals for `profile`.
pub fn change_poll_intervals(profile: Profile) -> PollIntervals {
    match profile {
        Profile::Server => PollIntervals {
            others: CHANGE_POLL_INTERVAL,
            any: ANY_CHANGE_POLL_INTERVAL,
        },
        Profile::Phone => PollIntervals {
            others: PHONE_CHANGE_POLL_INTERVAL,
            any: PHONE_CHANGE_POLL_INTERVAL,
        },
    }
}

/// How far back (author clock) each change scan looks for items another
/// process signed into the `items` table (a `notes post`): a writer stamps
/// the item before it waits for the write lock (at most the storage busy
/// timeout, 5 s), so a minute covers it with a wide margin for clock steps.
pub const OWN_ITEM_LOOKBACK_MS: u64 = 60_000;

/// Our own items another process stored are read from the file, checked and
/// handed to the engine this many at a time, the next part read while the
/// last is handed over, and each part pushed at once (`Input::FlushPush`):
/// a part of 1,024 items of a few hundred bytes is read in about 6 ms on the
/// build machine, so friends start on the first part that soon instead of
/// after a whole push batch (4,096) has been read and checked, and a part is
/// still large enough that its read, its frame and its verification batch
/// on the friend's side cost little per item.
pub const OWN_READ_PART: usize = 1_024;

/// Storage writes (a received item stored with its merged row, a route
/// changed, an item deleted) the database writer carries out, and then
/// looks whether another write waits for it; if one does, it commits what
/// it has and lets that write in before the rest (`engine_io`). So a note
/// the user posts while a friend floods waits for at most this many
/// items, not for a whole frame of 500 or a catch-up chunk of about 800.
/// A release build takes in a 10,000-note catch-up, verification
/// included, in about a third of a second, so 64 notes are at most about
/// 2 ms of the writer, the time of a post itself when idle (2–6 ms p99,
/// docs/benchmarks.md, "Quotas under a flood"). Smaller chunks would add
/// work to every frame (each chunk writes and merges its items as one
/// batch, two savepoints) for a wait already as short as the post.
pub const WRITE_TURN_ITEMS: usize = 64;

/// How long shutdown waits for the mesh driver to close its connections
/// before giving up on it: closing is local work (milliseconds); 5 s only
/// trips on a wedged task, and the process exits either way.
pub const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(5);

/// Where a server listens when `--listen` is not given: every IPv4 interface
/// on 4001, the port libp2p nodes conventionally use, so friends can be told
/// one stable address.
pub const DEFAULT_SERVER_LISTEN: &str = "/ip4/0.0.0.0/tcp/4001";

/// How long the addresses the driver reports must stay unchanged before
/// friends are told them in a new `reachable_at` item: a start or a
/// network switch brings a burst of listen addresses in one poll, a relay
/// slot a second later; half a second folds a burst into one item while
/// friends still learn of a move within a second.
pub const REACH_SETTLE_MS: u64 = 500;

/// Batches of memory versions ([`crate::devices::publish::MIND_PUBLISH_BATCH`]
/// each) one scan signs at most: 2,048 versions, well under a second of
/// signing, so the loop keeps answering friends while a first link
/// publishes a whole diary (the next scan, a watcher poll later, goes on).
pub const MIND_BATCHES_PER_SCAN: usize = 8;

//! Named limits of the running node (the replication glue), each with the
//! reason for its number. Replication timing lives in the engine's config,
//! transport caps in `crate::mesh::limits`, publishing defaults in
//! `crate::sharing::limits`.

use std::time::Duration;

use crate::mesh::Profile;

/// How often a server asks SQLite whether another process changed the
/// file (`PRAGMA data_version`, one cheap read): 250 ms makes a `notes post`
/// or `friends add` from another terminal take effect well within a second,
/// at four trivial queries a second when nothing happens. Writes made
/// inside the process (a `NodeHandle`) do not wait for it: they tell the
/// loop directly.
pub const CHANGE_POLL_INTERVAL: Duration = Duration::from_millis(250);

/// The same poll on a phone: at most once every 5 s, so an idle phone node
/// wakes for it no more than 12 times a minute (the radio and CPU sleep in
/// between). On a phone the app writes through its `NodeHandle`, which
/// notifies the loop at once; only another process writing the file (rare
/// there) waits up to 5 s.
pub const PHONE_CHANGE_POLL_INTERVAL: Duration = Duration::from_secs(5);

/// The change poll interval for `profile`.
pub fn change_poll_interval(profile: Profile) -> Duration {
    match profile {
        Profile::Server => CHANGE_POLL_INTERVAL,
        Profile::Phone => PHONE_CHANGE_POLL_INTERVAL,
    }
}

/// How far back (author clock) each change scan looks for items another
/// process signed into the `items` table (a `notes post`): a writer stamps
/// the item before it waits for the write lock (at most the storage busy
/// timeout, 5 s), so a minute covers it with a wide margin for clock steps.
pub const OWN_ITEM_LOOKBACK_MS: u64 = 60_000;

/// How long shutdown waits for the mesh driver to close its connections
/// before giving up on it: closing is local work (milliseconds); 5 s only
/// trips on a wedged task, and the process exits either way.
pub const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(5);

/// Where a server listens when `--listen` is not given: every IPv4 interface
/// on 4001, the port libp2p nodes conventionally use, so friends can be told
/// one stable address.
pub const DEFAULT_SERVER_LISTEN: &str = "/ip4/0.0.0.0/tcp/4001";

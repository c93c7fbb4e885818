//! The engine's timing and queue limits: named defaults, each with the reason
//! for its number, gathered in an [`EngineConfig`] that tests and mesh-sim may
//! tune (a short resync interval, say) without touching the rules.

use super::quota::Quotas;

/// How long a new item waits before it is pushed, so a burst (a pasted list,
/// a catch-up) leaves as one message per friend; 100 ms is below what a
/// person notices in a chat and longer than a burst of local writes.
pub const PUSH_BATCH_DELAY_MS: u64 = 100;

/// Queued items that make a full push batch, which leaves at once rather
/// than after the batch delay: one `Have` message's worth of ids
/// (`wire::MAX_IDS_PER_MESSAGE`). Waiting gathers nothing more worth
/// having for such a batch; it only delays a bulk import or a big
/// catch-up being passed on (10,000 notes written at once reached a
/// friend 100 ms sooner, `live_10k`).
pub const PUSH_BATCH_FULL: usize = crate::wire::MAX_IDS_PER_MESSAGE;

/// How long a `Want` may go unanswered before the item is asked of another
/// friend that announced it: 5 s is many round trips on a phone link, so a
/// live friend is rarely skipped, and a dead one costs only seconds.
pub const WANT_TIMEOUT_MS: u64 = 5_000;

/// Most items asked of one friend and not yet received; the rest wait their
/// turn. 1,024 keeps a friend's pipe full (a frame holds about a thousand
/// notes) without letting one slow friend hold everything we want.
pub const MAX_WANTS_IN_FLIGHT_PER_PEER: usize = 1_024;

/// Most items being pulled at once, from all friends together; announces
/// beyond it are ignored (catch-up brings those items later). 20,000 is far
/// more than live chat announces between two pushes, and bounds what a
/// flooding friend can make us track to a couple of megabytes.
pub const MAX_WANTED_ITEMS: usize = 20_000;

/// How often a connected friend is reconciled again, catching anything live
/// push lost; 5 minutes bounds the damage of a lost message while costing a
/// few hundred bytes per friend when nothing differs.
pub const RESYNC_INTERVAL_MS: u64 = 5 * 60_000;

/// Longest interval between resyncs of a connected friend whose sessions
/// keep finding nothing to send it (each such session doubles the interval,
/// from `RESYNC_INTERVAL_MS`; one that sends something resets it). Live push
/// loses nothing while a connection lasts and a reconnect starts a session
/// at once, so a periodic session between friends in sync is overhead (it
/// was most of the bytes on the wire in the simulated city); 30 minutes
/// still bounds how long an item a friend dropped (past its `MAX_WANTED_ITEMS`,
/// say) waits.
pub const MAX_RESYNC_INTERVAL_MS: u64 = 30 * 60_000;

/// Most a friend's resync comes early, fixed per friend (see
/// `schedule.rs`): a tenth of the interval (30 s) spreads friends that
/// connected at the same moment over half a minute, and never delays a
/// resync past the interval.
pub const RESYNC_JITTER_MS: u64 = RESYNC_INTERVAL_MS / 10;

/// Most catch-up sessions a node serves at once by default (a phone): one,
/// so that a node back online is filled by one friend before the next looks
/// at what it still lacks, and each missed item arrives once.
pub const MAX_SERVED_SESSIONS: usize = 1;

/// Sessions a server serves at once (`EngineConfig::for_server`). Phones
/// reconnecting to a club server start their sessions toward it together;
/// served one by one, those queued behind a few slow phones time out
/// (`SYNC_SESSION_TIMEOUT_MS`) and retry only at the next resync. The price
/// is that two friends offering the same missed item at the same moment
/// both send it. Measured in mesh-sim's `city` (seed 200): payload copies
/// per delivery 1.005 serving one, 1.008 serving two, 1.013 serving four;
/// two keeps within 1 % of duplicates.
pub const SERVER_SERVED_SESSIONS: usize = 2;

/// Most catch-up sessions this node runs at once as initiator; friends past
/// it wait in line for a slot. Each session holds a range-sync set of what
/// the friend may receive (48 B per item) and up to four chunks in the
/// driver, so 4 bounds that memory to four friends' worth while keeping
/// several links busy; a server reconnecting to 1,000 phones serves them
/// four at a time instead of building 1,000 sets at once.
pub const MAX_OUTBOUND_SESSIONS: usize = 4;

/// How long a catch-up session we started may go without progress (a
/// reply, a chunk of items drained) before we abort it. It is an idle
/// timeout, not a deadline: a session that keeps moving may take as long as
/// its items need (72 MB to a phone on a slow link takes minutes). The
/// friend serves few sessions at once, so ours may queue behind others;
/// 2 minutes covers that on a slow link.
pub const SYNC_SESSION_TIMEOUT_MS: u64 = 2 * 60_000;

/// How long a catch-up session we serve may sit idle (no frame, no item)
/// before we drop it and serve the next friend in line. Every frame and
/// every chunk of items counts as progress, so a long session that keeps
/// moving is never cut; only one that stopped is. 2 minutes, the same as the
/// initiator's idle timeout: the sender's chunks wait behind its transport's
/// queue (`MAX_CHUNKS_IN_FLIGHT` × a full frame), which drains within
/// seconds unless the link is dead.
pub const SYNC_STALL_MS: u64 = 2 * 60_000;

/// Bytes of envelopes in one chunk of a catch-up session (one
/// `Output::SendChunk`, one page read from storage): a chunk closes at the
/// first item that reaches 256 KiB, so it is one wire message of about
/// that size (`wire::ITEMS_MESSAGE_TARGET_BYTES`) whatever the items: four
/// 64 KiB envelopes or about 800 ordinary notes. Small chunks let the
/// receiver verify one while it stores the one before; four in flight
/// keep 1 MiB per session in the driver. Measured (`catch_up_10k`, 10,000
/// notes of 316 B): 64 ids per chunk took 0.69–0.73 s, chunks by bytes
/// 0.28 s; the 72 MB catch-up of 30 KB notes kept the sending server's
/// peak at or below the 64-id figure (docs/benchmarks.md).
pub const CHUNK_BYTES: usize = 256 * 1024;

/// Most items in one chunk, however small: bounds the per-chunk work
/// (ids listed, rows read in one query) for tiny items.
pub const CHUNK_ITEMS: usize = 1024;

/// Chunks of one session handed to the driver and not yet drained: 4 keep
/// the link busy (the next chunk is loaded while three are on the wire)
/// while bounding what one session has in the driver to four pages.
pub const MAX_CHUNKS_IN_FLIGHT: usize = 4;

/// The engine's settings. `EngineConfig::new(peer)` gives the defaults above.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineConfig {
    /// This node's peer id string (`12D3KooW…`).
    pub local_peer: String,
    /// See [`PUSH_BATCH_DELAY_MS`].
    pub push_batch_delay_ms: u64,
    /// See [`PUSH_BATCH_FULL`].
    pub push_batch_full: usize,
    /// See [`WANT_TIMEOUT_MS`].
    pub want_timeout_ms: u64,
    /// See [`MAX_WANTS_IN_FLIGHT_PER_PEER`].
    pub max_wants_in_flight: usize,
    /// See [`MAX_WANTED_ITEMS`].
    pub max_wanted: usize,
    /// See [`RESYNC_INTERVAL_MS`].
    pub resync_interval_ms: u64,
    /// See [`SYNC_SESSION_TIMEOUT_MS`].
    pub sync_timeout_ms: u64,
    /// See [`SYNC_STALL_MS`].
    pub sync_stall_ms: u64,
    /// See [`MAX_RESYNC_INTERVAL_MS`].
    pub max_resync_interval_ms: u64,
    /// See [`RESYNC_JITTER_MS`].
    pub resync_jitter_ms: u64,
    /// See [`MAX_OUTBOUND_SESSIONS`].
    pub max_outbound_sessions: usize,
    /// See [`MAX_SERVED_SESSIONS`] and [`SERVER_SERVED_SESSIONS`].
    pub max_served_sessions: usize,
    /// See [`CHUNK_ITEMS`].
    pub chunk_items: usize,
    /// See [`CHUNK_BYTES`].
    pub chunk_bytes: usize,
    /// See [`MAX_CHUNKS_IN_FLIGHT`].
    pub max_chunks_in_flight: usize,
    /// What one author may make this node hold, and how much of strangers'
    /// items it keeps ([`Quotas`]).
    pub quotas: Quotas,
}

impl EngineConfig {
    /// The defaults for the node `local_peer`.
    pub fn new(local_peer: impl Into<String>) -> EngineConfig {
        EngineConfig {
            local_peer: local_peer.into(),
            push_batch_delay_ms: PUSH_BATCH_DELAY_MS,
            push_batch_full: PUSH_BATCH_FULL,
            want_timeout_ms: WANT_TIMEOUT_MS,
            max_wants_in_flight: MAX_WANTS_IN_FLIGHT_PER_PEER,
            max_wanted: MAX_WANTED_ITEMS,
            resync_interval_ms: RESYNC_INTERVAL_MS,
            sync_timeout_ms: SYNC_SESSION_TIMEOUT_MS,
            sync_stall_ms: SYNC_STALL_MS,
            max_resync_interval_ms: MAX_RESYNC_INTERVAL_MS,
            resync_jitter_ms: RESYNC_JITTER_MS,
            max_outbound_sessions: MAX_OUTBOUND_SESSIONS,
            max_served_sessions: MAX_SERVED_SESSIONS,
            chunk_items: CHUNK_ITEMS,
            chunk_bytes: CHUNK_BYTES,
            max_chunks_in_flight: MAX_CHUNKS_IN_FLIGHT,
            quotas: Quotas::default(),
        }
    }

    /// The defaults for a server: like [`EngineConfig::new`], serving
    /// [`SERVER_SERVED_SESSIONS`] sessions at once.
    pub fn for_server(local_peer: impl Into<String>) -> EngineConfig {
        EngineConfig {
            max_served_sessions: SERVER_SERVED_SESSIONS,
            ..EngineConfig::new(local_peer)
        }
    }
}

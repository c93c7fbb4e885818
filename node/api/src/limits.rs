//! The API's limits, each with the reason for its number.

use std::time::Duration;

/// The default `--api` address: loopback only, so nothing outside the
/// machine reaches the agent unless `--api` and `--api-public` say so. 4580
/// is unassigned by IANA and clear of the usual local model servers
/// (11434 Ollama, 8080 llama.cpp, 1234 LM Studio) and of the mesh's 4001.
pub const DEFAULT_API_ADDR: &str = "127.0.0.1:4580";

/// Largest request body. Chat clients resend the whole conversation with
/// every message: 4 MiB holds ~250 maximum-length messages (16,000
/// characters each), far beyond what a small model's context keeps, while
/// one request can never make the node buffer more than this.
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// While a streamed answer waits on a slow model (a long prompt on a phone
/// CPU, tool rounds), an SSE comment goes out this often so proxies and
/// clients that drop idle connections after 30–60 s keep the stream open.
pub const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(15);

/// A session nobody used for this long is dropped: a chat left for an hour
/// is a new conversation, and its toolsets have long gone idle anyway.
pub const SESSION_IDLE_TTL: Duration = Duration::from_secs(60 * 60);

/// Most sessions kept; at the cap, the least recently used one goes. A
/// family's chat apps open a few conversations each: 256 is far above that,
/// and at ≤ ~100 KB of history per session it bounds the memory to ~25 MB.
pub const MAX_SESSIONS: usize = 256;

/// Longest session key (`user` field or `X-Porfiry-Session` header): keys are
/// ids (a user id, a UUID), and a long key would only cost memory.
pub const MAX_SESSION_KEY_BYTES: usize = 256;

/// Text deltas buffered between the turn and the HTTP body. Small, so a slow
/// client slows the turn (backpressure) instead of the node buffering a
/// whole answer; 64 deltas are a few hundred tokens of slack.
pub const DELTA_CHANNEL: usize = 64;

/// Most notes one `GET /api/notes` returns: one screen of a client's list,
/// and a bounded answer however many notes the node holds.
pub const MAX_NOTES_LIMIT: usize = 500;

/// Notes `GET /api/notes` returns without `?limit=`.
pub const DEFAULT_NOTES_LIMIT: usize = 50;

/// Most turns whose tool turns the node keeps for rebuilding a client's
/// history ([`crate::turn_records`]): 16 tool-using turns for each of
/// [`MAX_SESSIONS`] sessions.
pub const MAX_TURN_RECORDS: usize = 16 * MAX_SESSIONS;

/// Most bytes those records hold: a tool result is cut at 6,000 characters,
/// a turn has a few; 16 MiB keeps thousands of turns and bounds the memory
/// on a phone.
pub const MAX_TURN_RECORD_BYTES: usize = 16 * 1024 * 1024;

/// Most conversations remembered by their history for clients that name no
/// session ([`crate::conversations`]): one entry per answered turn, so 4,096
/// covers [`MAX_SESSIONS`] conversations of 16 turns.
pub const MAX_CONVERSATION_PREFIXES: usize = 16 * MAX_SESSIONS;

/// Goals the family page's Mind tab shows (newest first): a core works on a
/// handful at once; 20 is a screen and a bounded read.
pub const MIND_GOALS: u32 = 20;

/// Tasks it shows: a few per goal.
pub const MIND_TASKS: u32 = 50;

/// Ticks it shows: the last ten say what the core has been doing lately
/// (mode, commands run and not validated, errors) without paging.
pub const MIND_TICKS: u32 = 10;

/// Diary entries it shows, for the same reason.
pub const MIND_DIARY: u32 = 10;

/// Backups made at once (`POST /api/backup`): one. Each holds 64 MiB for
/// its key derivation and a copy of the database on disk; a person makes
/// one at a time, so a second while one is made is refused (409), not
/// queued.
pub const MAX_BACKUPS_AT_ONCE: usize = 1;

/// Bytes read from the backup file per piece of the download: 64 KiB, the
/// backup's own chunk, so a backup of any size streams through a small,
/// fixed buffer.
pub const BACKUP_DOWNLOAD_CHUNK: usize = 64 * 1024;

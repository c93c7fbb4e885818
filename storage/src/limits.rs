//! Named limits of the storage layer, each with the reason for its value.

/// How long a write waits for another connection's lock before giving up:
/// writers hold the lock for one batch (milliseconds), so 5 s only trips on a
/// stuck process, and a CLI call still answers in human time.
pub const BUSY_TIMEOUT_MS: u64 = 5_000;

/// Prepared statements kept per connection: about 30 tables times a handful
/// of generic statements each, so hot paths never re-parse SQL.
pub const STATEMENT_CACHE_CAPACITY: usize = 256;

/// Rows a list returns when the caller names no limit: about what one prompt
/// context can show.
pub const DEFAULT_LIST_LIMIT: u32 = 50;

/// Most rows one list call may return: bigger asks are refused so one LLM
/// command cannot pull the whole table into memory or into a prompt.
pub const MAX_LIST_LIMIT: u32 = 1_000;

/// Longest text value any column accepts (1 MiB): a long pasted document
/// fits; a runaway LLM loop cannot bloat the file.
pub const MAX_TEXT_BYTES: usize = 1 << 20;

/// Most tags on one row: tags steer attention; hundreds would be noise.
pub const MAX_TAGS: usize = 64;

/// Longest tag in bytes: a word or short phrase, in any script.
pub const MAX_TAG_BYTES: usize = 64;

/// Items accepted by one `insert_items` call: a catch-up batch fits, and one
/// transaction stays short enough not to starve other writers.
pub const MAX_ITEMS_PER_BATCH: usize = 10_000;

/// Longest peer id string: an ed25519 PeerId is 52 base58 characters; the
/// rest is room for other key types, not for arbitrary text.
pub const MAX_PEER_ID_BYTES: usize = 128;

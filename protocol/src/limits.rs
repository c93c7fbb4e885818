//! Named limits of the item format, each with the reason for its number.
//!
//! Every limit is checked both when an item is signed and when one is
//! decoded, so a node never makes an item that its peers would refuse.

/// Version of the payload layout this code writes and accepts; a payload with
/// any other version is refused as `UnknownVersion` rather than misread.
pub const PROTOCOL_VERSION: u64 = 1;

/// Largest envelope accepted, checked before any decoding: 64 KiB holds a long
/// note with room to spare and keeps a hostile peer from making us parse megabytes.
pub const MAX_ENVELOPE_BYTES: usize = 64 * 1024;

/// Longest note text or description: 32 KiB is several printed pages and still
/// leaves half of the envelope for the header and the other fields.
pub const MAX_TEXT_BYTES: usize = 32 * 1024;

/// Longest single step of a strategy or method: a paragraph, not an essay.
pub const MAX_STEP_BYTES: usize = 2 * 1024;

/// Most entries in a list (mentions, hashtags, steps, features): more than a
/// person or a model writes by hand, few enough to keep items small.
pub const MAX_LIST_ITEMS: usize = 64;

/// Longest short string (name, topic, class, source, model, mention, hashtag):
/// a PeerId string is 52 characters, a long title fits in 128 bytes.
pub const MAX_NAME_LEN: usize = 128;

/// Longest rating comment: a few sentences; longer thoughts belong in a note.
pub const MAX_COMMENT_BYTES: usize = 4 * 1024;

/// Longest LLM endpoint (URL or peer id): URLs longer than 512 bytes are not
/// endpoints people type, and it bounds what a peer can make us store.
pub const MAX_ENDPOINT_LEN: usize = 512;

/// Most addresses in a `reachable_at` item: a node listens on a few
/// interfaces (IPv4, IPv6, TCP, QUIC) and holds a slot at a few relaying
/// friends (`MAX_RELAY_PATHS` = 4 in the mesh); 16 covers that with room,
/// and a friend never dials more than 16 addresses from one item.
pub const MAX_REACH_ADDRESSES: usize = 16;

/// Longest address in a `reachable_at` item: a relay circuit with two
/// peer ids and an IPv6 address is about 180 bytes.
pub const MAX_ADDRESS_LEN: usize = 256;

/// Most hops an item may travel: friends of friends up to 8 deep reaches far
/// beyond one social circle while keeping the flood bounded.
pub const MAX_HOPS: u8 = 8;

/// Lowest rating score: the HMP cognitive validation scale runs -3..=+3, and
/// ratings use the same scale so both can be compared.
pub const MIN_SCORE: i8 = -3;

/// Highest rating score (see [`MIN_SCORE`]).
pub const MAX_SCORE: i8 = 3;

/// Length of an ed25519 signature in bytes, fixed by RFC 8032.
pub const SIGNATURE_LEN: usize = 64;

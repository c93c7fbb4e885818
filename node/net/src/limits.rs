//! Named limits of the libp2p driver, each with the reason for its number.
//!
//! Item-level limits (envelope size, text length, hops) live in
//! `porfiry_protocol::limits`; these bound what the transport carries and how
//! many connections, streams and queued bytes one node keeps.

use std::time::Duration;

use libp2p::StreamProtocol;

/// The request-response protocol our frames travel on. The version suffix
/// changes only when the framing itself changes (not when wire messages do).
pub const FRAME_PROTOCOL: StreamProtocol = StreamProtocol::new("/porfiry/frame/1");

/// Protocol version string announced through identify, so a peer can tell a
/// Porfiry node (and its framing generation) from any other libp2p node.
pub const IDENTIFY_PROTOCOL_VERSION: &str = "/porfiry/1";

/// Largest transport frame body (the bytes after the length prefix of one
/// libp2p request-response frame) accepted or sent, checked from the 4-byte
/// length prefix BEFORE any of the body is read. Each frame body is one wire
/// message, which the protocol caps lower, at
/// `porfiry_protocol::wire::MAX_WIRE_MESSAGE_BYTES` (1 MiB); this cap is the
/// transport's outer bound and is kept above that one so that any valid
/// message fits with room to spare. 4 MiB holds 63 envelopes at
/// `porfiry_protocol::limits::MAX_ENVELOPE_BYTES` (64 KiB) plus headers; a
/// peer that pins every stream slot still costs at most
/// `MAX_CONCURRENT_STREAMS` × 4 MiB, and the body is read as it arrives, so
/// an announced length alone allocates nothing big.
pub const MAX_TRANSPORT_FRAME_BYTES: u32 = 4 * 1024 * 1024;

/// Bytes of the big-endian length prefix in front of every frame body: a u32
/// covers `MAX_TRANSPORT_FRAME_BYTES` with room to spare and is fixed-size, so the cap is
/// checked after exactly four bytes.
pub const FRAME_PREFIX_BYTES: usize = 4;

/// Most established connections to one peer: two lets two friends that both
/// know each other's address dial at the same moment without one dial being
/// refused; a third is the relayed link that hole punching (DCUtR) replaces,
/// kept until the direct one is up and then closed by the driver. A fourth
/// is always a bug or abuse.
pub const MAX_ESTABLISHED_PER_PEER: u32 = 3;

/// Most established connections in total on a phone (and the default of
/// [`ReachConfig`](super::ReachConfig)): 128 friends (a person's circle plus
/// their servers and phones) with two links each. Strangers never get this
/// far.
pub const MAX_ESTABLISHED_TOTAL: u32 = 256;

/// Most established connections in total on a server (`porfiry run
/// --max-connections` sets another): a club's home server holding a
/// thousand phone friends, each with one link and room for a second while
/// it redials. A friend link costs the relay measurement's ≈ 95 KiB at most
/// (`docs/benchmarks.md`), so 2,048 links are under 200 MiB.
pub const SERVER_MAX_ESTABLISHED: u32 = 2_048;

/// Most inbound connections still in their handshake. Anyone can start one
/// (the peer id is known only after noise), so this bounds the key-exchange
/// work strangers can make a server do at once.
pub const MAX_PENDING_INCOMING: u32 = 32;

/// How long a server keeps an idle friend connection: an hour, so phones that
/// dialled in stay reachable for live push between the engine's periodic
/// catch-ups. Dead links are found by ping, not by idleness.
pub const SERVER_IDLE_TIMEOUT: Duration = Duration::from_secs(60 * 60);

/// How long a phone keeps an idle connection: five minutes, longer than the
/// engine's periodic catch-up interval, so a healthy link never idles out, yet a
/// link nothing uses stops costing radio wake-ups.
pub const PHONE_IDLE_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// Time for TCP connect + noise + yamux negotiation: 20 s covers a slow mobile
/// link with a few retransmits; a dial that takes longer is retried by backoff.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(20);

/// Time for one frame to be written and acknowledged: a full 4 MiB frame over a
/// 1 Mbit/s mobile uplink takes about 34 s, so 60 s leaves margin.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// Concurrent request-response streams per connection (ours and the peer's
/// together): room for `MAX_IN_FLIGHT_PER_PEER` in each direction on one link
/// with slack; past this libp2p refuses new streams.
pub const MAX_CONCURRENT_STREAMS: usize = 32;

/// Frames sent to one peer and not yet acknowledged: 8 keeps a link busy while
/// staying well under `MAX_CONCURRENT_STREAMS`; 32 measured no faster on
/// loopback (the per-stream CPU cost, not latency, is the bound there).
pub const MAX_IN_FLIGHT_PER_PEER: usize = 8;

/// Frames of one friend the consumer has been handed and not yet taken,
/// when frames are acknowledged only once taken (`MeshConfig::ack_when_taken`):
/// two send windows (`MAX_IN_FLIGHT_PER_PEER`), because a friend that
/// reconnects opens a new window while its old one's frames still wait, and
/// while the driver holds a frame it acknowledges frames on arrival (see
/// `driver_taken.rs`), which frees the sender's window early. A frame past
/// this is refused: its stream is closed unanswered, and the sender sees the
/// failure (a catch-up chunk is sent again, a live push waits for the next
/// catch-up), so one friend never has more than this queued here.
pub const MAX_WAITING_PER_PEER: usize = 2 * MAX_IN_FLIGHT_PER_PEER;

/// `FrameTaker` messages waiting for the driver: it takes them at every
/// turn, so this is only the burst a consumer taking a frame after each
/// verification can make; a full queue makes the consumer wait for the
/// driver's next turn, never for a friend.
pub const TAKEN_QUEUE_LEN: usize = 256;

/// Bytes queued for one peer behind the in-flight frames: four full frames. The
/// engine batches and sends catch-up in chunks it paces by their drain, so a
/// deeper queue would only hold stale data. A frame that does not fit is held
/// (nothing is dropped for being queued) and the driver takes no more commands
/// until it fits, so its senders wait.
pub const MAX_QUEUED_BYTES_PER_PEER: usize = 4 * MAX_TRANSPORT_FRAME_BYTES as usize;

/// Interval between a server's pings on each connection: 30 s is under the
/// ~60 s idle timeout of common NATs and carrier gateways (UDP mappings, which
/// QUIC links ride, are the shortest lived), at half the wake-ups of libp2p's
/// 15 s default. The phones connected to a server are kept mapped by these.
pub const PING_INTERVAL: Duration = Duration::from_secs(30);

/// Interval between a phone's own pings: 2 min. A phone never listens, so its
/// links are to servers (directly or through a relaying one), whose pings
/// every 30 s already keep the phone's NAT mapping alive in both directions;
/// the phone's ping only has to notice a server gone silent (a network switch
/// the OS did not report), which within 2 min 20 s (with the ping's 20 s
/// timeout) is soon enough for notes that wait in the outbox anyway. Each
/// ping wakes the phone twice (its timer, its answer): 1 a minute instead of
/// 4 at the server's interval.
pub const PHONE_PING_INTERVAL: Duration = Duration::from_secs(2 * 60);

/// Interval between a phone's periodic identify exchanges on a link: 30 min
/// instead of libp2p's 5 min. Identify runs at once on every new connection,
/// which is when a phone's addresses change (a network switch drops the
/// link); the periodic repeat only refreshes what friends already know.
pub const PHONE_IDENTIFY_INTERVAL: Duration = Duration::from_secs(30 * 60);

/// Interval between a server's periodic identify exchanges: libp2p's 5 min.
pub const SERVER_IDENTIFY_INTERVAL: Duration = Duration::from_secs(5 * 60);

/// First redial delay after a working link drops, in ms: 1 s, since a restarted
/// server is usually back within seconds.
pub const BACKOFF_BASE_MS: u64 = 1_000;

/// Longest redial delay, in ms: 5 min, so a phone that was offline for hours
/// reconnects within five minutes of its friend coming back, at ~12 dials/hour.
pub const BACKOFF_CAP_MS: u64 = 5 * 60 * 1_000;

/// Where a server listens over QUIC when `--listen` is not given: the same
/// port as TCP (UDP and TCP ports are separate), so a friend is told one
/// port number; QUIC handshakes in one round trip and rides out a phone's
/// network change better than TCP.
pub const DEFAULT_SERVER_LISTEN_QUIC: &str = "/ip4/0.0.0.0/udp/4001/quic-v1";

/// The port a node that listens nowhere binds for its dials when hole
/// punching is on (`ReachConfig::punch_port`): 0, any free one, chosen
/// again at each start (friends are told it like any listen address), on
/// IPv4 only, where the NATs that need punching are.
pub const PUNCH_PORT: u16 = 0;

/// Commands waiting for the driver: enough for a burst of engine output; a full
/// queue makes the sender wait (back-pressure) rather than drop.
pub const COMMAND_QUEUE_LEN: usize = 256;

/// Events waiting for the consumer: a burst of received frames; a full queue
/// makes the driver stop reading the network until the consumer catches up.
pub const EVENT_QUEUE_LEN: usize = 1024;

/// Events the driver keeps on its side of the channel before it stops reading
/// the swarm (it goes on reading while a frame is held, so acknowledgements
/// still free the queue): one swarm event yields a few events at most, so 64
/// is a burst with room, and a lagging consumer costs at most that many more.
pub const MAX_PENDING_EVENTS: usize = 64;

//! Builds the libp2p swarm: TCP + noise + yamux and, in builds with the
//! `quic` feature, QUIC, plus the relay client transport (dialling and
//! listening through a relaying friend), under the [`MeshBehaviour`], with
//! the profile's idle timeout.

use libp2p::identity::Keypair;
use libp2p::{Swarm, SwarmBuilder, noise, tcp, yamux};

use super::reach::ReachConfig;
use super::streams::FriendSet;

use super::behaviour::{MeshBehaviour, ReachParts};
use super::config::Profile;
use super::error::MeshError;
use super::gate::InviteDoor;
use super::limits::CONNECT_TIMEOUT;

/// Whether this build speaks QUIC. libp2p-quic 0.14 (through libp2p-tls and
/// quinn) hard-wires rustls's aws-lc-rs provider and also links ring, while
/// reqwest's rustls uses ring: two TLS crypto stacks, and aws-lc-sys's own C
/// build for every phone target. Phone builds (Android, iOS: the `porfiry`
/// binary there and `porfiry-ffi`) leave QUIC out and speak TCP only, with
/// ring the one provider (`docs/architecture.md`, "One crypto stack").
pub const QUIC_BUILT: bool = cfg!(feature = "quic");

/// A swarm for `keypair` speaking TCP with noise encryption and yamux
/// multiplexing (Nagle off) and QUIC where built ([`QUIC_BUILT`]), able to dial and listen through relay
/// circuits, with an empty friend list, the frame cap given, guests admitted
/// while `door` is open, and relaying / LAN discovery as `reach` says (the
/// relay checks `friends`).
/// Must be called inside a tokio runtime.
pub fn build_swarm(
    keypair: Keypair,
    profile: Profile,
    max_frame_bytes: u32,
    streams: libp2p_stream::Behaviour,
    door: InviteDoor,
    reach: ReachConfig,
    friends: FriendSet,
) -> Result<Swarm<MeshBehaviour>, MeshError> {
    let with_tcp = SwarmBuilder::with_existing_identity(keypair)
        .with_tokio()
        .with_tcp(
            tcp::Config::new().nodelay(true),
            noise::Config::new,
            yamux::Config::default,
        )?;
    // QUIC only where this build has it (`quic` feature, off in the phone
    // builds: see `QUIC_BUILT`).
    #[cfg(feature = "quic")]
    let with_tcp = with_tcp.with_quic();
    let Ok(with_behaviour) = with_tcp
        .with_relay_client(noise::Config::new, yamux::Config::default)?
        .with_behaviour(|key, relay_client| {
            let parts = ReachParts {
                relay_client,
                config: reach,
                friends,
            };
            MeshBehaviour::new(
                &key.public(),
                profile,
                max_frame_bytes,
                streams,
                door,
                parts,
            )
        });
    Ok(with_behaviour
        .with_swarm_config(|c| c.with_idle_connection_timeout(profile.idle_timeout()))
        .with_connection_timeout(CONNECT_TIMEOUT)
        .build())
}

//! `porfiry run --relay`: a circuit relay (v2) for friends only.
//!
//! A node with a public address relays for its friends so that a friend that
//! cannot be dialled (a phone, a home server behind NAT, a node started with
//! `--no-listen`) stays reachable: it reserves a slot here and its other
//! friends dial it through this node.
//!
//! Who may use it: a reservation is granted only to a friend of this node,
//! and a circuit is opened only from a friend to a peer holding a
//! reservation — which is a friend too — so a circuit always joins two
//! friends of the relay. The friend gate already keeps strangers' connections
//! out; the checks here also refuse an invitation guest (a stranger the gate
//! let in for the invitation protocol only). Both checks read the same friend
//! set the driver keeps for offload streams, so removing a friend stops its
//! next reservation renewal and circuit at once.
//!
//! Limits: the stock relay cuts a circuit after 2 minutes or 128 KiB, which
//! would break replication catch-up and offload replies that run over a
//! circuit. The node sets its own ([`RelayLimits`]), with defaults sized for
//! a circle of friends rather than the open internet.

use std::collections::HashSet;
use std::sync::{PoisonError, RwLock};
use std::time::{Duration, Instant};

use libp2p::{Multiaddr, PeerId, relay};

use super::streams::FriendSet;

/// Reservations held at once: one per friend that cannot be dialled, and a
/// node's circle is at most `MAX_ESTABLISHED_TOTAL / 2` = 128 friends.
pub const DEFAULT_MAX_RESERVATIONS: usize = 128;

/// Circuits open at once: two per reservation holder (for example its phone
/// and a laptop both reaching a hidden server) over the 128 reservations.
pub const DEFAULT_MAX_CIRCUITS: usize = 256;

/// Circuits one friend may have open at once, as source or destination: its
/// other devices and a few friends reaching it, without one friend taking
/// every slot.
pub const DEFAULT_MAX_CIRCUITS_PER_FRIEND: usize = 16;

/// Longest life of one circuit: a day, so a phone's link to a hidden server
/// lives like a direct one (the client redials when it ends) instead of the
/// stock 2 minutes that would cut a long catch-up or offload reply.
pub const DEFAULT_MAX_CIRCUIT_DURATION: Duration = Duration::from_secs(24 * 60 * 60);

/// Bytes one circuit may carry (both ways): 1 GiB, a full catch-up of a large
/// store plus offload traffic, where the stock 128 KiB would not carry one
/// 4 MiB frame.
pub const DEFAULT_MAX_CIRCUIT_BYTES: u64 = 1 << 30;

/// How long a reservation lasts before the holder renews it: libp2p's hour,
/// short enough that a removed friend's slot frees itself soon.
pub const RESERVATION_DURATION: Duration = Duration::from_secs(60 * 60);

/// Reservations one friend may hold at once (renewals replace, so one per
/// connection it has to us; two connections is the most a friend keeps).
pub const MAX_RESERVATIONS_PER_FRIEND: usize = 2;

/// The relay's limits for friends (flags `--relay-*` of `porfiry run`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RelayLimits {
    /// Reservations held at once.
    pub max_reservations: usize,
    /// Circuits open at once.
    pub max_circuits: usize,
    /// Circuits one friend may have open at once.
    pub max_circuits_per_friend: usize,
    /// Longest life of one circuit.
    pub max_circuit_duration: Duration,
    /// Bytes one circuit may carry.
    pub max_circuit_bytes: u64,
}

impl Default for RelayLimits {
    fn default() -> Self {
        Self {
            max_reservations: DEFAULT_MAX_RESERVATIONS,
            max_circuits: DEFAULT_MAX_CIRCUITS,
            max_circuits_per_friend: DEFAULT_MAX_CIRCUITS_PER_FRIEND,
            max_circuit_duration: DEFAULT_MAX_CIRCUIT_DURATION,
            max_circuit_bytes: DEFAULT_MAX_CIRCUIT_BYTES,
        }
    }
}

/// Whether `peer` is in `friends` now.
fn is_friend(friends: &RwLock<HashSet<PeerId>>, peer: &PeerId) -> bool {
    friends
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .contains(peer)
}

/// The libp2p relay configuration for `limits`, granting reservations and
/// circuits only to peers in `friends` (read at each request).
pub fn relay_config(limits: RelayLimits, friends: &FriendSet) -> relay::Config {
    let reserving = FriendSet::clone(friends);
    let sourcing = FriendSet::clone(friends);
    relay::Config {
        max_reservations: limits.max_reservations,
        max_reservations_per_peer: MAX_RESERVATIONS_PER_FRIEND,
        reservation_duration: RESERVATION_DURATION,
        reservation_rate_limiters: vec![Box::new(
            move |peer: PeerId, _: &Multiaddr, _: Instant| {
                let ok = is_friend(&reserving, &peer);
                if !ok {
                    tracing::warn!(%peer, "refused a relay reservation from a peer that is not a friend");
                }
                ok
            },
        )],
        max_circuits: limits.max_circuits,
        max_circuits_per_peer: limits.max_circuits_per_friend,
        max_circuit_duration: limits.max_circuit_duration,
        max_circuit_bytes: limits.max_circuit_bytes,
        circuit_src_rate_limiters: vec![Box::new(
            move |peer: PeerId, _: &Multiaddr, _: Instant| {
                let ok = is_friend(&sourcing, &peer);
                if !ok {
                    tracing::warn!(%peer, "refused a relay circuit from a peer that is not a friend");
                }
                ok
            },
        )],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_lift_the_stock_two_minute_and_128_kib_cut() {
        let limits = RelayLimits::default();
        assert!(limits.max_circuit_duration > Duration::from_secs(2 * 60));
        assert!(
            limits.max_circuit_bytes > 4 * 1024 * 1024,
            "one full frame fits"
        );
        let friends = FriendSet::default();
        let config = relay_config(limits, &friends);
        assert_eq!(config.max_circuit_bytes, DEFAULT_MAX_CIRCUIT_BYTES);
        assert_eq!(
            config.max_circuits_per_peer,
            DEFAULT_MAX_CIRCUITS_PER_FRIEND
        );
    }

    #[test]
    fn only_friends_pass_the_reservation_and_circuit_checks() {
        let friend = PeerId::random();
        let stranger = PeerId::random();
        let friends = FriendSet::default();
        let mut config = relay_config(RelayLimits::default(), &friends);
        let addr: Multiaddr = "/ip4/127.0.0.1/tcp/1".parse().unwrap();
        let now = Instant::now();
        assert!(!config.reservation_rate_limiters[0].try_next(friend, &addr, now));
        friends.write().unwrap().insert(friend);
        for limiters in [
            &mut config.reservation_rate_limiters,
            &mut config.circuit_src_rate_limiters,
        ] {
            assert!(limiters[0].try_next(friend, &addr, now));
            assert!(!limiters[0].try_next(stranger, &addr, now));
        }
        // A friend removed is refused its next renewal.
        friends.write().unwrap().remove(&friend);
        assert!(!config.reservation_rate_limiters[0].try_next(friend, &addr, now));
    }
}

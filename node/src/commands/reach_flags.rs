//! The flags of `porfiry run` for reaching friends that cannot be dialled:
//! `--no-listen`, `--relay` with its `--relay-*` limits, `--mdns` and
//! `--no-hole-punching`; and
//! how many connections the node holds (`--max-connections`) and where it
//! is reached from outside (`--external-address`).

use std::time::Duration;

use clap::Args;

use porfiry_mesh::net::limits::{MAX_ESTABLISHED_TOTAL, SERVER_MAX_ESTABLISHED};
use porfiry_mesh::net::relay::{
    DEFAULT_MAX_CIRCUIT_BYTES, DEFAULT_MAX_CIRCUIT_DURATION, DEFAULT_MAX_CIRCUITS,
    DEFAULT_MAX_CIRCUITS_PER_FRIEND, DEFAULT_MAX_RESERVATIONS,
};
use porfiry_mesh::net::{Multiaddr, Profile, ReachConfig, RelayLimits};

/// Reaching friends that cannot be dialled.
#[derive(Debug, Clone, Args)]
pub struct ReachArgs {
    /// Listen nowhere (no TCP, no QUIC): friends reach this node only
    /// through a relaying friend, where it reserves a slot by itself.
    #[arg(long, conflicts_with = "listen")]
    pub no_listen: bool,
    /// Relay circuits for friends (circuit relay v2): slots only for
    /// friends, circuits only between two friends. Needs a public address.
    #[arg(long)]
    pub relay: bool,
    /// Relay slots held at once.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_RESERVATIONS)]
    pub relay_max_reservations: usize,
    /// Relay circuits open at once.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_CIRCUITS)]
    pub relay_max_circuits: usize,
    /// Relay circuits one friend may have open at once.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_CIRCUITS_PER_FRIEND)]
    pub relay_circuits_per_friend: usize,
    /// Longest life of one relay circuit, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = DEFAULT_MAX_CIRCUIT_DURATION.as_secs())]
    pub relay_circuit_secs: u64,
    /// Bytes one relay circuit may carry.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_CIRCUIT_BYTES)]
    pub relay_circuit_bytes: u64,
    /// Find friends on the local network (mDNS); strangers found are ignored.
    #[arg(long)]
    pub mdns: bool,
    /// Most connections held at once; more are refused [default: 2048 on a
    /// server, 256 on a phone].
    #[arg(long, value_name = "N")]
    pub max_connections: Option<u32>,
    /// An address friends reach this node at from outside, when it is not a
    /// listen address (a port forward): a relay offers it in its slots.
    /// Repeat for more.
    #[arg(long = "external-address", value_name = "MULTIADDR")]
    pub external_addresses: Vec<String>,
    /// Bind no port at all on a node that listens nowhere (`--profile
    /// phone`, `--no-listen`). By default such a node binds one free TCP
    /// port to dial from, which hole punching needs to make a relayed link
    /// direct.
    #[arg(long)]
    pub no_hole_punching: bool,
}

impl Default for ReachArgs {
    fn default() -> Self {
        Self {
            no_listen: false,
            relay: false,
            relay_max_reservations: DEFAULT_MAX_RESERVATIONS,
            relay_max_circuits: DEFAULT_MAX_CIRCUITS,
            relay_circuits_per_friend: DEFAULT_MAX_CIRCUITS_PER_FRIEND,
            relay_circuit_secs: DEFAULT_MAX_CIRCUIT_DURATION.as_secs(),
            relay_circuit_bytes: DEFAULT_MAX_CIRCUIT_BYTES,
            mdns: false,
            max_connections: None,
            external_addresses: Vec::new(),
            no_hole_punching: false,
        }
    }
}

/// Why the reach flags cannot be used together.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ReachFlagsError {
    /// A relay must be dialled, so it must listen as a server.
    #[error("--relay needs a node friends can dial: not with --profile phone or --no-listen")]
    RelayHidden,
    /// A limit of zero would refuse every friend.
    #[error("{0} must be above zero")]
    ZeroLimit(&'static str),
    /// `--external-address` is not a multiaddr.
    #[error("--external-address {address:?} is not a multiaddr ({reason})")]
    BadExternalAddress {
        /// What was given.
        address: String,
        /// The parser's words.
        reason: String,
    },
}

impl ReachArgs {
    /// The mesh settings these flags ask for (`links_file` is set by the node).
    pub fn to_config(&self, profile: Profile) -> Result<ReachConfig, ReachFlagsError> {
        let relay = if self.relay {
            if profile == Profile::Phone || self.no_listen {
                return Err(ReachFlagsError::RelayHidden);
            }
            for (name, value) in [
                (
                    "--relay-max-reservations",
                    self.relay_max_reservations as u64,
                ),
                ("--relay-max-circuits", self.relay_max_circuits as u64),
                (
                    "--relay-circuits-per-friend",
                    self.relay_circuits_per_friend as u64,
                ),
                ("--relay-circuit-secs", self.relay_circuit_secs),
                ("--relay-circuit-bytes", self.relay_circuit_bytes),
            ] {
                if value == 0 {
                    return Err(ReachFlagsError::ZeroLimit(name));
                }
            }
            Some(RelayLimits {
                max_reservations: self.relay_max_reservations,
                max_circuits: self.relay_max_circuits,
                max_circuits_per_friend: self.relay_circuits_per_friend,
                max_circuit_duration: Duration::from_secs(self.relay_circuit_secs),
                max_circuit_bytes: self.relay_circuit_bytes,
            })
        } else {
            None
        };
        let max_connections = match (self.max_connections, profile) {
            (Some(0), _) => return Err(ReachFlagsError::ZeroLimit("--max-connections")),
            (Some(n), _) => n,
            (None, Profile::Server) => SERVER_MAX_ESTABLISHED,
            (None, Profile::Phone) => MAX_ESTABLISHED_TOTAL,
        };
        let external_addresses = self
            .external_addresses
            .iter()
            .map(|a| {
                a.parse::<Multiaddr>()
                    .map_err(|e| ReachFlagsError::BadExternalAddress {
                        address: a.clone(),
                        reason: e.to_string(),
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ReachConfig {
            relay,
            mdns: self.mdns,
            max_connections,
            external_addresses,
            punch_port: !self.no_hole_punching,
            ..ReachConfig::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relay_flags_become_limits_and_a_hidden_relay_is_refused() {
        let mut args = ReachArgs {
            relay: true,
            relay_circuit_secs: 60,
            ..ReachArgs::default()
        };
        let config = args.to_config(Profile::Server).unwrap();
        let limits = config.relay.unwrap();
        assert_eq!(limits.max_circuit_duration, Duration::from_secs(60));
        assert_eq!(limits.max_circuit_bytes, DEFAULT_MAX_CIRCUIT_BYTES);
        assert_eq!(
            args.to_config(Profile::Phone),
            Err(ReachFlagsError::RelayHidden)
        );
        args.no_listen = true;
        assert_eq!(
            args.to_config(Profile::Server),
            Err(ReachFlagsError::RelayHidden)
        );
        args.no_listen = false;
        args.relay_max_circuits = 0;
        assert_eq!(
            args.to_config(Profile::Server),
            Err(ReachFlagsError::ZeroLimit("--relay-max-circuits"))
        );
        let plain = ReachArgs {
            mdns: true,
            ..ReachArgs::default()
        };
        let config = plain.to_config(Profile::Phone).unwrap();
        assert!(config.relay.is_none() && config.mdns);
    }

    #[test]
    fn a_port_to_punch_from_is_bound_unless_no_hole_punching() {
        let punch = |a: &ReachArgs| a.to_config(Profile::Phone).map(|c| c.punch_port);
        assert_eq!(punch(&ReachArgs::default()), Ok(true));
        let off = ReachArgs {
            no_hole_punching: true,
            ..ReachArgs::default()
        };
        assert_eq!(punch(&off), Ok(false));
    }

    #[test]
    fn the_connection_cap_follows_the_profile_unless_given() {
        let args = ReachArgs::default();
        let cap = |a: &ReachArgs, p| a.to_config(p).map(|c| c.max_connections);
        assert_eq!(cap(&args, Profile::Server), Ok(SERVER_MAX_ESTABLISHED));
        assert_eq!(cap(&args, Profile::Phone), Ok(MAX_ESTABLISHED_TOTAL));
        let given = ReachArgs {
            max_connections: Some(5_000),
            ..ReachArgs::default()
        };
        assert_eq!(cap(&given, Profile::Phone), Ok(5_000));
        let zero = ReachArgs {
            max_connections: Some(0),
            ..ReachArgs::default()
        };
        assert_eq!(
            cap(&zero, Profile::Server),
            Err(ReachFlagsError::ZeroLimit("--max-connections"))
        );
    }

    #[test]
    fn external_addresses_parse_and_a_bad_one_is_named() {
        let args = ReachArgs {
            external_addresses: vec!["/dns4/home.example/tcp/4001".into()],
            ..ReachArgs::default()
        };
        let config = args.to_config(Profile::Server).unwrap();
        assert_eq!(
            config.external_addresses,
            vec!["/dns4/home.example/tcp/4001".parse::<Multiaddr>().unwrap()]
        );
        let bad = ReachArgs {
            external_addresses: vec!["home.example:4001".into()],
            ..ReachArgs::default()
        };
        let err = bad.to_config(Profile::Server).unwrap_err();
        assert!(
            err.to_string()
                .contains("\"home.example:4001\" is not a multiaddr"),
            "{err}"
        );
    }
}

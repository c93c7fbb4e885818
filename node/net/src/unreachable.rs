//! Why a friend cannot be reached: a failed dial read as the short reason
//! `status` shows, and one log line per friend when that reason changes.
//!
//! - [`why_unreachable`]: a failed dial as [`Unreachable`] (`refused`,
//!   `timed out`, `no relay in common`, …), found wherever libp2p's
//!   transport stack wraps the OS error.
//! - [`error_text`]: the innermost words of an error chain, for the log
//!   and the `failed: …` reason.
//! - [`UnreachableLog`]: one log line per friend when the reason it cannot
//!   be reached changes, rather than one per redial.

use std::collections::HashMap;
use std::error::Error;
use std::io;

use libp2p::PeerId;
use libp2p::core::transport::TransportError;
use libp2p::swarm::DialError;

use super::links::Unreachable;
use super::reach::is_circuit;

/// The last reason logged for each unreachable friend.
#[derive(Debug, Default)]
pub struct UnreachableLog {
    last: HashMap<PeerId, String>,
}

impl UnreachableLog {
    /// An empty record.
    pub fn new() -> Self {
        Self::default()
    }

    /// A dial of `peer` failed for `reason`: returns true when the line is
    /// worth logging (the first failure, or a different reason).
    pub fn failed(&mut self, peer: PeerId, reason: &str) -> bool {
        if self.last.get(&peer).is_some_and(|r| r == reason) {
            return false;
        }
        self.last.insert(peer, reason.to_owned());
        true
    }

    /// `peer` is connected: its next failure is logged again.
    pub fn reached(&mut self, peer: &PeerId) {
        self.last.remove(peer);
    }
}

/// How deep a dial error's chain is followed: libp2p's transport stack
/// nests a dozen layers (the connection timeout, each `or_transport`, each
/// upgrade step); the cap only guards against a chain that loops.
const MAX_ERROR_DEPTH: usize = 32;

/// What libp2p's connection timeout says (`TransportTimeoutError::Timeout`,
/// libp2p-core 0.44): it sits inside an `io::Error` whose concrete type
/// depends on the whole transport stack, so its text is what can be matched.
const LIBP2P_TIMEOUT_TEXT: &str = "Timeout has been reached";

/// The errors in `error`'s chain, outermost first: through each
/// `io::Error`'s inner error too (its `source` skips it), at most
/// [`MAX_ERROR_DEPTH`].
fn error_chain<'a>(error: &'a (dyn Error + 'static)) -> Vec<&'a (dyn Error + 'static)> {
    let mut chain = Vec::new();
    let mut next = Some(error);
    while let Some(e) = next
        && chain.len() < MAX_ERROR_DEPTH
    {
        chain.push(e);
        next = match e.downcast_ref::<io::Error>().and_then(io::Error::get_ref) {
            Some(inner) => Some(inner as &(dyn Error + 'static)),
            None => e.source(),
        };
    }
    chain
}

/// The texts along `error`'s chain, each once, joined by `: `.
pub fn error_text(error: &(dyn Error + 'static)) -> String {
    let mut texts: Vec<String> = Vec::new();
    for e in error_chain(error) {
        let text = e.to_string();
        // Wrappers often print their inner error as their own text.
        if !text.is_empty() && !texts.iter().any(|t| t.contains(&text)) {
            texts.push(text);
        }
    }
    texts.join(": ")
}

/// `refused` or `timed out` when `error`'s chain says so: an `io::Error` of
/// that kind, libp2p's connection timeout, or — where libp2p's `Either`
/// errors hide the `io::Error` from `source` — the operating system's words
/// for it ("connection refused", "timed out", any case).
fn io_reason(error: &(dyn Error + 'static)) -> Option<Unreachable> {
    let chain = error_chain(error);
    for e in &chain {
        if let Some(io) = e.downcast_ref::<io::Error>() {
            match io.kind() {
                io::ErrorKind::ConnectionRefused => return Some(Unreachable::Refused),
                io::ErrorKind::TimedOut => return Some(Unreachable::TimedOut),
                _ => {}
            }
        }
    }
    for e in &chain {
        let text = e.to_string().to_lowercase();
        if text.contains("connection refused") || text.contains("actively refused") {
            return Some(Unreachable::Refused);
        }
        if text.contains(&LIBP2P_TIMEOUT_TEXT.to_lowercase()) || text.contains("timed out") {
            return Some(Unreachable::TimedOut);
        }
    }
    None
}

/// One attempt's failure as `(reason, text)`: the reason when it is
/// `refused` or `timed out`, and the error's text.
fn attempt_reason(error: &TransportError<io::Error>) -> (Option<Unreachable>, String) {
    match error {
        TransportError::MultiaddrNotSupported(_) => (None, "not supported by this build".into()),
        TransportError::Other(e) => (io_reason(e), error_text(e)),
    }
}

/// Why a dial of a friend failed, as `status` shows it; `None` when the
/// failure says nothing about the friend (the dial was not made, or was
/// aborted because a connection came up meanwhile).
///
/// With several addresses tried, a `refused` from any of the friend's own
/// addresses wins, then a `timed out`; when only relay circuits were tried
/// (or they and addresses that failed otherwise) it is `no relay in common`.
pub fn why_unreachable(error: &DialError) -> Option<Unreachable> {
    match error {
        DialError::NoAddresses => Some(Unreachable::NoAddress),
        DialError::DialPeerConditionFalse(_) | DialError::Aborted => None,
        DialError::LocalPeerId { .. } => {
            Some(Unreachable::failed("its address is this node's own"))
        }
        DialError::WrongPeerId { obtained, .. } => Some(Unreachable::failed(&format!(
            "another peer ({obtained}) answers at its address"
        ))),
        DialError::Denied { cause } => Some(Unreachable::failed(&error_text(cause))),
        DialError::Transport(attempts) => {
            let mut circuits = false;
            let mut timed_out = false;
            let mut first: Option<String> = None;
            for (address, error) in attempts {
                if is_circuit(address) {
                    circuits = true;
                    continue;
                }
                match attempt_reason(error) {
                    (Some(Unreachable::Refused), _) => return Some(Unreachable::Refused),
                    (Some(Unreachable::TimedOut), _) => timed_out = true,
                    (_, text) => {
                        first.get_or_insert(format!("{address}: {text}"));
                    }
                }
            }
            Some(if timed_out {
                Unreachable::TimedOut
            } else if circuits {
                Unreachable::NoRelayInCommon
            } else {
                Unreachable::failed(first.as_deref().unwrap_or("no address answered"))
            })
        }
    }
}
#[cfg(test)]
mod tests {
    use libp2p::Multiaddr;

    use super::*;

    fn key(n: u8) -> PeerId {
        porfiry_protocol::NodeKey::from_seed([n; 32]).peer_id()
    }

    #[test]
    fn an_unreachable_friend_is_logged_once_per_reason() {
        let mut u = UnreachableLog::new();
        let p = key(3);
        assert!(u.failed(p, "connection refused"));
        assert!(!u.failed(p, "connection refused"));
        assert!(u.failed(p, "timeout"));
        u.reached(&p);
        assert!(u.failed(p, "timeout"));
    }

    /// Hides its inner error from `source`, as libp2p's `Either` errors do,
    /// and prints it as its own text.
    #[derive(Debug)]
    struct Hiding(io::Error);

    impl std::fmt::Display for Hiding {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            self.0.fmt(f)
        }
    }

    impl Error for Hiding {}

    fn attempt(address: &str, error: io::Error) -> (Multiaddr, TransportError<io::Error>) {
        (address.parse().unwrap(), TransportError::Other(error))
    }

    fn why(attempts: Vec<(Multiaddr, TransportError<io::Error>)>) -> Option<Unreachable> {
        why_unreachable(&DialError::Transport(attempts))
    }

    #[test]
    fn a_refused_or_timed_out_dial_is_found_wherever_the_stack_wraps_it() {
        use libp2p::core::transport::timeout::TransportTimeoutError;
        let direct = "/ip4/127.0.0.1/tcp/9";
        let refused = || io::Error::from(io::ErrorKind::ConnectionRefused);
        assert_eq!(
            why(vec![attempt(direct, refused())]),
            Some(Unreachable::Refused)
        );
        // The swarm's connection timeout around the transport, boxed.
        let wrapped = io::Error::other(TransportTimeoutError::<io::Error>::Other(refused()));
        assert_eq!(
            why(vec![attempt(direct, wrapped)]),
            Some(Unreachable::Refused)
        );
        let timeout = io::Error::other(TransportTimeoutError::<io::Error>::Timeout);
        assert_eq!(
            why(vec![attempt(direct, timeout)]),
            Some(Unreachable::TimedOut)
        );
        let os_timeout = io::Error::from(io::ErrorKind::TimedOut);
        assert_eq!(
            why(vec![attempt(direct, os_timeout)]),
            Some(Unreachable::TimedOut)
        );
        // Hidden from `source`: the operating system's words still tell.
        let hidden = io::Error::other(Hiding(io::Error::other(
            "Connection refused (os error 111)",
        )));
        assert_eq!(
            why(vec![attempt(direct, hidden)]),
            Some(Unreachable::Refused)
        );
        let hidden = io::Error::other(Hiding(io::Error::other(
            "Operation timed out (os error 60)",
        )));
        assert_eq!(
            why(vec![attempt(direct, hidden)]),
            Some(Unreachable::TimedOut)
        );
    }

    #[test]
    fn only_circuits_tried_is_no_relay_in_common_and_a_refusal_wins() {
        let (relay, friend) = (key(1), key(2));
        let circuit = format!("/ip4/10.0.0.1/tcp/4001/p2p/{relay}/p2p-circuit/p2p/{friend}");
        let direct = "/ip4/10.0.0.2/tcp/4001";
        let circuit_failed = || attempt(&circuit, io::Error::other("no reservation"));
        assert_eq!(
            why(vec![circuit_failed()]),
            Some(Unreachable::NoRelayInCommon)
        );
        let handshake = || attempt(direct, io::Error::other("noise: handshake failed"));
        assert_eq!(
            why(vec![handshake(), circuit_failed()]),
            Some(Unreachable::NoRelayInCommon),
            "the circuits are what could have worked"
        );
        let refused = attempt(direct, io::Error::from(io::ErrorKind::ConnectionRefused));
        assert_eq!(
            why(vec![circuit_failed(), refused]),
            Some(Unreachable::Refused)
        );
        let timed_out = attempt(direct, io::Error::from(io::ErrorKind::TimedOut));
        let refused = attempt(
            "/ip4/10.0.0.3/tcp/4001",
            io::Error::from(io::ErrorKind::ConnectionRefused),
        );
        assert_eq!(why(vec![timed_out, refused]), Some(Unreachable::Refused));
        assert_eq!(
            why(vec![handshake()]),
            Some(Unreachable::Failed(format!(
                "{direct}: noise: handshake failed"
            )))
        );
        let unsupported: Multiaddr = "/ip4/10.0.0.2/udp/4001/quic-v1".parse().unwrap();
        assert_eq!(
            why(vec![(
                unsupported.clone(),
                TransportError::MultiaddrNotSupported(unsupported)
            )]),
            Some(Unreachable::Failed(
                "/ip4/10.0.0.2/udp/4001/quic-v1: not supported by this build".into()
            ))
        );
    }

    #[test]
    fn dial_errors_that_are_not_about_the_path_have_their_own_reason_or_none() {
        use libp2p::swarm::{ConnectionDenied, dial_opts::PeerCondition};
        assert_eq!(
            why_unreachable(&DialError::NoAddresses),
            Some(Unreachable::NoAddress)
        );
        assert_eq!(why_unreachable(&DialError::Aborted), None);
        assert_eq!(
            why_unreachable(&DialError::DialPeerConditionFalse(
                PeerCondition::Disconnected
            )),
            None
        );
        let address: Multiaddr = "/ip4/10.0.0.2/tcp/4001".parse().unwrap();
        let wrong = DialError::WrongPeerId {
            obtained: key(5),
            address,
        };
        assert_eq!(
            why_unreachable(&wrong),
            Some(Unreachable::failed(&format!(
                "another peer ({}) answers at its address",
                key(5)
            )))
        );
        let denied = DialError::Denied {
            cause: ConnectionDenied::new(io::Error::other("not a friend")),
        };
        assert_eq!(
            why_unreachable(&denied).map(|w| w.to_string()),
            Some("failed: connection denied: not a friend".into())
        );
    }

    #[test]
    fn an_error_text_follows_the_chain_once() {
        use libp2p::core::transport::timeout::TransportTimeoutError;
        let inner = io::Error::other("Connection refused (os error 111)");
        let wrapped = io::Error::other(TransportTimeoutError::<io::Error>::Other(inner));
        assert_eq!(error_text(&wrapped), "Connection refused (os error 111)");
        let two = io::Error::other(TransportTimeoutError::<io::Error>::TimerError(
            io::Error::other("tick"),
        ));
        assert_eq!(error_text(&two), "Error in the timer: tick");
    }
}

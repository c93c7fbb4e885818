//! When to dial each friend that has an address: exponential backoff, capped.
//!
//! A pure state machine with an injected clock (`now_ms`, any monotonic
//! origin): the driver tells it what happened (friend added, dial failed,
//! connected, disconnected) and asks which friends are due and when to wake
//! next. No timers, no sockets, so it is tested without sleeping.
//!
//! Schedule: a newly added friend is dialled at once; after a working link
//! drops, the first redial comes about `base` later; each failed dial doubles
//! the wait (`base·2^failures`), up to `cap`. A success resets the count.
//! Every wait is jittered with a [`Jitter`] the driver draws, so the phones
//! of a family spread their redials to a restarted server instead of
//! arriving in lock-step.

use std::collections::BTreeMap;
use std::time::Duration;

pub use crate::backoff::{Backoff, Jitter};

use super::limits::{BACKOFF_BASE_MS, BACKOFF_CAP_MS};

/// The mesh's default redial backoff: [`BACKOFF_BASE_MS`] doubling up to [`BACKOFF_CAP_MS`].
pub const REDIAL_BACKOFF: Backoff = Backoff::new(
    Duration::from_millis(BACKOFF_BASE_MS),
    Duration::from_millis(BACKOFF_CAP_MS),
);

/// A backoff delay in whole milliseconds (the plan's clock unit).
fn delay_ms(backoff: &Backoff, failures: u32, jitter: Jitter) -> u64 {
    u64::try_from(backoff.delay(failures, jitter).as_millis()).unwrap_or(u64::MAX)
}

/// Where one friend's link stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkState {
    /// Not connected; dial at `at_ms`. `failures` dials in a row have failed.
    Waiting {
        /// When to dial, on the plan's clock.
        at_ms: u64,
        /// Failed dials in a row so far.
        failures: u32,
    },
    /// A dial is under way.
    Dialing {
        /// Failed dials in a row before this one.
        failures: u32,
    },
    /// At least one connection is up (ours or theirs).
    Connected,
}

/// Redial schedule for every friend we know an address of.
#[derive(Debug, Clone)]
pub struct RedialPlan<P: Ord + Clone> {
    backoff: Backoff,
    links: BTreeMap<P, LinkState>,
}

impl<P: Ord + Clone> RedialPlan<P> {
    /// An empty plan with the given backoff.
    pub fn new(backoff: Backoff) -> Self {
        Self {
            backoff,
            links: BTreeMap::new(),
        }
    }

    /// Starts tracking `peer`, due at once. A peer already tracked keeps its state.
    pub fn add(&mut self, peer: P, now_ms: u64) {
        self.links.entry(peer).or_insert(LinkState::Waiting {
            at_ms: now_ms,
            failures: 0,
        });
    }

    /// Stops tracking `peer`; it is never dialled again until added back.
    pub fn remove(&mut self, peer: &P) {
        self.links.remove(peer);
    }

    /// The state of `peer`, if tracked.
    #[cfg(test)]
    pub fn state(&self, peer: &P) -> Option<LinkState> {
        self.links.get(peer).copied()
    }

    /// A connection to `peer` is up (whoever dialled): stop dialling, reset failures.
    pub fn connected(&mut self, peer: &P) {
        if let Some(state) = self.links.get_mut(peer) {
            *state = LinkState::Connected;
        }
    }

    /// The last connection to `peer` closed: redial about `base` from now.
    pub fn disconnected(&mut self, peer: &P, now_ms: u64, jitter: Jitter) {
        if let Some(state) = self.links.get_mut(peer)
            && *state == LinkState::Connected
        {
            let at_ms = now_ms.saturating_add(delay_ms(&self.backoff, 0, jitter));
            *state = LinkState::Waiting { at_ms, failures: 0 };
        }
    }

    /// Our dial to `peer` failed: wait twice as long as last time (capped).
    /// Ignored unless a dial was under way (a link may have come up meanwhile).
    pub fn dial_failed(&mut self, peer: &P, now_ms: u64, jitter: Jitter) {
        if let Some(state) = self.links.get_mut(peer)
            && let LinkState::Dialing { failures } = *state
        {
            let failures = failures.saturating_add(1);
            let at_ms = now_ms.saturating_add(delay_ms(&self.backoff, failures, jitter));
            *state = LinkState::Waiting { at_ms, failures };
        }
    }

    /// Friends whose dial time has come, in order; each is marked as dialling,
    /// so it is not returned again until its dial fails or its link drops.
    pub fn take_due(&mut self, now_ms: u64) -> Vec<P> {
        let mut due = Vec::new();
        for (peer, state) in self.links.iter_mut() {
            if let LinkState::Waiting { at_ms, failures } = *state
                && at_ms <= now_ms
            {
                *state = LinkState::Dialing { failures };
                due.push(peer.clone());
            }
        }
        due
    }

    /// The earliest time a friend becomes due, if any is waiting.
    pub fn next_wake_ms(&self) -> Option<u64> {
        self.links
            .values()
            .filter_map(|state| match state {
                LinkState::Waiting { at_ms, .. } => Some(*at_ms),
                _ => None,
            })
            .min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const B: Backoff = Backoff::new(Duration::from_secs(1), Duration::from_secs(10));
    const J: Jitter = Jitter::NONE;

    #[test]
    fn delay_doubles_and_is_capped() {
        let delays: Vec<u64> = (0..6).map(|f| delay_ms(&B, f, J)).collect();
        assert_eq!(delays, [1_000, 2_000, 4_000, 8_000, 10_000, 10_000]);
        assert_eq!(
            delay_ms(&B, 200, J),
            10_000,
            "huge failure counts do not overflow"
        );
        assert_eq!(delay_ms(&REDIAL_BACKOFF, u32::MAX, J), BACKOFF_CAP_MS);
    }

    #[test]
    fn jittered_friends_redial_at_different_times_within_the_range() {
        let mut plan = RedialPlan::new(B);
        for peer in ["a", "b"] {
            plan.add(peer, 0);
        }
        plan.take_due(0);
        plan.dial_failed(&"a", 0, Jitter::LEAST);
        plan.dial_failed(&"b", 0, Jitter::new(0.5));
        assert_eq!(
            plan.state(&"a"),
            Some(LinkState::Waiting {
                at_ms: 1_000,
                failures: 1
            }),
            "the least jitter waits half the 2 s ceiling"
        );
        assert_eq!(
            plan.state(&"b"),
            Some(LinkState::Waiting {
                at_ms: 1_500,
                failures: 1
            })
        );
        assert_eq!(plan.take_due(1_000), ["a"], "they no longer wake together");
    }

    #[test]
    fn five_hundred_friends_dropped_at_once_spread_their_redials() {
        // A club server restarts: every phone friend's link drops at the same
        // instant. With the driver's jitter their first redials spread over
        // the upper half of the base wait instead of arriving together.
        const FRIENDS: u32 = 500;
        let mut plan = RedialPlan::new(B);
        for peer in 0..FRIENDS {
            plan.add(peer, 0);
        }
        plan.take_due(0);
        for peer in 0..FRIENDS {
            plan.connected(&peer);
            let jitter = Jitter::new(f64::from(peer) / f64::from(FRIENDS));
            plan.disconnected(&peer, 10_000, jitter);
        }
        let mut at = Vec::new();
        for peer in 0..FRIENDS {
            match plan.state(&peer) {
                Some(LinkState::Waiting { at_ms, .. }) => at.push(at_ms),
                other => panic!("{peer} is {other:?}"),
            }
        }
        assert!(at.iter().all(|t| (10_500..=11_000).contains(t)), "{at:?}");
        let busiest = at
            .iter()
            .map(|t| at.iter().filter(|u| *u == t).count())
            .max()
            .unwrap_or(0);
        assert!(
            busiest <= 2,
            "{busiest} friends redial in the same millisecond"
        );
        assert_eq!(plan.take_due(10_499).len(), 0);
        assert_eq!(plan.take_due(11_000).len(), FRIENDS as usize);
    }

    #[test]
    fn new_friend_is_due_at_once_and_only_once() {
        let mut plan = RedialPlan::new(B);
        plan.add("a", 500);
        assert_eq!(plan.next_wake_ms(), Some(500));
        assert!(plan.take_due(499).is_empty());
        assert_eq!(plan.take_due(500), ["a"]);
        assert_eq!(plan.state(&"a"), Some(LinkState::Dialing { failures: 0 }));
        assert!(
            plan.take_due(10_000).is_empty(),
            "a dial under way is not repeated"
        );
        assert_eq!(plan.next_wake_ms(), None);
    }

    #[test]
    fn failed_dials_back_off_exponentially_up_to_the_cap() {
        let mut plan = RedialPlan::new(B);
        plan.add("a", 0);
        let mut now = 0;
        let mut waits = Vec::new();
        for _ in 0..6 {
            assert_eq!(plan.take_due(now), ["a"]);
            plan.dial_failed(&"a", now, J);
            let at = plan.next_wake_ms().unwrap();
            waits.push(at - now);
            assert!(plan.take_due(at - 1).is_empty(), "not due before its time");
            now = at;
        }
        assert_eq!(waits, [2_000, 4_000, 8_000, 10_000, 10_000, 10_000]);
    }

    #[test]
    fn connection_resets_failures_and_drop_redials_after_base() {
        let mut plan = RedialPlan::new(B);
        plan.add("a", 0);
        plan.take_due(0);
        plan.dial_failed(&"a", 0, J);
        plan.take_due(2_000);
        plan.dial_failed(&"a", 2_000, J);
        assert_eq!(
            plan.state(&"a"),
            Some(LinkState::Waiting {
                at_ms: 6_000,
                failures: 2
            })
        );
        plan.take_due(6_000);
        plan.connected(&"a");
        assert_eq!(plan.next_wake_ms(), None);
        plan.disconnected(&"a", 50_000, J);
        assert_eq!(
            plan.state(&"a"),
            Some(LinkState::Waiting {
                at_ms: 51_000,
                failures: 0
            })
        );
    }

    #[test]
    fn inbound_connection_while_waiting_cancels_the_dial() {
        let mut plan = RedialPlan::new(B);
        plan.add("a", 100);
        plan.connected(&"a");
        assert!(plan.take_due(1_000_000).is_empty());
    }

    #[test]
    fn late_failure_after_connect_is_ignored() {
        let mut plan = RedialPlan::new(B);
        plan.add("a", 0);
        plan.take_due(0);
        plan.connected(&"a");
        plan.dial_failed(&"a", 10, J);
        assert_eq!(plan.state(&"a"), Some(LinkState::Connected));
    }

    #[test]
    fn disconnect_of_a_peer_not_connected_changes_nothing() {
        let mut plan = RedialPlan::new(B);
        plan.add("a", 0);
        plan.take_due(0);
        plan.disconnected(&"a", 5, J);
        assert_eq!(plan.state(&"a"), Some(LinkState::Dialing { failures: 0 }));
    }

    #[test]
    fn removed_and_unknown_friends_are_never_dialled() {
        let mut plan = RedialPlan::new(B);
        plan.add("a", 0);
        plan.add("b", 0);
        plan.remove(&"a");
        plan.connected(&"zzz");
        plan.dial_failed(&"zzz", 0, J);
        plan.disconnected(&"zzz", 0, J);
        assert_eq!(plan.take_due(0), ["b"]);
        assert_eq!(plan.state(&"a"), None);
        assert_eq!(plan.state(&"zzz"), None);
    }

    #[test]
    fn re_adding_a_tracked_friend_keeps_its_backoff() {
        let mut plan = RedialPlan::new(B);
        plan.add("a", 0);
        plan.take_due(0);
        plan.dial_failed(&"a", 0, J);
        plan.add("a", 1);
        assert_eq!(
            plan.state(&"a"),
            Some(LinkState::Waiting {
                at_ms: 2_000,
                failures: 1
            })
        );
    }

    #[test]
    fn several_friends_wake_at_the_earliest_time() {
        let mut plan = RedialPlan::new(B);
        plan.add("b", 300);
        plan.add("a", 200);
        plan.add("c", 900);
        assert_eq!(plan.next_wake_ms(), Some(200));
        assert_eq!(plan.take_due(300), ["a", "b"]);
        assert_eq!(plan.next_wake_ms(), Some(900));
    }
}

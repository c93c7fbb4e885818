//! When catch-up sessions start: each friend's resync deadline in one
//! ordered set (so an input costs a look at the earliest deadline, not a
//! walk over every friend), spread by a jitter that is fixed per friend (so
//! a thousand phones that connected to a restarted server in the same
//! second do not all resync in the same second five minutes later, and the
//! same run gives the same outputs), and a cap on sessions this node runs
//! at once as initiator: friends past it wait in line, in order. A friend
//! whose sessions keep finding nothing to send is reconciled less often,
//! down to one session per `max_resync_interval_ms`: live push over a
//! connection loses nothing, and a new connection starts a session anyway.
//! A session that does find something brings the next one back within the
//! base interval (`end_quiet`).

use std::collections::{BTreeSet, VecDeque};

use super::Engine;
use super::output::Output;

/// Resync deadlines and the line of friends waiting for a session slot.
#[derive(Debug, Default)]
pub(super) struct Schedule {
    /// (deadline, friend), earliest first.
    due: BTreeSet<(u64, String)>,
    /// Friends whose session waits for a slot, first come first served.
    waiting: VecDeque<String>,
}

impl Schedule {
    /// Friends waiting for a session slot.
    pub(super) fn waiting_len(&self) -> usize {
        self.waiting.len()
    }

    /// The earliest resync deadline.
    pub(super) fn next_deadline(&self) -> Option<u64> {
        self.due.first().map(|(at, _)| *at)
    }
}

/// A friend's fixed share of the resync spread: FNV-1a over both peer ids,
/// in `[0, spread)`. Not a secret and not random: the same pair always gets
/// the same offset, so runs replay and friends spread evenly.
pub(super) fn resync_jitter_ms(local: &str, peer: &str, spread_ms: u64) -> u64 {
    if spread_ms == 0 {
        return 0;
    }
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in local.bytes().chain([0]).chain(peer.bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h % spread_ms
}

/// The resync interval after `quiet` sessions in a row that sent the friend
/// nothing: `base` doubled that many times, at most `max` (and never less
/// than `base`).
pub(super) fn resync_interval_ms(base: u64, max: u64, quiet: u32) -> u64 {
    base.checked_shl(quiet.min(16))
        .unwrap_or(u64::MAX)
        .min(max)
        .max(base)
}

impl Engine {
    /// `peer`'s next resync: one interval from `now_ms`, less its jitter
    /// (so it never comes later than the interval). The interval doubles
    /// with each session in a row that found nothing to send the friend, up
    /// to `max_resync_interval_ms` (see [`resync_interval_ms`]).
    pub(super) fn schedule_resync(&mut self, now_ms: u64, peer: &str, old: Option<u64>) -> u64 {
        if let Some(old) = old {
            self.schedule.due.remove(&(old, peer.to_owned()));
        }
        let quiet = self.peers.get(peer).map_or(0, |p| p.quiet_sessions);
        let interval = resync_interval_ms(
            self.cfg.resync_interval_ms,
            self.cfg.max_resync_interval_ms,
            quiet,
        );
        let jitter = resync_jitter_ms(&self.local, peer, self.cfg.resync_jitter_ms);
        let at = now_ms
            .saturating_add(interval)
            .saturating_sub(jitter)
            .max(now_ms.saturating_add(1));
        self.schedule.due.insert((at, peer.to_owned()));
        at
    }

    /// A session found something `peer` lacked: something was lost, so the
    /// back-off starts over, and a resync set far off while it was quiet
    /// comes within one base interval (this session may be cut too).
    pub(super) fn end_quiet(&mut self, now_ms: u64, peer: &str) {
        let Some(p) = self.peers.get_mut(peer) else {
            return;
        };
        p.quiet_sessions = 0;
        let old = p.next_resync_ms;
        if old > now_ms.saturating_add(self.cfg.resync_interval_ms) {
            let next = self.schedule_resync(now_ms, peer, Some(old));
            if let Some(p) = self.peers.get_mut(peer) {
                p.next_resync_ms = next;
            }
        }
    }

    /// Forgets `peer`'s deadline (it disconnected).
    pub(super) fn unschedule(&mut self, peer: &str, at: u64) {
        self.schedule.due.remove(&(at, peer.to_owned()));
        self.schedule.waiting.retain(|p| p != peer);
    }

    /// Starts the sessions whose resync is due, and re-arms their deadline.
    pub(super) fn resync_due(&mut self, now_ms: u64, out: &mut Vec<Output>) {
        while let Some((at, _)) = self.schedule.due.first() {
            if *at > now_ms {
                break;
            }
            let Some((_, peer)) = self.schedule.due.pop_first() else {
                break;
            };
            let next = self.schedule_resync(now_ms, &peer, None);
            if let Some(p) = self.peers.get_mut(&peer) {
                p.next_resync_ms = next;
            }
            self.request_session(now_ms, &peer, out);
        }
    }

    /// Starts a session toward `peer` now if a slot is free, else puts it
    /// in line (once).
    pub(super) fn request_session(&mut self, now_ms: u64, peer: &str, out: &mut Vec<Output>) {
        if self.sync.runs_session_to(peer) {
            return;
        }
        if self.sync.initiated() < self.cfg.max_outbound_sessions.max(1) {
            self.start_outbound_sync(now_ms, peer, out);
        } else if !self.schedule.waiting.iter().any(|p| p == peer) {
            self.schedule.waiting.push_back(peer.to_owned());
        }
    }

    /// Starts waiting sessions while slots are free.
    pub(super) fn start_waiting(&mut self, now_ms: u64, out: &mut Vec<Output>) {
        while self.sync.initiated() < self.cfg.max_outbound_sessions.max(1) {
            let Some(peer) = self.schedule.waiting.pop_front() else {
                return;
            };
            if self.peers.contains_key(&peer) {
                self.start_outbound_sync(now_ms, &peer, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quiet_sessions_double_the_interval_up_to_the_cap() {
        let base = 300_000;
        let max = 1_800_000;
        let seen: Vec<u64> = (0..6).map(|q| resync_interval_ms(base, max, q)).collect();
        assert_eq!(
            seen,
            [300_000, 600_000, 1_200_000, 1_800_000, 1_800_000, 1_800_000]
        );
        assert_eq!(resync_interval_ms(base, max, u32::MAX), max);
        assert_eq!(resync_interval_ms(base, base / 2, 3), base);
    }

    #[test]
    fn jitter_is_fixed_per_pair_within_the_spread_and_spreads_friends() {
        let a = resync_jitter_ms("me", "friend-1", 30_000);
        assert_eq!(a, resync_jitter_ms("me", "friend-1", 30_000));
        assert!(a < 30_000);
        assert_eq!(resync_jitter_ms("me", "friend-1", 0), 0);
        let spread: BTreeSet<u64> = (0..1_000)
            .map(|i| resync_jitter_ms("me", &format!("friend-{i}"), 30_000) / 1_000)
            .collect();
        assert!(
            spread.len() >= 29,
            "1,000 friends cover the 30 one-second slots"
        );
    }
}

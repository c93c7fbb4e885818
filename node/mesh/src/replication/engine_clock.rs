//! The engine's clock: Unix milliseconds that never go backwards and that
//! advance with the monotonic clock. Item times and expiry are wall-clock
//! facts (an author's `created_ms`, `expires_ms`), so the engine runs in
//! Unix ms; but its deadlines (push batching, want timeouts, session idle
//! timeouts, resync) must not wait longer when a phone's wall clock is set
//! back. So each reading is the later of (last reading + monotonic time
//! since) and the wall clock: a jump back is ignored (time goes on from
//! where it was at the monotonic pace), a jump forward is followed (expired
//! items go, due timers fire). Pure: the caller passes both readings.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use porfiry_skills::Clock;

/// The node's engine time, read by the loop and by the verify stage (which
/// judges expiry at the same time the engine would): the node's clock
/// through an [`EngineClock`], with a monotonic origin of its own.
pub struct EngineTime {
    clock: Arc<dyn Clock>,
    started: Instant,
    state: Mutex<EngineClock>,
}

impl EngineTime {
    /// Starts at the clock's time now.
    pub fn new(clock: Arc<dyn Clock>) -> EngineTime {
        let now = clock.now().unix_ms();
        EngineTime {
            clock,
            started: Instant::now(),
            state: Mutex::new(EngineClock::new(now, 0)),
        }
    }

    /// Engine time now (Unix ms, never going back).
    pub fn now(&self) -> u64 {
        let mono = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let wall = self.clock.now().unix_ms();
        // A reader that panicked left a consistent `EngineClock` (two u64s
        // written together); time goes on.
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.now(wall, mono)
    }
}

impl std::fmt::Debug for EngineTime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EngineTime").finish_non_exhaustive()
    }
}

/// Engine time from wall and monotonic readings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineClock {
    last_ms: u64,
    last_mono_ms: u64,
}

impl EngineClock {
    /// Starts at wall time `wall_ms`, monotonic reading `mono_ms`.
    pub fn new(wall_ms: u64, mono_ms: u64) -> EngineClock {
        EngineClock {
            last_ms: wall_ms,
            last_mono_ms: mono_ms,
        }
    }

    /// Engine time now, given the wall clock and the monotonic clock (any
    /// origin, in ms; it never goes back).
    pub fn now(&mut self, wall_ms: u64, mono_ms: u64) -> u64 {
        let elapsed = mono_ms.saturating_sub(self.last_mono_ms);
        let by_mono = self.last_ms.saturating_add(elapsed);
        let now = by_mono.max(wall_ms);
        self.last_ms = now;
        self.last_mono_ms = self.last_mono_ms.max(mono_ms);
        now
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WALL: u64 = 1_750_000_000_000;

    #[test]
    fn follows_the_wall_clock_while_it_runs_true() {
        let mut c = EngineClock::new(WALL, 0);
        assert_eq!(c.now(WALL + 500, 500), WALL + 500);
        assert_eq!(c.now(WALL + 1_000, 1_000), WALL + 1_000);
    }

    #[test]
    fn a_clock_set_back_does_not_delay_timers() {
        let mut c = EngineClock::new(WALL, 0);
        // The phone's clock is set back an hour after 10 s.
        let now = c.now(WALL + 10_000 - 3_600_000, 10_000);
        assert_eq!(now, WALL + 10_000, "time goes on at the monotonic pace");
        // A deadline 30 s later still comes 30 s later.
        let deadline = now + 30_000;
        assert!(c.now(WALL - 3_600_000 + 39_999, 39_999) < deadline);
        assert_eq!(c.now(WALL - 3_600_000 + 40_000, 40_000), deadline);
    }

    #[test]
    fn engine_time_reads_the_nodes_clock_and_ignores_it_going_back() {
        use porfiry_skills::{Clock, ManualClock, SystemClock};
        let clock = ManualClock::new(SystemClock::utc().now());
        let time = EngineTime::new(Arc::new(clock.clone()));
        let start = clock.now().unix_ms();
        assert!(time.now() >= start);
        clock.advance_ms(60_000);
        let later = time.now();
        assert!(later >= start + 60_000, "a clock set forward is followed");
        clock.advance_ms(-3_600_000);
        assert!(time.now() >= later, "a clock set back is not");
    }

    #[test]
    fn a_clock_set_forward_is_followed_and_time_never_goes_back() {
        let mut c = EngineClock::new(WALL, 0);
        assert_eq!(c.now(WALL + 3_600_000, 1_000), WALL + 3_600_000);
        assert_eq!(c.now(WALL + 2_000, 2_000), WALL + 3_601_000);
        // A monotonic reading out of order changes nothing backwards.
        assert_eq!(c.now(0, 1_500), WALL + 3_601_000);
    }
}

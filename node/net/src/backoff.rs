//! The one exponential backoff of the node, with injected jitter: LLM retries
//! (the agent's `llm::retry`) and mesh redials (`redial`) both wait with it.
//!
//! Pure arithmetic. The random part comes in as a [`Jitter`] that the caller
//! draws at the IO edge ([`Jitter::random`]), so tests pass exact fractions.
//! Why jitter: without it every phone of a family redials a restarted home
//! server at the same instants (1 s, 2 s, 4 s, … after it went away), and a
//! burst of chat retries hits a model that is still loading in lock-step.
//!
//! The schedule is "equal jitter": the `n`-th wait lies in
//! `[ceiling/2, ceiling]` where `ceiling = base·2^n`, capped. Half the wait is
//! kept so that a backoff still backs off; the other half spreads the herd.

use std::time::Duration;

/// Exponential backoff: `base·2^attempt`, never above `cap`, jittered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// The ceiling of the first wait (`attempt` 0).
    pub base: Duration,
    /// The longest ceiling, whatever the attempt.
    pub cap: Duration,
}

impl Backoff {
    /// A backoff from `base`, doubling up to `cap`.
    pub const fn new(base: Duration, cap: Duration) -> Self {
        Self { base, cap }
    }

    /// The longest wait before the `attempt`-th try after a failure (0 = the
    /// first): `base·2^attempt`, never above `cap`, never overflowing.
    pub fn ceiling(&self, attempt: u32) -> Duration {
        let factor = 1u32.checked_shl(attempt.min(31)).unwrap_or(u32::MAX);
        self.base
            .checked_mul(factor)
            .unwrap_or(self.cap)
            .min(self.cap)
    }

    /// The wait before the `attempt`-th try: half the [`ceiling`](Self::ceiling)
    /// plus `jitter`'s share of the other half.
    pub fn delay(&self, attempt: u32, jitter: Jitter) -> Duration {
        let ceiling = self.ceiling(attempt);
        let half = ceiling / 2;
        half + (ceiling - half).mul_f64(jitter.0)
    }
}

/// Where in its jitter range one wait falls: a fraction in `[0, 1]`,
/// 0 = half the ceiling, 1 = the whole ceiling.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct Jitter(f64);

impl Jitter {
    /// The whole ceiling: no spreading (tests that want exact doubling).
    pub const NONE: Jitter = Jitter(1.0);
    /// The shortest wait of the range: half the ceiling.
    pub const LEAST: Jitter = Jitter(0.0);

    /// A fraction, clamped into `[0, 1]` (NaN counts as 1: no spreading).
    pub fn new(fraction: f64) -> Self {
        if fraction.is_nan() {
            Self::NONE
        } else {
            Jitter(fraction.clamp(0.0, 1.0))
        }
    }

    /// A fraction drawn from the OS random source. Should the OS give no
    /// random bytes, the wait is simply not spread ([`Jitter::NONE`]): jitter
    /// is a courtesy to the server, not a correctness matter.
    pub fn random() -> Self {
        match getrandom::u32() {
            Ok(bits) => Jitter(f64::from(bits) / f64::from(u32::MAX)),
            Err(_) => Self::NONE,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_secs(1);
    const B: Backoff = Backoff::new(S, Duration::from_secs(10));

    #[test]
    fn ceiling_doubles_and_is_capped_without_overflow() {
        let ceilings: Vec<u64> = (0..6).map(|n| B.ceiling(n).as_secs()).collect();
        assert_eq!(ceilings, [1, 2, 4, 8, 10, 10]);
        assert_eq!(B.ceiling(u32::MAX), B.cap);
        assert_eq!(Backoff::new(Duration::MAX, S).ceiling(3), S);
        assert_eq!(Backoff::new(Duration::ZERO, S).ceiling(5), Duration::ZERO);
    }

    #[test]
    fn no_jitter_is_the_ceiling_and_least_jitter_is_half_of_it() {
        for n in 0..8 {
            assert_eq!(B.delay(n, Jitter::NONE), B.ceiling(n));
            assert_eq!(B.delay(n, Jitter::LEAST), B.ceiling(n) / 2);
        }
    }

    #[test]
    fn jitter_spreads_waits_linearly_within_the_range() {
        assert_eq!(B.delay(2, Jitter::new(0.5)), Duration::from_secs(3));
        assert_eq!(B.delay(1, Jitter::new(0.25)), Duration::from_millis(1_250));
        let a = B.delay(3, Jitter::new(0.1));
        let b = B.delay(3, Jitter::new(0.9));
        assert!(a < b, "two nodes with different draws wait differently");
    }

    #[test]
    fn out_of_range_fractions_are_clamped() {
        assert_eq!(Jitter::new(-3.0), Jitter::LEAST);
        assert_eq!(Jitter::new(7.0), Jitter::NONE);
        assert_eq!(Jitter::new(f64::NAN), Jitter::NONE);
    }

    #[test]
    fn random_draws_stay_in_range_and_vary() {
        let draws: Vec<Jitter> = (0..64).map(|_| Jitter::random()).collect();
        assert!(draws.iter().all(|j| (0.0..=1.0).contains(&j.0)));
        assert!(
            draws.iter().any(|j| *j != draws[0]),
            "64 draws from the OS source are not all equal"
        );
    }
}

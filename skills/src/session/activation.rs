//! Which toolsets one session has switched on: set → deadline (ms). A set
//! stays active until `idle_ms` after the last call of one of its tools;
//! expiry is checked lazily when the prompt is built (seed §5): no timers,
//! nothing persisted.

use std::collections::BTreeMap;

/// One session's active toolsets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Activation {
    idle_ms: u64,
    deadlines: BTreeMap<String, u64>,
}

impl Activation {
    /// No set active; each stays `idle_ms` after its last use.
    pub fn new(idle_ms: u64) -> Self {
        Self {
            idle_ms,
            deadlines: BTreeMap::new(),
        }
    }

    /// Activates `set`, or extends its deadline: now + idle time. Returns
    /// whether it was already active.
    pub fn touch(&mut self, set: &str, now_ms: u64) -> bool {
        let deadline = now_ms.saturating_add(self.idle_ms);
        match self.deadlines.get_mut(set) {
            Some(d) => {
                *d = deadline;
                true
            }
            None => {
                self.deadlines.insert(set.to_owned(), deadline);
                false
            }
        }
    }

    /// Switches `set` off; returns whether it was active.
    pub fn deactivate(&mut self, set: &str) -> bool {
        self.deadlines.remove(set).is_some()
    }

    /// Switches every set off; returns the names that were active.
    pub fn deactivate_all(&mut self) -> Vec<String> {
        std::mem::take(&mut self.deadlines).into_keys().collect()
    }

    /// Drops sets whose deadline has passed (`now > deadline`) and returns
    /// their names. Called when a prompt is built.
    pub fn expire(&mut self, now_ms: u64) -> Vec<String> {
        let stale: Vec<String> = self
            .deadlines
            .iter()
            .filter(|(_, deadline)| now_ms > **deadline)
            .map(|(set, _)| set.clone())
            .collect();
        for set in &stale {
            self.deadlines.remove(set);
        }
        stale
    }

    /// Whether `set` is active as of the last [`Activation::expire`].
    pub fn is_active(&self, set: &str) -> bool {
        self.deadlines.contains_key(set)
    }

    /// The deadline of `set`, if active.
    pub fn deadline(&self, set: &str) -> Option<u64> {
        self.deadlines.get(set).copied()
    }

    /// Active set names, in order.
    pub fn active(&self) -> impl Iterator<Item = &str> {
        self.deadlines.keys().map(String::as_str)
    }

    /// Whether any set is active.
    pub fn is_empty(&self) -> bool {
        self.deadlines.is_empty()
    }

    /// The idle time this session uses.
    pub fn idle_ms(&self) -> u64 {
        self.idle_ms
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: u64 = 60_000;

    #[test]
    fn a_call_at_nine_fifty_nine_extends_and_past_ten_the_set_is_gone() {
        let mut a = Activation::new(10 * MIN);
        assert!(!a.touch("media", 0));
        assert!(a.expire(10 * MIN - 1_000).is_empty());
        assert!(
            a.touch("media", 10 * MIN - 1_000),
            "9:59: still active, extended"
        );
        assert_eq!(a.deadline("media"), Some(20 * MIN - 1_000));
        assert!(
            a.expire(10 * MIN + 1).is_empty(),
            "the first deadline no longer counts"
        );
        assert!(a.is_active("media"));
        assert!(
            a.expire(20 * MIN - 1_000).is_empty(),
            "exactly at the deadline it is still active"
        );
        assert_eq!(a.expire(20 * MIN - 999), ["media"]);
        assert!(!a.is_active("media"));
        assert!(a.is_empty());
    }

    #[test]
    fn deactivation_is_idempotent() {
        let mut a = Activation::new(MIN);
        a.touch("web", 0);
        a.touch("media", 0);
        assert_eq!(a.active().collect::<Vec<_>>(), ["media", "web"]);
        assert!(a.deactivate("web"));
        assert!(!a.deactivate("web"));
        assert_eq!(a.deactivate_all(), ["media"]);
        assert!(a.deactivate_all().is_empty());
        assert_eq!(a.idle_ms(), MIN);
    }

    #[test]
    fn a_huge_idle_time_saturates_instead_of_overflowing() {
        let mut a = Activation::new(u64::MAX);
        a.touch("media", 5);
        assert_eq!(a.deadline("media"), Some(u64::MAX));
        assert!(a.expire(u64::MAX).is_empty());
    }
}

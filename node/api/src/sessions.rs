//! The session store (pure): one value per session key, dropped after
//! [`SESSION_IDLE_TTL`](super::limits::SESSION_IDLE_TTL) unused and, at the
//! cap, least recently used first. Time comes in as a number (unix ms from
//! the injected clock), so tests step it by hand.
//!
//! A session's value sits behind an async mutex: one turn at a time per
//! session; a second request for the same key waits for the first. An
//! evicted session that is mid-turn finishes that turn (the request holds
//! it) and is then dropped.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

/// A shared session value.
pub type Shared<S> = Arc<tokio::sync::Mutex<S>>;

struct Entry<S> {
    value: Shared<S>,
    last_used_ms: u64,
}

/// Sessions by key, with an idle TTL and an LRU cap.
pub struct SessionStore<S> {
    entries: HashMap<String, Entry<S>>,
    ttl_ms: u64,
    cap: usize,
}

impl<S> SessionStore<S> {
    /// An empty store; `cap` is at least 1.
    pub fn new(ttl: Duration, cap: usize) -> Self {
        Self {
            entries: HashMap::new(),
            ttl_ms: u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX),
            cap: cap.max(1),
        }
    }

    /// The session under `key`, made with `make` when there is none (or it
    /// expired); `true` when it was made now. Touches its last use.
    pub fn get_or_insert_with(
        &mut self,
        key: &str,
        now_ms: u64,
        make: impl FnOnce() -> S,
    ) -> (Shared<S>, bool) {
        self.expire(now_ms);
        if let Some(entry) = self.entries.get_mut(key) {
            entry.last_used_ms = entry.last_used_ms.max(now_ms);
            return (entry.value.clone(), false);
        }
        while self.entries.len() >= self.cap {
            let oldest = self
                .entries
                .iter()
                .min_by_key(|(_, e)| e.last_used_ms)
                .map(|(k, _)| k.clone());
            match oldest {
                Some(k) => {
                    tracing::debug!(session = %k, "session evicted: the store is at its cap");
                    self.entries.remove(&k);
                }
                None => break,
            }
        }
        let value = Arc::new(tokio::sync::Mutex::new(make()));
        self.entries.insert(
            key.to_owned(),
            Entry {
                value: value.clone(),
                last_used_ms: now_ms,
            },
        );
        (value, true)
    }

    /// Drops sessions idle for longer than the TTL.
    pub fn expire(&mut self, now_ms: u64) {
        let ttl = self.ttl_ms;
        self.entries
            .retain(|_, e| now_ms.saturating_sub(e.last_used_ms) <= ttl);
    }

    /// Sessions held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether a session is held under `key` (expired ones included until
    /// the next call that expires them).
    #[cfg(test)]
    pub fn contains(&self, key: &str) -> bool {
        self.entries.contains_key(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TTL: Duration = Duration::from_secs(60);

    #[test]
    fn one_key_gets_one_session_until_it_idles_past_the_ttl() {
        let mut store = SessionStore::new(TTL, 8);
        let (a, made) = store.get_or_insert_with("ann", 0, || 1);
        assert!(made);
        let (again, made) = store.get_or_insert_with("ann", 60_000, || 2);
        assert!(!made);
        assert!(Arc::ptr_eq(&a, &again));
        // Used at 60 s: alive at 120 s, gone after.
        assert!(!store.get_or_insert_with("ann", 120_000, || 3).1);
        let (fresh, made) = store.get_or_insert_with("ann", 180_001, || 4);
        assert!(made);
        assert_eq!(*fresh.try_lock().unwrap(), 4);
    }

    #[test]
    fn expiry_drops_every_idle_session_not_only_the_one_asked_for() {
        let mut store = SessionStore::new(TTL, 8);
        store.get_or_insert_with("a", 0, || ());
        store.get_or_insert_with("b", 50_000, || ());
        store.get_or_insert_with("c", 100_000, || ());
        assert_eq!(store.len(), 2, "a idled 100 s");
        assert!(!store.contains("a"));
    }

    #[test]
    fn at_the_cap_the_least_recently_used_session_goes() {
        let mut store = SessionStore::new(TTL, 3);
        store.get_or_insert_with("a", 1, || ());
        store.get_or_insert_with("b", 2, || ());
        store.get_or_insert_with("c", 3, || ());
        store.get_or_insert_with("a", 4, || ()); // a is now the most recent
        store.get_or_insert_with("d", 5, || ());
        assert_eq!(store.len(), 3);
        assert!(!store.contains("b"), "b was least recently used");
        for k in ["a", "c", "d"] {
            assert!(store.contains(k), "{k}");
        }
    }

    #[test]
    fn a_session_in_use_survives_its_eviction_for_its_holder() {
        let mut store = SessionStore::new(TTL, 1);
        let (a, _) = store.get_or_insert_with("a", 1, || 7);
        let guard = a.try_lock().unwrap();
        store.get_or_insert_with("b", 2, || 8);
        assert!(!store.contains("a"));
        assert_eq!(*guard, 7);
    }
}

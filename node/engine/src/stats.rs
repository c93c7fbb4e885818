//! Counters the inference thread keeps and tests and benches read: tokens
//! decoded (prompt and answer), prompt tokens reused from the KV cache,
//! requests finished and cancelled. A condition variable lets a caller wait
//! until a number of requests has finished (tests use it instead of sleeping).

use std::sync::{Condvar, Mutex, PoisonError};

/// A snapshot of an engine's counters since it was opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EngineStats {
    /// Tokens that went through `llama_decode`: prompt suffixes and answers.
    pub decoded_tokens: u64,
    /// Prompt tokens that were already in the KV cache and not decoded again.
    pub reused_tokens: u64,
    /// Requests the thread has finished (answered, failed or cancelled).
    pub requests: u64,
    /// Of those, requests whose reader went away before the answer ended.
    pub cancelled: u64,
    /// Answer tokens the reply grammar refused, sampled again among the
    /// candidates it allows (how often the grammar changed the answer).
    pub grammar_resamples: u64,
}

/// The shared counters.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    stats: Mutex<EngineStats>,
    finished: Condvar,
}

#[cfg_attr(not(feature = "llama"), allow(dead_code))]
impl Counters {
    pub(crate) fn snapshot(&self) -> EngineStats {
        *self.stats.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn update(&self, f: impl FnOnce(&mut EngineStats)) {
        f(&mut self.stats.lock().unwrap_or_else(PoisonError::into_inner));
    }

    pub(crate) fn finish(&self, cancelled: bool) {
        self.update(|s| {
            s.requests += 1;
            s.cancelled += u64::from(cancelled);
        });
        self.finished.notify_all();
    }

    /// Blocks until at least `requests` requests have finished.
    pub(crate) fn wait_for(&self, requests: u64) -> EngineStats {
        let mut stats = self.stats.lock().unwrap_or_else(PoisonError::into_inner);
        while stats.requests < requests {
            stats = self
                .finished
                .wait(stats)
                .unwrap_or_else(PoisonError::into_inner);
        }
        *stats
    }
}

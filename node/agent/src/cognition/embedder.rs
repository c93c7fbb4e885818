//! Embeddings for the stagnation detectors and the flashback choice, asked
//! of the tick's own model ([`porfiry_skills::Llm::embed`]): a backend
//! without them (most chat-only servers, a friend's model) is not asked again
//! for [`EMBED_RETRY_TICKS`] ticks, and a slow one is given up on after
//! [`EMBED_TIMEOUT`]; either way the callers compare words instead.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use porfiry_skills::llm::{Llm, LlmError};

/// An embeddings call gives up after this long: the vector of one reply
/// takes milliseconds on a server; a call that takes longer is not worth
/// holding the tick for.
pub const EMBED_TIMEOUT: Duration = Duration::from_secs(15);

/// Ticks without asking again after a backend said it has no embeddings or
/// failed: about 25 minutes at the default pause, so a server that gains
/// the route (restarted with `--embeddings`) is found again the same hour.
pub const EMBED_RETRY_TICKS: u64 = 50;

/// Asks a model for embeddings unless it recently could not give them.
#[derive(Debug, Default)]
pub struct Embedder {
    /// No asking before this tick.
    off_until: AtomicU64,
}

impl Embedder {
    /// Asks whenever a model is given.
    pub fn new() -> Self {
        Self::default()
    }

    /// One vector per text from `llm`, or `None` (no model, the backend
    /// has none or failed, recently failed, or answered with another count).
    pub async fn embed(
        &self,
        llm: Option<&dyn Llm>,
        texts: &[String],
        tick: u64,
    ) -> Option<Vec<Vec<f32>>> {
        let llm = llm?;
        if texts.is_empty() || tick < self.off_until.load(Ordering::Relaxed) {
            return None;
        }
        let off = || {
            self.off_until
                .store(tick.saturating_add(EMBED_RETRY_TICKS), Ordering::Relaxed);
        };
        match tokio::time::timeout(EMBED_TIMEOUT, llm.embed(texts)).await {
            Ok(Ok(vectors)) if vectors.len() == texts.len() => Some(vectors),
            Ok(Ok(vectors)) => {
                tracing::warn!(
                    got = vectors.len(),
                    asked = texts.len(),
                    "embeddings: wrong count; comparing words"
                );
                off();
                None
            }
            Ok(Err(LlmError::Unsupported { .. })) => {
                tracing::debug!(model = %llm.model_name(), "no embeddings; comparing words");
                off();
                None
            }
            Ok(Err(e)) => {
                tracing::info!(error = %e, "embeddings failed; comparing words");
                off();
                None
            }
            Err(_) => {
                tracing::info!(
                    timeout_s = EMBED_TIMEOUT.as_secs(),
                    "embeddings timed out; comparing words"
                );
                off();
                None
            }
        }
    }
}

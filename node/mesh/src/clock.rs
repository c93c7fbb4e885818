//! The node's one wall clock read. Items carry their author's Unix
//! milliseconds (`created_ms`, `expires_ms`), so the engine is driven in the
//! same unit; everything below this takes `now_ms` as an argument.

use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch (0 if the clock is set before 1970).
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn now_is_after_2024_and_moves_forward() {
        let a = now_ms();
        assert!(a > 1_700_000_000_000, "{a}");
        assert!(now_ms() >= a);
    }
}

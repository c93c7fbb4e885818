//! What the node-level tests share: waiting for a condition with a
//! deadline (a bounded poll, never a fixed sleep).

use std::future::Future;
use std::time::Duration;

/// How long a condition may take before the test fails: connections,
/// links and catch-ups on loopback take milliseconds; 60 s only trips on a
/// real hang on a loaded 2-core machine.
pub const DEADLINE: Duration = Duration::from_secs(60);

/// Between two looks at a condition.
pub const POLL: Duration = Duration::from_millis(20);

/// Polls `check` until it gives `Some`, failing after [`DEADLINE`].
pub async fn eventually<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + DEADLINE;
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(POLL).await;
    }
}

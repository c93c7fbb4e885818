//! When to retry a chat call and how long to wait first: pure arithmetic, no
//! clock. The wait is the node's one [`Backoff`], jittered by the caller.

use std::time::Duration;

use porfiry_mesh::backoff::{Backoff, Jitter};

/// Longest single wait between attempts, whatever the backoff or the server's
/// `Retry-After` says: a chat user should not wait more than half a minute for one retry.
pub const MAX_RETRY_DELAY: Duration = Duration::from_secs(30);

/// Whether an HTTP status is worth another attempt: 429 (rate limited) and 5xx (server
/// failing, often a model still loading).
pub fn is_retryable_status(status: u16) -> bool {
    status == 429 || (500..=599).contains(&status)
}

/// Seconds from a `Retry-After` header in its delta-seconds form; the HTTP-date form and
/// anything unparsable give `None` (the backoff applies then).
pub fn parse_retry_after(header: Option<&str>) -> Option<Duration> {
    header?.trim().parse::<u64>().ok().map(Duration::from_secs)
}

/// Wait before the `retry`-th retry (0 = first): the jittered backoff from `base`
/// (doubling, capped at [`MAX_RETRY_DELAY`]), or the server's `Retry-After` when that
/// is longer, never above [`MAX_RETRY_DELAY`].
pub fn retry_delay(
    base: Duration,
    retry: u32,
    retry_after: Option<Duration>,
    jitter: Jitter,
) -> Duration {
    let own = Backoff::new(base, MAX_RETRY_DELAY).delay(retry, jitter);
    retry_after
        .map_or(own, |ra| ra.max(own))
        .min(MAX_RETRY_DELAY)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn retries_429_and_5xx_only() {
        for s in [429, 500, 502, 503, 504, 599] {
            assert!(is_retryable_status(s), "{s}");
        }
        for s in [200, 400, 401, 403, 404, 408, 422, 600] {
            assert!(!is_retryable_status(s), "{s}");
        }
    }

    #[test]
    fn backoff_doubles_and_is_capped() {
        let base = Duration::from_millis(500);
        let none = |retry| retry_delay(base, retry, None, Jitter::NONE);
        assert_eq!(none(0), base);
        assert_eq!(none(1), 2 * base);
        assert_eq!(none(2), 4 * base);
        assert_eq!(none(10), MAX_RETRY_DELAY);
        assert_eq!(none(40), MAX_RETRY_DELAY);
        assert_eq!(
            retry_delay(Duration::MAX, 3, None, Jitter::NONE),
            MAX_RETRY_DELAY
        );
        assert_eq!(retry_delay(base, 2, None, Jitter::LEAST), 2 * base);
    }

    #[test]
    fn retry_after_takes_seconds_only() {
        assert_eq!(parse_retry_after(Some(" 7 ")), Some(Duration::from_secs(7)));
        assert_eq!(
            parse_retry_after(Some("Wed, 21 Oct 2015 07:28:00 GMT")),
            None
        );
        assert_eq!(parse_retry_after(Some("-1")), None);
        assert_eq!(parse_retry_after(None), None);
    }

    #[test]
    fn delay_takes_the_longer_of_backoff_and_retry_after_within_the_cap() {
        const J: Jitter = Jitter::NONE;
        assert_eq!(retry_delay(MS, 1, None, J), 2 * MS);
        assert_eq!(
            retry_delay(MS, 0, Some(Duration::from_secs(2)), J),
            Duration::from_secs(2)
        );
        assert_eq!(
            retry_delay(Duration::from_secs(4), 0, Some(MS), J),
            Duration::from_secs(4)
        );
        assert_eq!(
            retry_delay(Duration::from_secs(4), 0, Some(MS), Jitter::LEAST),
            Duration::from_secs(2),
            "the jittered backoff, when still longer than Retry-After"
        );
        assert_eq!(
            retry_delay(MS, 0, Some(Duration::from_secs(3600)), J),
            MAX_RETRY_DELAY
        );
    }
}

//! When to retry a chat call and how long to wait first: pure arithmetic, no clock.

use std::time::Duration;

/// Longest single wait between attempts, whatever the backoff or the server's
/// `Retry-After` says: a chat user should not wait more than half a minute for one retry.
pub const MAX_RETRY_DELAY: Duration = Duration::from_secs(30);

/// Whether an HTTP status is worth another attempt: 429 (rate limited) and 5xx (server
/// failing, often a model still loading).
pub fn is_retryable_status(status: u16) -> bool {
    status == 429 || (500..=599).contains(&status)
}

/// Exponential backoff: `base × 2^retry` for the `retry`-th retry (0 = first), capped at
/// [`MAX_RETRY_DELAY`].
pub fn backoff(base: Duration, retry: u32) -> Duration {
    let factor = 1u32.checked_shl(retry.min(31)).unwrap_or(u32::MAX);
    base.checked_mul(factor)
        .unwrap_or(MAX_RETRY_DELAY)
        .min(MAX_RETRY_DELAY)
}

/// Seconds from a `Retry-After` header in its delta-seconds form; the HTTP-date form and
/// anything unparsable give `None` (the backoff applies then).
pub fn parse_retry_after(header: Option<&str>) -> Option<Duration> {
    header?.trim().parse::<u64>().ok().map(Duration::from_secs)
}

/// Wait before the `retry`-th retry: the backoff, or the server's `Retry-After` when that is
/// longer, never above [`MAX_RETRY_DELAY`].
pub fn retry_delay(base: Duration, retry: u32, retry_after: Option<Duration>) -> Duration {
    let own = backoff(base, retry);
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
        assert_eq!(backoff(base, 0), base);
        assert_eq!(backoff(base, 1), 2 * base);
        assert_eq!(backoff(base, 2), 4 * base);
        assert_eq!(backoff(base, 10), MAX_RETRY_DELAY);
        assert_eq!(backoff(base, 40), MAX_RETRY_DELAY);
        assert_eq!(backoff(Duration::MAX, 3), MAX_RETRY_DELAY);
        assert_eq!(backoff(Duration::ZERO, 5), Duration::ZERO);
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
        assert_eq!(retry_delay(MS, 1, None), 2 * MS);
        assert_eq!(
            retry_delay(MS, 0, Some(Duration::from_secs(2))),
            Duration::from_secs(2)
        );
        assert_eq!(
            retry_delay(Duration::from_secs(4), 0, Some(MS)),
            Duration::from_secs(4)
        );
        assert_eq!(
            retry_delay(MS, 0, Some(Duration::from_secs(3600))),
            MAX_RETRY_DELAY
        );
    }
}

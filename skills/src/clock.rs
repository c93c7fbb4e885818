//! The injected clock: "now" as a zoned date-time. Logic never reads the wall
//! clock itself; drivers pass [`ZonedTime`] in, tests advance a [`ManualClock`].

use std::sync::{Arc, Mutex, PoisonError};

use time::format_description::well_known::Rfc3339;
use time::{Duration, OffsetDateTime, UtcOffset};

/// A moment with its UTC offset and the name of its time zone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZonedTime {
    /// The moment, in the zone's offset.
    pub at: OffsetDateTime,
    /// The zone's name, e.g. `Europe/Moscow` (or `UTC`).
    pub zone: String,
}

impl ZonedTime {
    /// Builds a zoned time.
    pub fn new(at: OffsetDateTime, zone: impl Into<String>) -> Self {
        Self {
            at,
            zone: zone.into(),
        }
    }

    /// Milliseconds since the Unix epoch; moments before 1970 count as 0.
    pub fn unix_ms(&self) -> u64 {
        let ms = self.at.unix_timestamp_nanos() / 1_000_000;
        u64::try_from(ms).unwrap_or(0)
    }

    /// ISO 8601 (RFC 3339 profile) to the second with the offset, e.g.
    /// `2026-08-22T14:05:00+03:00`.
    pub fn iso8601(&self) -> String {
        let whole_seconds = self.at.replace_nanosecond(0).unwrap_or(self.at);
        // Formatting a valid OffsetDateTime as RFC 3339 fails only for years
        // outside 0..=9999 or offsets with seconds; fall back to the Debug form.
        whole_seconds
            .format(&Rfc3339)
            .unwrap_or_else(|_| format!("{whole_seconds}"))
    }
}

/// Where "now" comes from.
pub trait Clock: Send + Sync {
    /// The current moment in the node's zone.
    fn now(&self) -> ZonedTime;
}

/// The wall clock in a fixed offset. Reading the offset of the OS zone is the
/// binary's job (it is IO); it passes the offset and zone name in.
#[derive(Debug, Clone)]
pub struct SystemClock {
    offset: UtcOffset,
    zone: String,
}

impl SystemClock {
    /// The wall clock shown in `offset`, named `zone`.
    pub fn new(offset: UtcOffset, zone: impl Into<String>) -> Self {
        Self {
            offset,
            zone: zone.into(),
        }
    }

    /// The wall clock in UTC.
    pub fn utc() -> Self {
        Self::new(UtcOffset::UTC, "UTC")
    }
}

impl Clock for SystemClock {
    fn now(&self) -> ZonedTime {
        ZonedTime::new(OffsetDateTime::now_utc().to_offset(self.offset), &self.zone)
    }
}

/// A clock that moves only when told to; clones share the same time.
#[derive(Debug, Clone)]
pub struct ManualClock {
    now: Arc<Mutex<ZonedTime>>,
}

impl ManualClock {
    /// A clock standing at `start`.
    pub fn new(start: ZonedTime) -> Self {
        Self {
            now: Arc::new(Mutex::new(start)),
        }
    }

    /// A clock standing at `at` in the zone `zone`.
    pub fn at(at: OffsetDateTime, zone: &str) -> Self {
        Self::new(ZonedTime::new(at, zone))
    }

    /// Moves the clock forward (or back, with a negative duration).
    pub fn advance(&self, by: Duration) {
        let mut now = self.now.lock().unwrap_or_else(PoisonError::into_inner);
        now.at += by;
    }

    /// Moves the clock forward by `ms` milliseconds.
    pub fn advance_ms(&self, ms: i64) {
        self.advance(Duration::milliseconds(ms));
    }

    /// Sets the clock.
    pub fn set(&self, to: ZonedTime) {
        *self.now.lock().unwrap_or_else(PoisonError::into_inner) = to;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> ZonedTime {
        self.now
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    #[test]
    fn manual_clock_moves_only_when_advanced_and_clones_share_it() {
        let clock = ManualClock::at(datetime!(2026-08-22 14:05:00.250 +03:00), "Europe/Moscow");
        let other = clock.clone();
        let t0 = clock.now();
        assert_eq!(clock.now(), t0);
        other.advance_ms(1_500);
        assert_eq!(clock.now().unix_ms(), t0.unix_ms() + 1_500);
        clock.advance(Duration::minutes(-1));
        assert_eq!(other.now().unix_ms() + 58_500, t0.unix_ms());
    }

    #[test]
    fn iso8601_has_offset_and_whole_seconds() {
        let t = ZonedTime::new(datetime!(2026-08-22 14:05:07.999 +03:00), "Europe/Moscow");
        assert_eq!(t.iso8601(), "2026-08-22T14:05:07+03:00");
        let utc = ZonedTime::new(datetime!(2026-01-02 03:04:05 UTC), "UTC");
        assert_eq!(utc.iso8601(), "2026-01-02T03:04:05Z");
    }

    #[test]
    fn unix_ms_counts_from_epoch_and_clamps_before_it() {
        let t = ZonedTime::new(datetime!(1970-01-01 00:00:01 UTC), "UTC");
        assert_eq!(t.unix_ms(), 1_000);
        let before = ZonedTime::new(datetime!(1969-12-31 23:59:59 UTC), "UTC");
        assert_eq!(before.unix_ms(), 0);
    }

    #[test]
    fn system_clock_reports_its_zone_and_offset() {
        let offset = UtcOffset::from_hms(3, 0, 0).unwrap();
        let now = SystemClock::new(offset, "Europe/Moscow").now();
        assert_eq!(now.zone, "Europe/Moscow");
        assert_eq!(now.at.offset(), offset);
        assert!(now.unix_ms() > 1_700_000_000_000);
    }
}

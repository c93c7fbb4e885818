//! The wall clock a chat runs on, in the machine's time zone: the offset and
//! the zone's name are read once (IO at the edge) and handed to the pure
//! `porfiry_skills::SystemClock`, which `get_current_time` reports from.

use std::path::Path;

use porfiry_skills::SystemClock;
use time::UtcOffset;

/// Where the zone's name is found when `TZ` is unset: a link into the zoneinfo tree.
const LOCALTIME_LINK: &str = "/etc/localtime";

/// The wall clock in the local offset and zone. On Unix the offset can only be
/// read while the process has one thread, so call this before starting a
/// multi-threaded runtime; when it cannot be read the clock falls back to UTC.
pub fn local_clock() -> SystemClock {
    match UtcOffset::current_local_offset() {
        Ok(offset) => SystemClock::new(offset, local_zone_name(offset)),
        Err(e) => {
            tracing::debug!("local UTC offset unknown ({e}); using UTC");
            SystemClock::utc()
        }
    }
}

/// `TZ` when set, else the zone `/etc/localtime` links to, else the offset.
fn local_zone_name(offset: UtcOffset) -> String {
    let from_env = std::env::var("TZ").ok();
    let from_link = std::fs::read_link(LOCALTIME_LINK).ok();
    zone_name(from_env.as_deref(), from_link.as_deref(), offset)
}

/// Picks the zone's name from what the system said (pure, for tests).
pub fn zone_name(tz_env: Option<&str>, localtime_link: Option<&Path>, offset: UtcOffset) -> String {
    // `TZ=:/etc/localtime` or `TZ=/usr/share/zoneinfo/X` name a file, not a zone.
    if let Some(tz) = tz_env.map(|t| t.trim().trim_start_matches(':'))
        && !tz.is_empty()
        && !tz.starts_with('/')
    {
        return tz.to_owned();
    }
    if let Some(zone) = localtime_link.and_then(zone_from_link) {
        return zone;
    }
    offset_name(offset)
}

/// `/usr/share/zoneinfo/Europe/Moscow` → `Europe/Moscow`.
fn zone_from_link(link: &Path) -> Option<String> {
    let text = link.to_str()?;
    let (_, zone) = text.rsplit_once("zoneinfo/")?;
    (!zone.is_empty()).then(|| zone.to_owned())
}

/// `UTC`, `UTC+03:00`, `UTC-05:30`.
fn offset_name(offset: UtcOffset) -> String {
    if offset.is_utc() {
        return "UTC".to_owned();
    }
    let (h, m, _) = offset.as_hms();
    let sign = if offset.is_negative() { '-' } else { '+' };
    format!("UTC{sign}{:02}:{:02}", h.unsigned_abs(), m.unsigned_abs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use porfiry_skills::Clock;

    fn off(h: i8, m: i8) -> UtcOffset {
        UtcOffset::from_hms(h, m, 0).unwrap()
    }

    #[test]
    fn tz_wins_then_the_link_then_the_offset() {
        let link = Path::new("/usr/share/zoneinfo/Europe/Moscow");
        assert_eq!(
            zone_name(Some(":Asia/Tokyo"), Some(link), off(9, 0)),
            "Asia/Tokyo"
        );
        assert_eq!(zone_name(Some(" "), Some(link), off(3, 0)), "Europe/Moscow");
        assert_eq!(
            zone_name(None, Some(Path::new("/etc/other")), off(3, 0)),
            "UTC+03:00"
        );
        assert_eq!(zone_name(None, None, off(-5, -30)), "UTC-05:30");
        assert_eq!(zone_name(None, None, UtcOffset::UTC), "UTC");
        assert_eq!(
            zone_name(Some(":/etc/localtime"), Some(link), off(3, 0)),
            "Europe/Moscow"
        );
    }

    #[test]
    fn the_local_clock_reads_the_wall_clock() {
        let now = local_clock().now();
        assert!(now.unix_ms() > 1_700_000_000_000);
        assert!(!now.zone.is_empty());
    }
}

//! `--valid-for` values: a whole number and a unit, `90s`, `10m`, `24h`,
//! `7d`.

use std::time::Duration;

/// How long an invitation is valid unless `--valid-for` says otherwise: a
/// day is enough to pass a code on by message and have it used.
pub const DEFAULT_VALID_FOR: Duration = Duration::from_secs(24 * 60 * 60);

/// The longest validity accepted: an open invitation keeps the stranger
/// door open, so it must not stay open for long.
pub const MAX_VALID_FOR: Duration = Duration::from_secs(30 * 24 * 60 * 60);

/// Parses `90s`, `10m`, `24h` or `7d` (1 s to [`MAX_VALID_FOR`]).
pub fn parse_valid_for(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let bad = || format!("{text:?}: expected a whole number and a unit s, m, h or d (e.g. 24h)");
    let n: u64 = number.parse().map_err(|_| bad())?;
    let seconds = match unit {
        "s" => Some(n),
        "m" => n.checked_mul(60),
        "h" => n.checked_mul(3_600),
        "d" => n.checked_mul(86_400),
        _ => return Err(bad()),
    };
    let d = Duration::from_secs(seconds.ok_or_else(bad)?);
    if d.is_zero() || d > MAX_VALID_FOR {
        return Err(format!(
            "{text:?}: an invitation is valid for 1s to {}d",
            MAX_VALID_FOR.as_secs() / 86_400
        ));
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_parse() {
        assert_eq!(parse_valid_for("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_valid_for("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_valid_for("24h"), Ok(DEFAULT_VALID_FOR));
        assert_eq!(parse_valid_for("30d"), Ok(MAX_VALID_FOR));
    }

    #[test]
    fn bad_values_say_why() {
        for bad in ["", "h", "10", "10w", "-1h", "1.5h", "99999999999999999999d"] {
            assert!(parse_valid_for(bad).unwrap_err().contains("unit"), "{bad}");
        }
        assert!(parse_valid_for("0s").unwrap_err().contains("1s to 30d"));
        assert!(parse_valid_for("31d").unwrap_err().contains("1s to 30d"));
    }
}

//! The browser-facing checks every request passes before its credentials:
//! the `Host` header against the names the API answers to (a DNS-rebinding
//! page cannot use the node's session), the `Origin` of writes against that
//! host (another site cannot post with the session cookie), and the
//! session cookie's name and value. Pure functions over header values.

use std::net::IpAddr;

/// The session cookie's name prefix; the port follows (`porfiry_4580`), as
/// browsers share cookies between ports of one host and two nodes on one
/// machine must not sign each other out.
pub const COOKIE_PREFIX: &str = "porfiry_";

/// Whether the API answers to `host` (a `Host` header value). An IP
/// literal (v4 or bracketed v6) or `localhost`, any port: a rebinding attack
/// needs a DNS name of the attacker's that resolves to us, and those are
/// neither. A name not on this list gets a page saying to use the address.
pub fn host_allowed(host: &str) -> bool {
    let name = host_name(host);
    name.eq_ignore_ascii_case("localhost")
        || name.parse::<IpAddr>().is_ok()
        || name
            .strip_prefix('[')
            .and_then(|n| n.strip_suffix(']'))
            .is_some_and(|n| n.parse::<std::net::Ipv6Addr>().is_ok())
}

/// The host part of a `Host` value (`[::1]:4580` → `[::1]`).
fn host_name(host: &str) -> &str {
    let host = host.trim();
    if host.starts_with('[') {
        return match host.find(']') {
            Some(end) => &host[..=end],
            None => host,
        };
    }
    match host.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    }
}

/// The port of a `Host` value, when it names one.
fn host_port(host: &str) -> Option<&str> {
    let host = host.trim();
    let rest = &host[host_name(host).len()..];
    rest.strip_prefix(':').filter(|p| !p.is_empty())
}

/// Whether a write's `Origin` is the page's own (`http://` + `Host`).
pub fn origin_matches(origin: &str, host: &str) -> bool {
    origin
        .trim()
        .strip_prefix("http://")
        .is_some_and(|o| o.eq_ignore_ascii_case(host.trim()))
}

/// The session cookie's name for the API reached as `host`.
pub fn cookie_name(host: Option<&str>) -> String {
    let port = host.and_then(host_port).unwrap_or("80");
    format!("{COOKIE_PREFIX}{port}")
}

/// The value of cookie `name` in a `Cookie` header value.
pub fn cookie_value<'a>(header: &'a str, name: &str) -> Option<&'a str> {
    header.split(';').find_map(|pair| {
        let (k, v) = pair.trim().split_once('=')?;
        (k == name).then_some(v.trim())
    })
}

/// The `Set-Cookie` value that signs a browser in for `max_age_secs`.
pub fn session_cookie(name: &str, session: &str, max_age_secs: u64) -> String {
    format!("{name}={session}; HttpOnly; SameSite=Strict; Path=/; Max-Age={max_age_secs}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ip_literals_and_localhost_are_served_and_names_are_not() {
        for ok in [
            "127.0.0.1:4580",
            "127.0.0.1",
            "localhost:4580",
            "LOCALHOST",
            "[::1]:4580",
            "[::1]",
            "192.168.1.20:4580",
        ] {
            assert!(host_allowed(ok), "{ok}");
        }
        for bad in [
            "evil.example:4580",
            "evil.example",
            "localhost.evil.example",
            "127.0.0.1.nip.io:4580",
            "",
            "[nonsense]:1",
        ] {
            assert!(!host_allowed(bad), "{bad}");
        }
    }

    #[test]
    fn a_write_must_come_from_the_page_itself() {
        assert!(origin_matches("http://127.0.0.1:4580", "127.0.0.1:4580"));
        assert!(origin_matches("http://LOCALHOST:4580", "localhost:4580"));
        assert!(!origin_matches("http://evil.example", "127.0.0.1:4580"));
        assert!(!origin_matches("http://127.0.0.1:4581", "127.0.0.1:4580"));
        assert!(!origin_matches("https://127.0.0.1:4580", "127.0.0.1:4580"));
        assert!(!origin_matches("null", "127.0.0.1:4580"));
    }

    #[test]
    fn the_cookie_is_named_for_the_port_and_read_among_others() {
        assert_eq!(cookie_name(Some("127.0.0.1:4580")), "porfiry_4580");
        assert_eq!(cookie_name(Some("[::1]:9")), "porfiry_9");
        assert_eq!(cookie_name(Some("localhost")), "porfiry_80");
        assert_eq!(cookie_name(None), "porfiry_80");
        let header = "a=1; porfiry_4580=abc ; porfiry_4581=def";
        assert_eq!(cookie_value(header, "porfiry_4580"), Some("abc"));
        assert_eq!(cookie_value(header, "porfiry_4581"), Some("def"));
        assert_eq!(cookie_value(header, "porfiry_1"), None);
        let set = session_cookie("porfiry_4580", "abc", 60);
        assert!(
            set.contains("HttpOnly") && set.contains("SameSite=Strict"),
            "{set}"
        );
    }
}

//! `process_fetch|url` (seed 003: "Проверка внешнего мира — пинг RSS …
//! интернет-каналов"; the external-world check): one HTTP GET of a page or a
//! feed, allowed only under a URL prefix in the config allow-list
//! [`PROCESS_ALLOW_URLS_KEY`] (empty by default, so a fresh node fetches
//! nothing), redirects included. Bounded in time and size; what arrives is
//! made readable ([`super::readable`]) and becomes the process row's result,
//! as a program's output does.

use std::sync::Arc;
use std::time::Duration;

use reqwest::Url;
use reqwest::header::CONTENT_TYPE;

use super::readable::readable;

/// The config key of the URL allow-list: a JSON array of URL prefixes
/// (`["https://news.example.org/feed", "https://example.org/"]`). A URL is
/// fetched when it has a prefix's scheme, host and port and its path starts
/// with the prefix's path.
pub const PROCESS_ALLOW_URLS_KEY: &str = "process.allow_urls";

/// A fetch gives up after this long: a feed or page answers in seconds; a
/// phone on a bad network should not keep a process slot for minutes.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(20);

/// Connecting gives up after this long.
pub const FETCH_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Bytes read of a body: large feeds are a few hundred KB; past 2 MiB the
/// rest is not read (a model is shown a few thousand characters anyway).
pub const MAX_FETCH_BYTES: usize = 2 * 1024 * 1024;

/// Characters of readable text kept as the process result: context 2 of a
/// tick shows results, and a small model's context is a few thousand tokens.
pub const MAX_FETCH_RESULT_CHARS: usize = 4_000;

/// Redirects followed, each to an allowed URL too: feeds move (http → https,
/// a new path) once or twice; more is a loop.
pub const MAX_FETCH_REDIRECTS: usize = 3;

/// Why a fetch did not happen or did not finish.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    /// Not an http(s) URL.
    #[error("{url:?} is not an http:// or https:// URL ({why})")]
    BadUrl {
        /// As given.
        url: String,
        /// What is wrong.
        why: String,
    },
    /// No prefix of the allow-list covers it.
    #[error("{url} is not under any URL in {PROCESS_ALLOW_URLS_KEY}")]
    NotAllowed {
        /// The URL.
        url: String,
    },
    /// The request failed (connect, timeout, a redirect off the list…).
    #[error("fetching {url} failed: {detail}")]
    Failed {
        /// The URL.
        url: String,
        /// What the HTTP client said.
        detail: String,
    },
    /// No connection could be made (refused, no route, DNS): the host is
    /// offline, which the process row says (`offline`, seed 003).
    #[error("{url} is unreachable: {detail}")]
    Unreachable {
        /// The URL.
        url: String,
        /// What the HTTP client said.
        detail: String,
    },
    /// A non-2xx status.
    #[error("{url} answered HTTP {status}")]
    Status {
        /// The URL.
        url: String,
        /// The status.
        status: u16,
    },
}

/// `url` parsed, if it is http(s) with a host.
pub fn parse_url(url: &str) -> Result<Url, FetchError> {
    let bad = |why: &str| FetchError::BadUrl {
        url: url.to_owned(),
        why: why.to_owned(),
    };
    let u = Url::parse(url.trim()).map_err(|e| bad(&e.to_string()))?;
    if !matches!(u.scheme(), "http" | "https") {
        return Err(bad("only http and https are fetched"));
    }
    if u.host_str().is_none_or(str::is_empty) {
        return Err(bad("it has no host"));
    }
    Ok(u)
}

/// Whether a prefix of `allow` covers `url` (same scheme, host and port,
/// the path under the prefix's path). A prefix that does not parse covers
/// nothing.
pub fn allowed(url: &Url, allow: &[String]) -> bool {
    allow
        .iter()
        .filter_map(|p| Url::parse(p.trim()).ok())
        .any(|p| {
            p.scheme() == url.scheme()
                && p.host_str() == url.host_str()
                && p.port_or_known_default() == url.port_or_known_default()
                && under(url.path(), p.path())
        })
}

/// `path` is `prefix` or below it (`/feed` covers `/feed` and `/feed/x`,
/// not `/feedback`).
fn under(path: &str, prefix: &str) -> bool {
    if prefix.is_empty() || prefix == "/" {
        return true;
    }
    match path.strip_prefix(prefix) {
        Some(rest) => rest.is_empty() || prefix.ends_with('/') || rest.starts_with('/'),
        None => false,
    }
}

/// What a fetch brought.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// The final URL (after redirects).
    pub url: String,
    /// The readable text, at most [`MAX_FETCH_RESULT_CHARS`].
    pub text: String,
    /// Whether the body went past [`MAX_FETCH_BYTES`] and was cut.
    pub cut: bool,
}

/// GETs `url` when the allow-list covers it and every redirect it takes.
pub async fn fetch(url: &str, allow: Vec<String>) -> Result<Fetched, FetchError> {
    let url = parse_url(url)?;
    if !allowed(&url, &allow) {
        return Err(FetchError::NotAllowed {
            url: url.to_string(),
        });
    }
    let allow = Arc::new(allow);
    let policy = reqwest::redirect::Policy::custom(move |attempt| {
        if attempt.previous().len() >= MAX_FETCH_REDIRECTS {
            attempt.error(format!("more than {MAX_FETCH_REDIRECTS} redirects"))
        } else if allowed(attempt.url(), &allow) {
            attempt.follow()
        } else {
            let to = attempt.url().to_string();
            attempt.error(format!(
                "redirected to {to}, outside {PROCESS_ALLOW_URLS_KEY}"
            ))
        }
    });
    let failed = |detail: String| FetchError::Failed {
        url: url.to_string(),
        detail,
    };
    let client = reqwest::Client::builder()
        .redirect(policy)
        .timeout(FETCH_TIMEOUT)
        .connect_timeout(FETCH_CONNECT_TIMEOUT)
        .build()
        .map_err(|e| failed(chain(&e)))?;
    let mut response = client.get(url.clone()).send().await.map_err(|e| {
        if e.is_connect() {
            FetchError::Unreachable {
                url: url.to_string(),
                detail: chain(&e),
            }
        } else {
            failed(chain(&e))
        }
    })?;
    let status = response.status().as_u16();
    if !(200..300).contains(&status) {
        return Err(FetchError::Status {
            url: url.to_string(),
            status,
        });
    }
    let final_url = response.url().to_string();
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let mut body = Vec::new();
    let mut cut = false;
    while let Some(chunk) = response.chunk().await.map_err(|e| failed(chain(&e)))? {
        let room = MAX_FETCH_BYTES - body.len();
        if chunk.len() >= room {
            body.extend_from_slice(&chunk[..room]);
            cut = chunk.len() > room;
            break;
        }
        body.extend_from_slice(&chunk);
    }
    let text = readable(content_type.as_deref(), &body);
    Ok(Fetched {
        url: final_url,
        text: super::common::cut_chars(&text, MAX_FETCH_RESULT_CHARS),
        cut,
    })
}

/// An error with its causes, for the process result.
fn chain(e: &reqwest::Error) -> String {
    let mut out = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allow(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    fn is_allowed(url: &str, list: &[&str]) -> bool {
        allowed(&parse_url(url).unwrap(), &allow(list))
    }

    #[test]
    fn a_prefix_covers_its_own_host_port_and_path_only() {
        let list = ["https://news.example.org/feed", "http://127.0.0.1:8080/"];
        assert!(is_allowed("https://news.example.org/feed", &list));
        assert!(is_allowed("https://news.example.org/feed/today?x=1", &list));
        assert!(is_allowed("http://127.0.0.1:8080/anything", &list));
        // Not the path next to it, another scheme, host or port.
        assert!(!is_allowed("https://news.example.org/feedback", &list));
        assert!(!is_allowed("http://news.example.org/feed", &list));
        assert!(!is_allowed("https://news.example.org.evil.net/feed", &list));
        assert!(!is_allowed(
            "https://evil.net/https://news.example.org/feed",
            &list
        ));
        assert!(!is_allowed("http://127.0.0.1:8081/", &list));
        // An empty list, or one that does not parse, allows nothing.
        assert!(!is_allowed("http://127.0.0.1:8080/", &[]));
        assert!(!is_allowed("http://127.0.0.1:8080/", &["not a url"]));
    }

    #[test]
    fn only_http_urls_with_a_host_are_fetched() {
        for bad in ["file:///etc/passwd", "ftp://x/", "nonsense", "http://"] {
            assert!(
                matches!(parse_url(bad), Err(FetchError::BadUrl { .. })),
                "{bad}"
            );
        }
        let e = futures::executor::block_on(fetch(
            "http://127.0.0.1:1/x",
            allow(&["http://127.0.0.2/"]),
        ))
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "http://127.0.0.1:1/x is not under any URL in process.allow_urls"
        );
    }
}

//! `porfiry web`: prints a fresh one-time sign-in link to the family page of
//! the node running on this data dir (`http://127.0.0.1:4580/login?code=…`).
//! It asks the running daemon's API (its address from `api-address`, the
//! token from `api-token`) for the code; with no daemon it says to start
//! one. The link works once, for ten minutes.

use std::time::Duration;

use porfiry_api::token::token_path;
use porfiry_mesh::data_dir::DataDir;

use crate::commands::api_start::api_address_path;

/// How long to wait for the daemon's answer: it answers from memory at
/// once; a daemon that takes longer is stuck, and saying so beats hanging.
pub const WEB_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// Why no link was printed.
#[derive(Debug, thiserror::Error)]
pub enum WebError {
    /// No daemon has written its API address here.
    #[error("no running node on {dir}: start it with `porfiry run` (it prints a sign-in link too)")]
    NotRunning {
        /// The data dir.
        dir: String,
    },
    /// The token file is missing or unreadable.
    #[error("cannot read the API token {path}: {source}")]
    Token {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The daemon could not be asked.
    #[error("the node's API at {addr} did not answer ({reason}); is `porfiry run` still running?")]
    Unreachable {
        /// Where it was asked.
        addr: String,
        /// What went wrong.
        reason: String,
    },
}

/// The sign-in link from the node running on `dir`.
pub async fn web(dir: &DataDir) -> Result<String, WebError> {
    let not_running = || WebError::NotRunning {
        dir: dir.root().display().to_string(),
    };
    let addr = std::fs::read_to_string(api_address_path(dir)).map_err(|_| not_running())?;
    let addr = addr.trim().to_owned();
    let path = token_path(dir);
    let token = std::fs::read_to_string(&path).map_err(|source| WebError::Token {
        path: path.display().to_string(),
        source,
    })?;
    let unreachable = |reason: String| WebError::Unreachable {
        addr: addr.clone(),
        reason,
    };
    let client = reqwest::Client::builder()
        .timeout(WEB_REQUEST_TIMEOUT)
        .build()
        .map_err(|e| unreachable(e.to_string()))?;
    let response = client
        .post(format!("http://{}/api/login-codes", browser_address(&addr)))
        .bearer_auth(token.trim())
        .send()
        .await
        .map_err(|e| unreachable(e.to_string()))?;
    if !response.status().is_success() {
        return Err(unreachable(format!("HTTP {}", response.status())));
    }
    let body: serde_json::Value = response
        .json()
        .await
        .map_err(|e| unreachable(e.to_string()))?;
    body.get("url")
        .and_then(|u| u.as_str())
        .map(|url| format!("{url}\n(opens the family page once, within 10 minutes)"))
        .ok_or_else(|| unreachable("no url in the answer".to_owned()))
}

/// The address a browser on this machine uses for an API bound to `addr`:
/// an unspecified bind address (`0.0.0.0`, `[::]`) is reached on loopback.
pub fn browser_address(addr: &str) -> String {
    match addr.parse::<std::net::SocketAddr>() {
        Ok(a) if a.ip().is_unspecified() => match a {
            std::net::SocketAddr::V4(_) => format!("127.0.0.1:{}", a.port()),
            std::net::SocketAddr::V6(_) => format!("[::1]:{}", a.port()),
        },
        _ => addr.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unspecified_bind_address_is_opened_on_loopback() {
        assert_eq!(browser_address("0.0.0.0:4580"), "127.0.0.1:4580");
        assert_eq!(browser_address("[::]:9"), "[::1]:9");
        assert_eq!(browser_address("127.0.0.1:4580"), "127.0.0.1:4580");
        assert_eq!(browser_address("192.168.1.2:1"), "192.168.1.2:1");
    }

    #[tokio::test]
    async fn without_a_running_node_it_says_to_start_one() {
        let tmp = tempfile::tempdir().unwrap();
        let err = web(&DataDir::new(tmp.path().join("n"))).await.unwrap_err();
        assert!(matches!(err, WebError::NotRunning { .. }), "{err}");
        assert!(err.to_string().contains("porfiry run"), "{err}");
    }
}

//! `POST /api/backup`: over a real loopback socket and a real node on disk,
//! the owner (bearer token, or a signed-in page with its own Origin)
//! downloads a backup that `porfiry_backup::restore_into` makes into the
//! same node with the note posted before it, leaving no file behind; no
//! credentials, a wrong token or another site's page get 401/403 and no
//! bytes; a short passphrase gets 400 saying the minimum; a second backup
//! while one is made gets 409.

use std::collections::BTreeSet;
use std::sync::Arc;

use axum::http::StatusCode;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use super::fakes::{FakeNode, TOKEN, call, clock, loopback_server};
use crate::adapters::NodeAdapter;
use crate::{ApiState, ApiToken};
use porfiry_mesh::data_dir::DataDir;
use porfiry_mesh::net::Profile;
use porfiry_mesh::node::{Node, NodeConfig};

const PASS: &str = "a long family passphrase";

/// One HTTP/1.1 answer: status, headers (names lowercased), body bytes.
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Sends `method path` with `headers` and `body` over a fresh connection.
async fn exchange(
    addr: std::net::SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Answer {
    let mut request = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\n");
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str(&format!(
        "Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    ));
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.unwrap();
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a header block");
    let head = String::from_utf8(raw[..end].to_vec()).unwrap();
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap()[9..12].parse().unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    Answer {
        status,
        headers,
        body: raw[end + 4..].to_vec(),
    }
}

fn bearer() -> (&'static str, String) {
    ("Authorization", format!("Bearer {TOKEN}"))
}

fn backup_body(pass: &str) -> String {
    serde_json::json!({ "passphrase": pass }).to_string()
}

/// Names in `dir`.
fn listing(dir: &std::path::Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_owner_downloads_a_backup_that_restores_as_the_same_node() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path().join("node"));
    let (node, join) =
        Node::spawn(NodeConfig::new(dir.clone(), Profile::Phone, Vec::new())).unwrap();
    let state = ApiState::new(
        Arc::new(NodeAdapter::new(node.clone())),
        None,
        ApiToken::from_secret(TOKEN),
        Arc::new(clock()),
    );
    let (addr, stop, server) = loopback_server(state.clone()).await;
    let (auth, token) = bearer();
    let note = r#"{"text":"posted before the backup","audience":"private"}"#;
    let posted = exchange(addr, "POST", "/api/notes", &[(auth, token.as_str())], note).await;
    assert_eq!(posted.status, 201, "{}", posted.text());
    let before = listing(dir.root());

    let got = exchange(
        addr,
        "POST",
        "/api/backup",
        &[(auth, token.as_str())],
        &backup_body(PASS),
    )
    .await;
    assert_eq!(got.status, 200, "{}", got.text());
    assert_eq!(got.header("content-type"), Some("application/octet-stream"));
    assert_eq!(
        got.header("content-length"),
        Some(got.body.len().to_string().as_str()),
        "the whole file came"
    );
    let disposition = got.header("content-disposition").unwrap();
    let prefix = format!("attachment; filename=\"porfiry-{}-", &node.peer_id()[..12]);
    assert!(
        disposition.starts_with(&prefix) && disposition.ends_with(".porfiry-backup\""),
        "{disposition}"
    );
    assert!(got.body.starts_with(porfiry_backup::crypt::MAGIC));
    assert!(
        !got.body
            .windows(24)
            .any(|w| w == b"posted before the backup"),
        "the download is sealed"
    );
    assert_eq!(
        listing(dir.root()),
        before,
        "no temporary file is left in the data dir"
    );

    // A signed-in page of the node's own origin may download it too.
    let code = state.issue_login_code().unwrap();
    let login = exchange(addr, "GET", &format!("/login?code={code}"), &[], "").await;
    assert_eq!(login.status, 303, "{}", login.text());
    let cookie = login
        .header("set-cookie")
        .unwrap()
        .split(';')
        .next()
        .unwrap();
    let origin = format!("http://{addr}");
    let page = exchange(
        addr,
        "POST",
        "/api/backup",
        &[("Cookie", cookie), ("Origin", origin.as_str())],
        &backup_body(PASS),
    )
    .await;
    assert_eq!(page.status, 200, "{}", page.text());
    assert!(page.body.starts_with(porfiry_backup::crypt::MAGIC));

    stop.send(()).unwrap();
    server.await.unwrap().unwrap();
    node.shutdown();
    join.await.unwrap();

    // The download restores as the same node, its note there.
    let file = tmp.path().join("downloaded.porfiry-backup");
    std::fs::write(&file, &got.body).unwrap();
    let fresh = DataDir::new(tmp.path().join("restored"));
    let restored = porfiry_backup::restore_into(&file, PASS.as_bytes(), &fresh).unwrap();
    assert_eq!(restored.manifest.peer_id, node.peer_id());
    let (key, store) = porfiry_mesh::friends::open(&fresh).unwrap();
    assert_eq!(key.peer_id().to_string(), node.peer_id());
    let notes: Vec<String> = porfiry_mesh::notes::all_notes(&store)
        .unwrap()
        .into_iter()
        .map(|n| n.row.text)
        .collect();
    assert_eq!(notes, vec!["posted before the backup".to_owned()]);
    // A wrong passphrase opens nothing.
    let other = DataDir::new(tmp.path().join("other"));
    assert!(porfiry_backup::restore_into(&file, b"not the passphrase", &other).is_err());
}

#[tokio::test]
async fn only_the_owner_gets_a_backup_and_a_short_passphrase_is_refused() {
    // The fake node makes no backups: any call that reached it would
    // answer 400 "backups are not supported", never the answers below.
    let state = ApiState::new(
        Arc::new(FakeNode),
        None,
        ApiToken::from_secret(TOKEN),
        Arc::new(clock()),
    );
    let (addr, stop, server) = loopback_server(state.clone()).await;
    let body = backup_body(PASS);
    let nobody = exchange(addr, "POST", "/api/backup", &[], &body).await;
    assert_eq!(nobody.status, 401, "{}", nobody.text());
    assert!(
        nobody.text().contains("invalid_api_key"),
        "{}",
        nobody.text()
    );
    let wrong = exchange(
        addr,
        "POST",
        "/api/backup",
        &[("Authorization", "Bearer not-the-token")],
        &body,
    )
    .await;
    assert_eq!(wrong.status, 401, "{}", wrong.text());
    let code = state.issue_login_code().unwrap();
    let login = exchange(addr, "GET", &format!("/login?code={code}"), &[], "").await;
    let cookie = login
        .header("set-cookie")
        .unwrap()
        .split(';')
        .next()
        .unwrap();
    let elsewhere = exchange(
        addr,
        "POST",
        "/api/backup",
        &[("Cookie", cookie), ("Origin", "http://evil.example")],
        &body,
    )
    .await;
    assert_eq!(elsewhere.status, 403, "{}", elsewhere.text());
    for refused in [&nobody, &wrong, &elsewhere] {
        assert_ne!(
            refused.header("content-type"),
            Some("application/octet-stream")
        );
        assert!(!refused.body.starts_with(porfiry_backup::crypt::MAGIC));
    }
    stop.send(()).unwrap();
    server.await.unwrap().unwrap();

    let (auth, token) = bearer();
    let short = exchange_router(&state, &backup_body("seven c"), (auth, token.as_str())).await;
    assert_eq!(short.0, StatusCode::BAD_REQUEST);
    assert_eq!(
        short.1["error"]["message"],
        "the passphrase is shorter than 8 characters"
    );
    let huge = "x".repeat(porfiry_backup::MAX_PASSPHRASE_BYTES as usize + 1);
    let (status, json) = exchange_router(&state, &backup_body(&huge), (auth, token.as_str())).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{json}");
    let (status, json) = exchange_router(&state, "{}", (auth, token.as_str())).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{json}");
    // While one backup is made, a second is refused rather than queued.
    let held = state.backup_permit().unwrap();
    let (status, json) = exchange_router(&state, &backup_body(PASS), (auth, token.as_str())).await;
    assert_eq!(status, StatusCode::CONFLICT, "{json}");
    assert_eq!(json["error"]["code"], "in_progress");
    drop(held);
    // Through to the node: the fake one says it makes none.
    let (status, json) = exchange_router(&state, &backup_body(PASS), (auth, token.as_str())).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{json}");
    assert!(
        json["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not supported"),
        "{json}"
    );
}

/// `POST /api/backup` through the router with the bearer token.
async fn exchange_router(
    state: &ApiState,
    body: &str,
    (auth, token): (&str, &str),
) -> (StatusCode, serde_json::Value) {
    let request = axum::http::Request::builder()
        .method("POST")
        .uri("/api/backup")
        .header(auth, token)
        .header("content-type", "application/json")
        .body(axum::body::Body::from(body.to_owned()))
        .unwrap();
    call(state, request).await
}

//! The API on a real loopback socket: auth over HTTP/1.1, a hang-up that
//! drops the turn, graceful shutdown.

use std::sync::Arc;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use super::fakes::*;
use crate::{ApiState, ApiToken};

fn http(method: &str, path: &str, token: Option<&str>, body: &str) -> String {
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\n{auth}Content-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

async fn exchange(addr: std::net::SocketAddr, request: &str) -> String {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    response
}

#[tokio::test]
async fn over_a_socket_the_token_is_required_and_shutdown_is_clean() {
    let (state, _) = state(Some(Script::Echo));
    let (addr, stop, task) = loopback_server(state).await;
    let denied = exchange(addr, &http("GET", "/v1/models", None, "")).await;
    assert!(denied.starts_with("HTTP/1.1 401"), "{denied}");
    assert!(denied.contains("invalid_api_key"), "{denied}");
    let ok = exchange(addr, &http("GET", "/v1/models", Some(TOKEN), "")).await;
    assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
    assert!(ok.contains(r#""id":"porfiry""#), "{ok}");
    stop.send(()).unwrap();
    task.await.unwrap().unwrap();
}

#[tokio::test]
async fn a_client_hanging_up_mid_stream_drops_the_model_request() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let dropped = Arc::new(tokio::sync::Notify::new());
    let log = Log::default();
    let agent = Arc::new(FakeAgent {
        script: Script::Hang {
            gate,
            dropped: dropped.clone(),
        },
        log,
    });
    // A keep-alive far longer than the test: the server notices the closed
    // socket by reading it, not on its next write.
    let state = ApiState::with_keepalive(
        Arc::new(FakeNode),
        Some(agent),
        ApiToken::from_secret(TOKEN),
        Arc::new(clock()),
        std::time::Duration::from_secs(60),
    );
    let (addr, stop, task) = loopback_server(state).await;
    let body = chat_body(Some("ann"), true, &[("user", "hi")]);
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(http("POST", "/v1/chat/completions", Some(TOKEN), &body).as_bytes())
        .await
        .unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&seen).contains("partial") {
        let n = stream.read(&mut buf).await.unwrap();
        assert!(n > 0, "closed early: {}", String::from_utf8_lossy(&seen));
        seen.extend_from_slice(&buf[..n]);
    }
    drop(stream);
    dropped.notified().await;
    stop.send(()).unwrap();
    task.await.unwrap().unwrap();
}

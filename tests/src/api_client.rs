//! A minimal blocking HTTP/1.1 client for the node's API in end-to-end
//! tests: one request per connection (`Connection: close`), the whole
//! response read, chunked bodies decoded. Raw sockets, so a test can also
//! hang up in the middle of a streamed answer.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};

/// A response: status code, lower-cased head, decoded body.
#[derive(Debug, Clone)]
pub struct ApiResponse {
    /// The status code.
    pub status: u16,
    /// The status line and headers, lower-cased.
    pub head: String,
    /// The body (de-chunked).
    pub body: String,
}

impl ApiResponse {
    /// The body as JSON (panics with the body when it is not).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

/// The request bytes.
pub fn request_text(method: &str, path: &str, token: Option<&str>, body: &str) -> String {
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\n{auth}Content-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// Sends one request and reads the whole response.
pub fn call(
    addr: SocketAddr,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: &str,
) -> ApiResponse {
    let mut stream = TcpStream::connect(addr).expect("connect to the API");
    stream
        .write_all(request_text(method, path, token, body).as_bytes())
        .expect("send");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("read");
    parse(&raw)
}

/// Parses a whole response.
pub fn parse(raw: &[u8]) -> ApiResponse {
    let text = String::from_utf8_lossy(raw);
    let (head, body) = text.split_once("\r\n\r\n").expect("a response head");
    let head = head.to_ascii_lowercase();
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status code");
    let body = if head.contains("transfer-encoding: chunked") {
        dechunk(body)
    } else {
        body.to_owned()
    };
    ApiResponse { status, head, body }
}

fn dechunk(mut rest: &str) -> String {
    let mut out = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || after.len() < size {
            break;
        }
        out.push_str(&after[..size]);
        rest = after[size..].trim_start_matches("\r\n");
    }
    out
}

/// A `POST /v1/chat/completions` body: one user message in `user`'s session;
/// streamed ones ask for the usage chunk too.
pub fn chat_body(user: &str, text: &str, stream: bool) -> String {
    let mut body = serde_json::json!({"model": "porfiry", "user": user,
        "messages": [{"role": "user", "content": text}]});
    if stream {
        body["stream"] = true.into();
        body["stream_options"] = serde_json::json!({"include_usage": true});
    }
    body.to_string()
}

/// Sends a chat request and reads the response until `needle` has arrived;
/// returns the open connection, so the caller can hang up mid-answer.
pub fn chat_until(addr: SocketAddr, token: &str, body: &str, needle: &str) -> TcpStream {
    let mut stream = TcpStream::connect(addr).expect("connect to the API");
    let request = request_text("POST", "/v1/chat/completions", Some(token), body);
    stream.write_all(request.as_bytes()).expect("send");
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&seen).contains(needle) {
        let n = stream.read(&mut buf).expect("read");
        assert!(n > 0, "closed early: {}", String::from_utf8_lossy(&seen));
        seen.extend_from_slice(&buf[..n]);
    }
    stream
}

//! The downloader against a real HTTP server on loopback (axum): a whole
//! file, one interrupted and resumed, a server that ignores ranges, corrupt
//! bytes, wrong lengths, refusals, a file that is no GGUF, and two pulls at once.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use sha2::{Digest, Sha256};

use super::*;
use crate::gguf::write::{Kv, file};

/// How the server misbehaves.
#[derive(Default)]
struct Faults {
    /// Break the connection after this many body bytes, once.
    interrupt_after: Option<usize>,
    /// Answer every request with the whole file (200).
    ignore_range: bool,
    /// Flip one byte of what is sent.
    corrupt: bool,
    /// Answer this status with no file.
    status: Option<StatusCode>,
    /// Claim this Content-Length.
    claim_length: Option<u64>,
}

#[derive(Clone)]
struct Served {
    data: Arc<Vec<u8>>,
    faults: Arc<Mutex<Faults>>,
    /// The Range header of each request (None: none sent).
    ranges: Arc<Mutex<Vec<Option<String>>>>,
}

async fn serve_file(State(s): State<Served>, headers: HeaderMap) -> Response {
    let range = headers
        .get(header::RANGE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    s.ranges.lock().unwrap().push(range.clone());
    let mut faults = s.faults.lock().unwrap();
    if let Some(status) = faults.status {
        return Response::builder()
            .status(status)
            .body(Body::empty())
            .unwrap();
    }
    let mut data = s.data.as_ref().clone();
    if faults.corrupt {
        let mid = data.len() / 2;
        data[mid] ^= 0xff;
    }
    let len = data.len() as u64;
    let start = range.filter(|_| !faults.ignore_range).and_then(|r| {
        r.strip_prefix("bytes=")?
            .strip_suffix('-')?
            .parse::<u64>()
            .ok()
    });
    let mut response = Response::builder();
    let body = match start {
        Some(start) if start >= len => {
            return Response::builder()
                .status(StatusCode::RANGE_NOT_SATISFIABLE)
                .header(header::CONTENT_RANGE, format!("bytes */{len}"))
                .body(Body::empty())
                .unwrap();
        }
        Some(start) => {
            response = response.status(StatusCode::PARTIAL_CONTENT).header(
                header::CONTENT_RANGE,
                format!("bytes {start}-{}/{len}", len - 1),
            );
            data.split_off(start as usize)
        }
        None => data,
    };
    let length = faults.claim_length.unwrap_or(body.len() as u64);
    response = response.header(header::CONTENT_LENGTH, length);
    match faults.interrupt_after.take() {
        Some(n) => {
            let head = Bytes::copy_from_slice(&body[..n]);
            let chunks: Vec<Result<Bytes, std::io::Error>> =
                vec![Ok(head), Err(std::io::Error::other("cut"))];
            response
                .body(Body::from_stream(futures::stream::iter(chunks)))
                .unwrap()
        }
        // A claimed length goes with a body of no known size (hyper checks
        // a sized body against its header).
        None if faults.claim_length.is_some() => {
            let chunks: Vec<Result<Bytes, std::io::Error>> = vec![Ok(Bytes::from(body))];
            response
                .body(Body::from_stream(futures::stream::iter(chunks)))
                .unwrap()
        }
        None => response.body(Body::from(body)).unwrap(),
    }
}

struct Server {
    url: String,
    served: Served,
}

impl Server {
    async fn start(data: Vec<u8>) -> Self {
        let served = Served {
            data: Arc::new(data),
            faults: Arc::default(),
            ranges: Arc::default(),
        };
        let app = Router::new()
            .fallback(serve_file)
            .with_state(served.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        Self {
            url: format!("http://{addr}/m.gguf"),
            served,
        }
    }

    fn faults(&self) -> std::sync::MutexGuard<'_, Faults> {
        self.served.faults.lock().unwrap()
    }

    fn ranges(&self) -> Vec<Option<String>> {
        self.served.ranges.lock().unwrap().clone()
    }

    fn source(&self) -> Source {
        Source {
            url: self.url.clone(),
            sha256: Sha256Digest(Sha256::digest(self.served.data.as_slice()).into()),
            bytes: None,
        }
    }
}

/// A 1 MB GGUF whose data bytes are not all alike (so a flipped byte shows).
fn model_bytes() -> Vec<u8> {
    let mut bytes = file(
        &[("general.architecture", Kv::Str("llama"))],
        1 << 18,
        1 << 20,
    );
    let header = bytes.len() - (1 << 20);
    for (i, b) in bytes[header..].iter_mut().enumerate() {
        *b = (i % 251) as u8;
    }
    bytes
}

async fn pull_to(source: &Source, path: &Path) -> (Result<Pulled, PullError>, Vec<Progress>) {
    let mut seen = Vec::new();
    let client = client().unwrap();
    let result = pull(&client, source, path, &mut |p| seen.push(p)).await;
    (result, seen)
}

#[tokio::test]
async fn a_whole_file_is_verified_renamed_and_a_second_pull_fetches_nothing() {
    let data = model_bytes();
    let server = Server::start(data.clone()).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("models/m.gguf");
    let (pulled, seen) = pull_to(&server.source(), &path).await;
    let pulled = pulled.unwrap();
    assert_eq!(
        (pulled.bytes, pulled.resumed_from, pulled.already_here),
        (data.len() as u64, 0, false)
    );
    assert_eq!(std::fs::read(&path).unwrap(), data);
    assert!(!part_path(&path).exists());
    assert_eq!(
        seen.first(),
        Some(&Progress::Started {
            total: Some(data.len() as u64),
            from: 0
        })
    );
    assert_eq!(seen.last(), Some(&Progress::Received(data.len() as u64)));

    let (again, seen) = pull_to(&server.source(), &path).await;
    assert!(again.unwrap().already_here);
    assert!(seen.is_empty());
    assert_eq!(
        server.ranges().len(),
        1,
        "the second pull asked for nothing"
    );
}

#[tokio::test]
async fn an_interrupted_pull_keeps_its_part_and_the_next_one_resumes_with_a_range() {
    let data = model_bytes();
    let server = Server::start(data.clone()).await;
    let half = data.len() / 2;
    server.faults().interrupt_after = Some(half);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.gguf");
    let e = pull_to(&server.source(), &path).await.0.unwrap_err();
    let said = e.to_string();
    assert!(
        matches!(e, PullError::Interrupted { have, .. } if have == half as u64),
        "{said}"
    );
    assert!(
        said.contains("run the same command again to resume"),
        "{said}"
    );
    assert_eq!(
        std::fs::metadata(part_path(&path)).unwrap().len(),
        half as u64
    );
    assert!(!path.exists());

    let (pulled, seen) = pull_to(&server.source(), &path).await;
    let pulled = pulled.unwrap();
    assert_eq!(pulled.resumed_from, half as u64);
    assert_eq!(
        seen[0],
        Progress::Started {
            total: Some(data.len() as u64),
            from: half as u64
        }
    );
    assert_eq!(std::fs::read(&path).unwrap(), data);
    assert_eq!(server.ranges(), [None, Some(format!("bytes={half}-"))]);
}

#[tokio::test]
async fn a_server_that_ignores_ranges_is_downloaded_again_from_the_start() {
    let data = model_bytes();
    let server = Server::start(data.clone()).await;
    server.faults().interrupt_after = Some(1000);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.gguf");
    assert!(pull_to(&server.source(), &path).await.0.is_err());
    server.faults().ignore_range = true;
    let pulled = pull_to(&server.source(), &path).await.0.unwrap();
    assert_eq!(pulled.resumed_from, 0);
    assert_eq!(std::fs::read(&path).unwrap(), data);
}

#[tokio::test]
async fn a_whole_part_left_before_its_rename_is_finished_without_a_download() {
    let data = model_bytes();
    let server = Server::start(data.clone()).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.gguf");
    std::fs::write(part_path(&path), &data).unwrap();
    let pulled = pull_to(&server.source(), &path).await.0.unwrap();
    assert_eq!(pulled.resumed_from, data.len() as u64);
    assert_eq!(std::fs::read(&path).unwrap(), data);
}

#[tokio::test]
async fn corrupt_bytes_are_deleted_with_both_hashes_named() {
    let server = Server::start(model_bytes()).await;
    server.faults().corrupt = true;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.gguf");
    let source = server.source();
    let said = pull_to(&source, &path).await.0.unwrap_err().to_string();
    assert!(said.contains("SHA-256 mismatch"), "{said}");
    assert!(said.contains(&source.sha256.to_string()), "{said}");
    assert!(said.contains("the file was deleted"), "{said}");
    assert!(!path.exists() && !part_path(&path).exists());
}

#[tokio::test]
async fn a_refusal_a_wrong_length_and_an_oversize_file_leave_nothing_behind() {
    let data = model_bytes();
    let server = Server::start(data.clone()).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.gguf");
    let nothing_left = || !path.exists() && !part_path(&path).exists();

    server.faults().status = Some(StatusCode::NOT_FOUND);
    let said = pull_to(&server.source(), &path)
        .await
        .0
        .unwrap_err()
        .to_string();
    assert!(said.contains("404") && said.contains(&server.url), "{said}");
    assert!(nothing_left());
    server.faults().status = None;

    let pinned = Source {
        bytes: Some(data.len() as u64 + 1),
        ..server.source()
    };
    let said = pull_to(&pinned, &path).await.0.unwrap_err().to_string();
    assert!(said.contains("but the file pinned is"), "{said}");
    assert!(nothing_left());

    server.faults().claim_length = Some(MAX_MODEL_BYTES + 1);
    let e = pull_to(&server.source(), &path).await.0.unwrap_err();
    assert!(matches!(e, PullError::TooBig { .. }), "{e}");
    assert!(nothing_left());
}

#[tokio::test]
async fn a_file_with_the_right_hash_that_is_no_gguf_is_deleted() {
    let server = Server::start(b"<html>sign in to download</html>".to_vec()).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.gguf");
    let said = pull_to(&server.source(), &path)
        .await
        .0
        .unwrap_err()
        .to_string();
    assert!(
        said.contains("m.gguf") && said.contains("the file was deleted"),
        "{said}"
    );
    assert!(!path.exists());
}

#[tokio::test]
async fn another_file_under_the_name_is_left_alone_and_a_busy_part_is_refused() {
    let server = Server::start(model_bytes()).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.gguf");
    std::fs::write(&path, b"mine").unwrap();
    let said = pull_to(&server.source(), &path)
        .await
        .0
        .unwrap_err()
        .to_string();
    assert!(said.contains("already exists with SHA-256"), "{said}");
    assert_eq!(std::fs::read(&path).unwrap(), b"mine");
    std::fs::remove_file(&path).unwrap();

    let other = File::create(part_path(&path)).unwrap();
    other.lock().unwrap();
    let e = pull_to(&server.source(), &path).await.0.unwrap_err();
    assert!(matches!(e, PullError::Busy(_)), "{e}");
    assert!(
        server.ranges().is_empty(),
        "a busy pull asks the server nothing"
    );
    drop(other);
    assert!(pull_to(&server.source(), &path).await.0.is_ok());
}

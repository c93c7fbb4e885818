//! `porfiry model pull` end to end: the real binary pulls the catalogue's
//! `smollm2-135m` by name from a Hugging Face mirror on loopback
//! (`--hf-endpoint`) that serves the real test model's bytes and breaks the
//! first connection midway; the same command then resumes with a range and
//! the pinned SHA-256 matches the real file (what a pull from the Hub
//! checks), registers it as the main model, and `llm list` and `model list`
//! show it. A file by `--url` whose bytes differ from its `--sha256` is
//! deleted and nothing is registered. This machine cannot reach the Hub, so
//! the mirror stands in for it.

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::Response;
use porfiry_engine::pull::catalogue::find;
use porfiry_engine::test_model::test_model_path;
use porfiry_tests::porfiry_bin::porfiry_bin;

/// Bytes the mirror sends before breaking the first connection.
const CUT_AT: usize = 40_000_000;

#[derive(Clone)]
struct Mirror {
    model: Arc<Vec<u8>>,
    /// The first download is broken at [`CUT_AT`].
    cut_next: Arc<Mutex<bool>>,
    /// Range headers seen, in order.
    ranges: Arc<Mutex<Vec<Option<String>>>>,
}

async fn serve(State(m): State<Mirror>, uri: Uri, headers: HeaderMap) -> Response {
    let range = headers
        .get(header::RANGE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    m.ranges.lock().unwrap().push(range.clone());
    let smol = find("smollm2-135m").unwrap();
    let mut data: Vec<u8> =
        if uri.path() == format!("/{}/resolve/{}/{}", smol.repo, smol.revision, smol.file) {
            m.model.as_ref().clone()
        } else if uri.path() == "/changed.gguf" {
            let mut d = m.model.as_ref().clone();
            d[1000] ^= 1;
            d
        } else {
            return Response::builder()
                .status(StatusCode::NOT_FOUND)
                .body(Body::empty())
                .unwrap();
        };
    let total = data.len();
    let start = range
        .and_then(|r| {
            r.strip_prefix("bytes=")?
                .strip_suffix('-')?
                .parse::<usize>()
                .ok()
        })
        .unwrap_or(0);
    let mut response = Response::builder().header(header::CONTENT_LENGTH, total - start);
    if start > 0 {
        response = response.status(StatusCode::PARTIAL_CONTENT).header(
            header::CONTENT_RANGE,
            format!("bytes {start}-{}/{total}", total - 1),
        );
        data.drain(..start);
    }
    let cut = std::mem::take(&mut *m.cut_next.lock().unwrap());
    if cut {
        let chunks: Vec<Result<Bytes, std::io::Error>> = vec![
            Ok(Bytes::copy_from_slice(&data[..CUT_AT])),
            Err(std::io::Error::other("cable pulled")),
        ];
        return response
            .body(Body::from_stream(futures::stream::iter(chunks)))
            .unwrap();
    }
    response.body(Body::from(data)).unwrap()
}

fn porfiry(data_dir: &std::path::Path, args: &[&str]) -> Output {
    Command::new(porfiry_bin())
        .args(["--data-dir", &data_dir.display().to_string()])
        .args(args)
        .env_remove("HF_ENDPOINT")
        .output()
        .unwrap()
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_catalogue_model_is_pulled_resumed_verified_and_registered_and_a_changed_file_is_not() {
    let model = std::fs::read(test_model_path().unwrap_or_else(|e| panic!("{e}"))).unwrap();
    let mirror = Mirror {
        model: Arc::new(model.clone()),
        cut_next: Arc::new(Mutex::new(true)),
        ranges: Arc::default(),
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let app = Router::new().fallback(serve).with_state(mirror.clone());
    rt.spawn(async move { axum::serve(listener, app).await });
    let dir = tempfile::tempdir().unwrap();
    let pull = ["model", "pull", "smollm2-135m", "--hf-endpoint", &endpoint];

    let out = porfiry(dir.path(), &pull);
    let (stdout, stderr) = text(&out);
    assert!(!out.status.success(), "{stdout}");
    // What reached the client before the cut: the server may drop the last
    // bytes it had buffered when its stream fails, so up to CUT_AT.
    let kept: usize = stderr
        .split("download interrupted after ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(kept > 0 && kept <= CUT_AT, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "download interrupted after {kept} of {}",
            model.len()
        )) && stderr.contains("run the same command again to resume"),
        "{stderr}"
    );
    let part = dir
        .path()
        .join("models/SmolLM2-135M-Instruct.Q4_1.gguf.part");
    assert_eq!(
        std::fs::metadata(&part).unwrap().len() as usize,
        kept,
        "the .part keeps them"
    );

    let out = porfiry(dir.path(), &pull);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let file: PathBuf = dir.path().join("models/SmolLM2-135M-Instruct.Q4_1.gguf");
    assert!(
        stdout.contains(&format!(
            "pulled smollm2-135m: 99 MB into {}",
            file.display()
        )) && stdout.contains(&format!(
            "resumed from {} MB, sha256 verified",
            kept / 1_000_000
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains("(main)") && stdout.contains("now uses it"),
        "{stdout}"
    );
    assert_eq!(std::fs::read(&file).unwrap(), model);
    assert_eq!(
        mirror.ranges.lock().unwrap().clone(),
        [None, Some(format!("bytes={kept}-"))]
    );

    let out = porfiry(dir.path(), &["llm", "list", "--json"]);
    let listed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = &listed["registry"][0];
    assert_eq!(row["name"], "smollm2-135m");
    assert_eq!(row["main"], true);
    assert_eq!(row["file"]["architecture"], "llama");
    let (stdout, _) = text(&porfiry(dir.path(), &["model", "list"]));
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("smollm2-135m") && l.contains("downloaded")),
        "{stdout}"
    );

    // Pulled again: verified in place, nothing fetched, not registered twice.
    let (stdout, _) = text(&porfiry(dir.path(), &pull));
    assert!(
        stdout.contains("already here") && stdout.contains("already registered"),
        "{stdout}"
    );
    assert_eq!(mirror.ranges.lock().unwrap().len(), 2);

    let sha = find("smollm2-135m").unwrap().sha256;
    let changed = format!("{endpoint}/changed.gguf");
    let out = porfiry(
        dir.path(),
        &["model", "pull", "other", "--url", &changed, "--sha256", sha],
    );
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(
        stderr.contains("SHA-256 mismatch") && stderr.contains("the file was deleted"),
        "{stderr}"
    );
    assert!(!dir.path().join("models/changed.gguf").exists());
    assert!(!dir.path().join("models/changed.gguf.part").exists());
    let out = porfiry(dir.path(), &["llm", "list", "--json"]);
    let listed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listed["registry"].as_array().unwrap().len(), 1);
}

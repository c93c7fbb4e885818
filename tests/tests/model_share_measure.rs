//! Measurement for docs/benchmarks.md, "A model from a friend" (ignored; run
//! by hand, figures printed, never asserted):
//!
//! ```text
//! cargo test -p porfiry-tests --test model_share_measure -- --ignored --nocapture
//! ```
//!
//! (`--release` for a release build.) Two real `porfiry` nodes on loopback,
//! set up as in `model_share_cli.rs`: A registers the real test model and
//! runs `porfiry run --share-models`, B is allowed to pull. Timed
//! [`ROUNDS`] times each, from an empty models folder and registry on B:
//!
//! - `porfiry model pull smol --from home`, the whole command (process
//!   start, dial, noise + yamux, signed list, transfer, SHA-256, fsync,
//!   rename, registry);
//! - a plain HTTP GET of the same bytes from an axum server in this process
//!   (serving them from memory) by `reqwest`, written to a file and fsynced.
//!
//! MB/s (10^6 bytes a second) of each round and the medians are printed.
//! The first pull also waits for A to hash the file for its first list (A
//! keeps the hash while the file is unchanged).

use std::path::Path;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::routing::get;
use porfiry_engine::test_model::test_model_path;
use porfiry_tests::mesh_node::MeshNode;
use tokio::io::AsyncWriteExt;

/// Timed transfers of each kind: enough for a median on a machine shared
/// with builds, few enough that a debug run takes well under a minute.
const ROUNDS: usize = 3;

const NAME: &str = "smol";
const A_NAME: &str = "home";

fn mb_per_s(bytes: u64, took: Duration) -> f64 {
    bytes as f64 / 1e6 / took.as_secs_f64()
}

fn median(mut of: Vec<f64>) -> f64 {
    of.sort_by(f64::total_cmp);
    of[of.len() / 2]
}

/// One whole `model pull --from` on B, from nothing pulled or registered.
fn timed_pull(b: &MeshNode, bytes: u64) -> Duration {
    let models = b.dir().join("models");
    if models.exists() {
        std::fs::remove_dir_all(&models).unwrap();
    }
    // Not registered yet in the first round: then it says so and fails.
    let _ = b.cli(&["llm", "remove", NAME]);
    let start = Instant::now();
    let out = b.cli(&["model", "pull", NAME, "--from", A_NAME]);
    let took = start.elapsed();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("(sha256 verified)"), "{stdout}");
    let kept = std::fs::read_dir(&models)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .collect::<Vec<_>>();
    assert_eq!(kept, [bytes], "one whole file");
    took
}

/// One plain HTTP download of `url` into `to`, written and fsynced.
async fn timed_http(client: &reqwest::Client, url: &str, to: &Path, bytes: u64) -> Duration {
    let _ = tokio::fs::remove_file(to).await;
    let start = Instant::now();
    let mut response = client
        .get(url)
        .send()
        .await
        .unwrap()
        .error_for_status()
        .unwrap();
    let mut file = tokio::fs::File::create(to).await.unwrap();
    while let Some(chunk) = response.chunk().await.unwrap() {
        file.write_all(&chunk).await.unwrap();
    }
    file.sync_all().await.unwrap();
    let took = start.elapsed();
    assert_eq!(tokio::fs::metadata(to).await.unwrap().len(), bytes);
    took
}

#[test]
#[ignore = "measurement; see the module doc"]
fn pull_from_a_friend_against_plain_http_on_loopback() {
    let model = test_model_path().unwrap_or_else(|e| panic!("{e}"));
    let data = std::fs::read(&model).unwrap();
    let bytes = data.len() as u64;

    let mut a = MeshNode::init("A");
    let b = MeshNode::init("B");
    a.cli_ok(&["llm", "add", NAME, "--file", &model.display().to_string()]);
    a.befriend(&b, false, &[]);
    a.cli_ok(&["friends", "models", &b.peer_id, "on"]);
    let address = a.start_server_with(0, &["--share-models"]);
    b.cli_ok(&["friends", "add", &a.peer_id, &address, "--name", A_NAME]);

    let mut pulls = Vec::with_capacity(ROUNDS);
    for round in 1..=ROUNDS {
        let took = timed_pull(&b, bytes);
        let rate = mb_per_s(bytes, took);
        println!(
            "model pull --from, round {round}: {:.2} s, {rate:.0} MB/s",
            took.as_secs_f64()
        );
        pulls.push(rate);
    }

    let rt = tokio::runtime::Runtime::new().unwrap();
    let served = Bytes::from(data);
    let app = Router::new().route("/model.gguf", get(move || async move { served.clone() }));
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let url = format!("http://{}/model.gguf", listener.local_addr().unwrap());
    rt.spawn(async move { axum::serve(listener, app).await });
    let tmp = tempfile::tempdir().unwrap();
    let to = tmp.path().join("model.gguf");
    let client = reqwest::Client::new();
    let mut https = Vec::with_capacity(ROUNDS);
    for round in 1..=ROUNDS {
        let took = rt.block_on(timed_http(&client, &url, &to, bytes));
        let rate = mb_per_s(bytes, took);
        println!(
            "plain HTTP, round {round}: {:.2} s, {rate:.0} MB/s",
            took.as_secs_f64()
        );
        https.push(rate);
    }

    println!(
        "{bytes} bytes; medians: model pull --from {:.0} MB/s, plain HTTP {:.0} MB/s",
        median(pulls),
        median(https)
    );
}

//! Measurements for docs/benchmarks.md, "Quotas under a flood" (ignored; run
//! by hand, figures printed, never asserted but the budget):
//!
//! ```text
//! cargo test --release -p porfiry-tests --test quota_measure -- --ignored --nocapture
//! ```
//!
//! B is a real `porfiry run` with its API. T, a friend driven in-process by
//! the node's own libp2p driver, publishes as fast as it can 100,000 valid
//! public notes of its own and relays 100,000 by S, a stranger two hops
//! away. G, another real friend, posts notes one at a time. Timed idle and
//! under the flood: `POST /api/notes` and `GET /v1/models` on B (p50, p99),
//! and how long G's note takes to reach B. Then: how much of the flood B
//! kept (S: its stranger budget exactly), and that every note of G is there.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use porfiry_protocol::engine::DEFAULT_QUOTA_STRANGER_ITEMS;
use porfiry_protocol::{NodeKey, VerifiedItem};
use porfiry_tests::api_client::call;
use porfiry_tests::flood::{InProcessFriend, items_frame, public_note};
use porfiry_tests::mesh_node::MeshNode;

/// Notes each flooder publishes (`PORFIRY_FLOOD` overrides).
const FLOOD: usize = 100_000;

fn flood_size() -> usize {
    std::env::var("PORFIRY_FLOOD")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(FLOOD)
}

/// Polls `cond` for up to half an hour (a flood in a debug build takes
/// minutes; `wait_for`'s deadline is for tests).
fn wait_long(what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(
            start.elapsed() < Duration::from_secs(1_800),
            "{what} never happened"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
/// Notes per `Items` frame: a live push batch's size.
const PER_FRAME: usize = 500;
/// API calls timed per endpoint and phase.
const CALLS: usize = 200;
/// G's notes timed per phase.
const G_NOTES: usize = 20;

fn percentiles(mut ms: Vec<f64>) -> (f64, f64) {
    ms.sort_by(f64::total_cmp);
    let at = |p: f64| ms[((ms.len() as f64 - 1.0) * p).round() as usize];
    (at(0.5), at(0.99))
}

/// p50 and p99 (ms) of `POST /api/notes` and of `GET /v1/models`.
fn time_api(addr: SocketAddr, token: &str, phase: &str) -> [(f64, f64); 2] {
    let mut post = Vec::new();
    let mut models = Vec::new();
    for i in 0..CALLS {
        let t = Instant::now();
        let r = call(
            addr,
            "POST",
            "/api/notes",
            Some(token),
            &format!(r#"{{"text":"{phase} {i}","audience":"friends"}}"#),
        );
        post.push(t.elapsed().as_secs_f64() * 1e3);
        assert_eq!(r.status, 201, "{}", r.body);
        let t = Instant::now();
        let r = call(addr, "GET", "/v1/models", Some(token), "");
        models.push(t.elapsed().as_secs_f64() * 1e3);
        assert_eq!(r.status, 200, "{}", r.body);
    }
    [percentiles(post), percentiles(models)]
}

/// p50 and p99 (ms) of a note G posts until B holds it.
fn time_g(b: &MeshNode, g: &MeshNode, phase: &str) -> (f64, f64) {
    let mut ms = Vec::new();
    for i in 0..G_NOTES {
        let text = format!("g {phase} {i}");
        let t = Instant::now();
        g.post("friends", &text);
        wait_long("G's note at B", || b.has_note(g, &text));
        ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    percentiles(ms)
}

#[test]
#[ignore = "a measurement: run by hand (see the module doc)"]
fn api_and_other_friends_under_a_flood_from_a_friend_and_a_stranger() {
    let t_key = NodeKey::from_seed([53; 32]);
    let s_key = NodeKey::from_seed([54; 32]);
    let t_peer = t_key.peer_id();

    let mut b = MeshNode::init("B");
    let mut g = MeshNode::init("G");
    b.cli_ok(&["friends", "add", &t_peer.to_string()]);
    b.start_server_with(0, &["--api", "127.0.0.1:0"]);
    let api = b.api_address();
    let token = b.api_token();
    g.befriend(&b, true, &[]);
    b.befriend(&g, false, &[]);
    g.start_server_with(0, &["--no-api"]);
    b.wait_logged(&["friend connected", &g.peer_id]);

    let t = InProcessFriend::connect(&t_key, &b);

    let signing = Instant::now();
    let n = flood_size();
    let flood: Vec<VerifiedItem> = (0..n).map(|i| public_note(&s_key, i, "flood")).collect();
    let own: Vec<VerifiedItem> = (0..n).map(|i| public_note(&t_key, i, "mine")).collect();
    eprintln!(
        "signed {} notes in {:.1} s",
        2 * n,
        signing.elapsed().as_secs_f64()
    );

    let idle_api = time_api(api, &token, "idle");
    let idle_g = time_g(&b, &g, "idle");

    // The flood, from its own thread, as fast as the link takes it.
    let frames: Vec<Vec<u8>> = flood
        .chunks(PER_FRAME)
        .zip(own.chunks(PER_FRAME))
        .flat_map(|(f, o)| [items_frame(f), items_frame(o)])
        .collect();
    let flood_start = Instant::now();
    let done = Arc::new(AtomicBool::new(false));
    let flooding = {
        let done = done.clone();
        let handle = t.handle.clone();
        let rt_handle = t.rt.handle().clone();
        let to = t.to;
        std::thread::spawn(move || {
            let t = Instant::now();
            for f in frames {
                rt_handle.block_on(handle.send(to, f)).unwrap();
            }
            done.store(true, Ordering::SeqCst);
            t.elapsed()
        })
    };
    let flood_api = time_api(api, &token, "flood");
    let flood_g = time_g(&b, &g, "flood");
    let still_flooding = !done.load(Ordering::SeqCst);
    let sent_in = flooding.join().unwrap();
    let b_holds_own = || {
        let store = b.store();
        own.iter()
            .rev()
            .take(PER_FRAME)
            .all(|x| store.has_item(&x.id()).unwrap())
    };
    wait_long("B to store the last frame of T's own notes", b_holds_own);
    let drained = flood_start.elapsed();
    let store = b.store();
    let kept_s = flood
        .iter()
        .filter(|x| store.has_item(&x.id()).unwrap())
        .count();
    let kept_t = own
        .iter()
        .filter(|x| store.has_item(&x.id()).unwrap())
        .count();
    let status: serde_json::Value = serde_json::from_str(&b.cli_ok(&["status", "--json"])).unwrap();

    let [(ip50, ip99), (im50, im99)] = idle_api;
    let [(fp50, fp99), (fm50, fm99)] = flood_api;
    eprintln!("| | idle p50 / p99 (ms) | under the flood p50 / p99 (ms) |");
    eprintln!("|---|---|---|");
    eprintln!("| `POST /api/notes` | {ip50:.1} / {ip99:.1} | {fp50:.1} / {fp99:.1} |");
    eprintln!("| `GET /v1/models` | {im50:.1} / {im99:.1} | {fm50:.1} / {fm99:.1} |");
    eprintln!(
        "| G's note reaches B | {:.0} / {:.0} | {:.0} / {:.0} |",
        idle_g.0, idle_g.1, flood_g.0, flood_g.1
    );
    eprintln!(
        "flood still running when the timing ended: {still_flooding}; {} frames sent in {:.1} s, \
         stored by {:.1} s ({:.0} items/s offered)",
        2 * n / PER_FRAME,
        sent_in.as_secs_f64(),
        drained.as_secs_f64(),
        (2 * n) as f64 / drained.as_secs_f64()
    );
    eprintln!(
        "kept of S: {kept_s}, of T: {kept_t}; refused: {}",
        status["refused"]
    );
    eprintln!("B peak RSS: {:?} bytes", b.peak_rss_bytes());
    assert_eq!(kept_s, DEFAULT_QUOTA_STRANGER_ITEMS as usize);
    assert_eq!(kept_t, n);

    t.shutdown();
    assert!(b.terminate().status.success());
    assert!(g.terminate().status.success());
}

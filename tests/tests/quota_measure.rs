//! Measurements for docs/benchmarks.md, "Quotas under a flood" (ignored; run
//! by hand, figures printed, never asserted but the budget):
//!
//! ```text
//! cargo test -p porfiry-tests --test quota_measure -- --ignored --nocapture
//! ```
//!
//! (`--release` for a release build; `PORFIRY_FLOOD=N` floods N notes of
//! each kind instead of 100,000; `PORFIRY_MEASURE_LOGS=DIR` keeps B's and
//! G's logs.) B is a real `porfiry run` with its API. T, a friend driven
//! in-process by the node's own libp2p driver, publishes as fast as it can
//! 100,000 valid public notes of its own and relays 100,000 by S, a stranger
//! two hops away. G, another real friend, posts a note every half second.
//! Timed idle and from the flood's start, both at once: `POST /api/notes`
//! and `GET /v1/models` on B (p50, p99), and how long each of G's notes
//! takes to reach B. Then: whether B was still storing the flood when the
//! timings ended (only then do they measure it), how much of the flood B
//! kept (S: no more than its stranger budget; T: all of it), and that every
//! note of G is there.

use std::collections::HashSet;
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
/// How often G posts one: a person posting briskly, and 20 notes cover
/// ten seconds of the flood.
const G_EVERY: Duration = Duration::from_millis(500);

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

/// G posts a note every [`G_EVERY`] ([`G_NOTES`] in all) without waiting
/// for the last to arrive; returns p50 and p99 (ms) of each note's way
/// until B holds it, and of the `notes post` command on G alone (a
/// process of its own, part of the first). Notes posted at a steady pace
/// sample the whole time they cover, not only what is left when the last
/// one arrived.
fn time_g(b: &MeshNode, g: &MeshNode, phase: &str) -> [(f64, f64); 2] {
    let start = Instant::now();
    let mut ms = Vec::new();
    let mut cli = Vec::new();
    let mut pending: Vec<(String, Instant)> = Vec::new();
    let mut next_post = start;
    let mut posted = 0;
    while posted < G_NOTES || !pending.is_empty() {
        if posted < G_NOTES && Instant::now() >= next_post {
            let text = format!("g {phase} {posted}");
            let t = Instant::now();
            g.post("friends", &text);
            cli.push(t.elapsed().as_secs_f64() * 1e3);
            pending.push((text, t));
            posted += 1;
            next_post = t + G_EVERY;
        }
        let held: HashSet<String> = b.notes_from(g).into_iter().map(|n| n.row.text).collect();
        pending.retain(|(text, t)| {
            let arrived = held.contains(text);
            if arrived {
                ms.push(t.elapsed().as_secs_f64() * 1e3);
            }
            !arrived
        });
        assert!(
            start.elapsed() < Duration::from_secs(1_800),
            "G's notes never reached B"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    [percentiles(ms), percentiles(cli)]
}

/// p50 and p99 (ms) of two timings.
type Pair = [(f64, f64); 2];

/// [`time_api`] and [`time_g`] at the same time.
fn time_both(
    api: SocketAddr,
    token: &str,
    b: &MeshNode,
    g: &MeshNode,
    phase: &str,
) -> (Pair, Pair) {
    std::thread::scope(|s| {
        let calls = s.spawn(|| time_api(api, token, phase));
        let notes = time_g(b, g, phase);
        (calls.join().expect("the API timing"), notes)
    })
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

    let (idle_api, idle_g) = time_both(api, &token, &b, &g, "idle");

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
    let b_holds_own = || {
        let store = b.store();
        own.iter()
            .rev()
            .take(PER_FRAME)
            .all(|x| store.has_item(&x.id()).unwrap())
    };
    let (flood_api, flood_g) = time_both(api, &token, &b, &g, "flood");
    let timed_in = flood_start.elapsed();
    // Only timings taken while B still works on the flood measure it.
    let still_storing = !b_holds_own();
    let still_flooding = !done.load(Ordering::SeqCst);
    let sent_in = flooding.join().unwrap();
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
    let [idle_g, idle_cli] = idle_g;
    let [flood_g, flood_cli] = flood_g;
    eprintln!(
        "| G's note reaches B | {:.0} / {:.0} | {:.0} / {:.0} |",
        idle_g.0, idle_g.1, flood_g.0, flood_g.1
    );
    eprintln!(
        "| of which `notes post` on G | {:.0} / {:.0} | {:.0} / {:.0} |",
        idle_cli.0, idle_cli.1, flood_cli.0, flood_cli.1
    );
    eprintln!(
        "timings ended {:.1} s into the flood, B still storing it then: {still_storing}",
        timed_in.as_secs_f64()
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
    // At most S's stranger budget: T's link also brings strangers' items
    // at a rate (`DEFAULT_STRANGER_ITEMS_PER_LINK_MINUTE`), and what comes
    // faster waits for a later catch-up, so a short flood may keep fewer.
    assert!(kept_s <= DEFAULT_QUOTA_STRANGER_ITEMS as usize, "{kept_s}");
    assert_eq!(kept_t, n);
    // PORFIRY_MEASURE_LOGS=DIR keeps B's and G's logs there (with
    // PORFIRY_TEST_RUST_LOG for their filter), to see where time went.
    if let Ok(dir) = std::env::var("PORFIRY_MEASURE_LOGS") {
        for (node, name) in [(&b, "b.log"), (&g, "g.log")] {
            std::fs::write(std::path::Path::new(&dir).join(name), node.stderr())
                .expect("the log is written");
        }
    }

    t.shutdown();
    assert!(b.terminate().status.success());
    assert!(g.terminate().status.success());
}

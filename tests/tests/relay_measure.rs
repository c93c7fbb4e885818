//! Measurements for docs/benchmarks.md (ignored; run by hand, figures are
//! printed, never asserted):
//!
//! ```text
//! cargo test --release -p porfiry-tests --test relay_measure -- --ignored --nocapture --test-threads 1
//! ```
//!
//! - `relayed_vs_direct_latency_and_throughput`: in-process mesh drivers on
//!   loopback TCP. A phone P sends frames to a friend H, once directly and
//!   once through a friends-only relay R; H echoes each small frame (round
//!   trip time, median and p90) and counts a burst of 1 KiB frames (items/s).
//! - `relay_memory_per_circuit`: a real `porfiry run --relay` process; its
//!   resident memory (`VmRSS`) before reservations, after N reservations and
//!   after N circuits through it, per reservation and per circuit.

use std::time::{Duration, Instant};

use porfiry_mesh::net::{
    Keypair, MeshConfig, MeshDriver, MeshEvent, MeshHandle, Multiaddr, PeerId, ReachConfig,
    RelayLimits,
};
use porfiry_tests::mesh_node::{MeshNode, wait_for};
use tokio::sync::mpsc::Receiver;
use tokio::time::timeout;

/// Safety net for every wait.
const WAIT: Duration = Duration::from_secs(60);
/// Round trips timed per link.
const ROUND_TRIPS: usize = 1_000;
/// Frames in the throughput burst, and their size.
const BURST: usize = 5_000;
const BURST_FRAME: usize = 1024;
/// Circuits opened through the relay process.
const CIRCUITS: usize = 32;

struct Driver {
    peer: PeerId,
    handle: MeshHandle,
    events: Receiver<MeshEvent>,
}

fn start(key: Keypair, config: MeshConfig) -> Driver {
    let (driver, handle, events) = MeshDriver::new(key, config).expect("driver starts");
    let peer = driver.local_peer_id();
    driver.spawn();
    Driver {
        peer,
        handle,
        events,
    }
}

async fn next_matching(
    events: &mut Receiver<MeshEvent>,
    want: impl Fn(&MeshEvent) -> bool,
) -> MeshEvent {
    loop {
        let e = timeout(WAIT, events.recv())
            .await
            .expect("in time")
            .expect("driver alive");
        if want(&e) {
            return e;
        }
    }
}

async fn listening(d: &mut Driver, circuit: bool) -> Multiaddr {
    let e = next_matching(&mut d.events, |e| {
        matches!(e, MeshEvent::Listening { address }
            if address.to_string().contains("p2p-circuit") == circuit)
    })
    .await;
    let MeshEvent::Listening { address } = e else {
        unreachable!()
    };
    address
}

fn loopback() -> Vec<Multiaddr> {
    vec!["/ip4/127.0.0.1/tcp/0".parse().unwrap()]
}

fn key_pair() -> (Keypair, PeerId) {
    let k = Keypair::generate_ed25519();
    let p = k.public().to_peer_id();
    (k, p)
}

/// Times round trips and a burst from `p` to `h` (H echoes small frames).
async fn measure(mut p: Driver, mut h: Driver, label: &str) {
    next_matching(&mut p.events, |e| {
        *e == MeshEvent::PeerConnected { peer: h.peer }
    })
    .await;
    let h_peer = h.peer;
    let p_peer = p.peer;
    let echo = tokio::spawn(async move {
        let mut counted = 0usize;
        while let Some(e) = h.events.recv().await {
            if let MeshEvent::FrameReceived { peer, frame } = e
                && peer == p_peer
            {
                if frame.len() < BURST_FRAME {
                    h.handle.send(p_peer, frame).await.unwrap();
                } else {
                    counted += 1;
                    if counted == BURST {
                        h.handle.send(p_peer, b"done".to_vec()).await.unwrap();
                    }
                }
            }
        }
    });
    let mut rtts = Vec::with_capacity(ROUND_TRIPS);
    for i in 0..ROUND_TRIPS {
        let frame = format!("ping {i:08}").into_bytes();
        let start = Instant::now();
        p.handle.send(h_peer, frame.clone()).await.unwrap();
        next_matching(
            &mut p.events,
            |e| matches!(e, MeshEvent::FrameReceived { frame: f, .. } if *f == frame),
        )
        .await;
        rtts.push(start.elapsed());
    }
    rtts.sort();
    let start = Instant::now();
    for _ in 0..BURST {
        p.handle.send(h_peer, vec![1u8; BURST_FRAME]).await.unwrap();
    }
    next_matching(
        &mut p.events,
        |e| matches!(e, MeshEvent::FrameReceived { frame, .. } if frame == b"done"),
    )
    .await;
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{label}: RTT median {:.2} ms, p90 {:.2} ms; {BURST} x {BURST_FRAME} B frames in {secs:.2} s = {:.0} items/s",
        rtts[ROUND_TRIPS / 2].as_secs_f64() * 1e3,
        rtts[ROUND_TRIPS * 9 / 10].as_secs_f64() * 1e3,
        BURST as f64 / secs
    );
    echo.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "measurement; see the module doc"]
async fn relayed_vs_direct_latency_and_throughput() {
    // Direct: P dials H's loopback address.
    let ((hk, hp), (pk, pp)) = (key_pair(), key_pair());
    let mut h = start(
        hk,
        MeshConfig::server(loopback()).with_friend(pp, Vec::new()),
    );
    let h_addr = listening(&mut h, false).await;
    let p = start(pk, MeshConfig::phone().with_friend(hp, vec![h_addr]));
    measure(p, h, "direct ").await;

    // Relayed: H listens nowhere and reserves at R; P dials it through R.
    let ((rk, rp), (hk, hp), (pk, pp)) = (key_pair(), key_pair(), key_pair());
    let mut r = start(
        rk,
        MeshConfig {
            reach: ReachConfig {
                relay: Some(RelayLimits::default()),
                ..ReachConfig::default()
            },
            ..MeshConfig::server(loopback())
        }
        .with_friend(hp, Vec::new())
        .with_friend(pp, Vec::new()),
    );
    let r_addr = listening(&mut r, false).await;
    tokio::spawn(async move { while r.events.recv().await.is_some() {} });
    let mut h = start(
        hk,
        MeshConfig::phone()
            .with_friend(rp, vec![r_addr.clone()])
            .with_friend(pp, Vec::new()),
    );
    listening(&mut h, true).await;
    let via: Multiaddr = format!("{r_addr}/p2p/{rp}/p2p-circuit/p2p/{hp}")
        .parse()
        .unwrap();
    let p = start(
        pk,
        MeshConfig::phone()
            .with_friend(rp, vec![r_addr])
            .with_friend(hp, vec![via]),
    );
    measure(p, h, "relayed").await;
}

/// The resident memory of process `pid`, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

#[test]
#[ignore = "measurement; see the module doc"]
fn relay_memory_per_circuit() {
    let mut relay = MeshNode::init("R");
    let hidden: Vec<(Keypair, PeerId)> = (0..CIRCUITS).map(|_| key_pair()).collect();
    let phones: Vec<(Keypair, PeerId)> = (0..CIRCUITS).map(|_| key_pair()).collect();
    for (_, p) in hidden.iter().chain(&phones) {
        relay.cli_ok(&["friends", "add", &p.to_string()]);
    }
    let r_addr = relay.start_server_with(0, &["--relay", "--no-api"]);
    let pid = relay.pid().expect("relay running");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let before = rss_kib(pid);
    let rp: PeerId = relay.peer_id.parse().unwrap();
    let base: Multiaddr = r_addr
        .trim_end_matches(&format!("/p2p/{rp}"))
        .parse()
        .unwrap();
    let mut keep = Vec::new();
    rt.block_on(async {
        for ((hk, _), (_, pp)) in hidden.iter().zip(&phones) {
            let mut h = start(
                hk.clone(),
                MeshConfig::phone()
                    .with_friend(rp, vec![base.clone()])
                    .with_friend(*pp, Vec::new()),
            );
            listening(&mut h, true).await;
            keep.push(h);
        }
    });
    wait_for("every slot granted", || {
        relay.logged_count(&["granted a relay slot"]) >= CIRCUITS
    });
    let reserved = rss_kib(pid);
    rt.block_on(async {
        for ((_, hp), (pk, _)) in hidden.iter().zip(&phones) {
            let via: Multiaddr = format!("{base}/p2p/{rp}/p2p-circuit/p2p/{hp}")
                .parse()
                .unwrap();
            let mut p = start(
                pk.clone(),
                MeshConfig::phone()
                    .with_friend(rp, vec![base.clone()])
                    .with_friend(*hp, vec![via]),
            );
            next_matching(&mut p.events, |e| {
                *e == MeshEvent::PeerConnected { peer: *hp }
            })
            .await;
            keep.push(p);
        }
    });
    wait_for("every circuit relayed", || {
        relay.logged_count(&["relaying a circuit"]) >= CIRCUITS
    });
    let circuits = rss_kib(pid);
    println!(
        "relay RSS: {before} KiB idle; {reserved} KiB with {CIRCUITS} reservations ({:.1} KiB each); \
         {circuits} KiB with {CIRCUITS} circuits ({:.1} KiB per circuit)",
        (reserved.saturating_sub(before)) as f64 / CIRCUITS as f64,
        (circuits.saturating_sub(reserved)) as f64 / CIRCUITS as f64,
    );
    relay.terminate();
    drop(keep);
}

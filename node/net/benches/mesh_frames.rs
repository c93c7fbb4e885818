//! Cost of the mesh driver's transport on loopback: frames per second from a
//! phone to a server through two real drivers (TCP + noise + yamux +
//! request-response with our codec), and the time for a phone to connect
//! (dial, noise handshake, yamux, both sides reporting the link).

// `criterion_group!` generates an undocumented `pub fn`.
#![allow(missing_docs)]

use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use porfiry_net::{Keypair, MeshConfig, MeshDriver, MeshEvent, MeshHandle, Multiaddr, PeerId};
use tokio::runtime::Runtime;
use tokio::sync::mpsc::Receiver;

/// A listening server driver and what the bench needs of it.
struct Server {
    peer: PeerId,
    handle: MeshHandle,
    events: Receiver<MeshEvent>,
    address: Multiaddr,
}

async fn until(events: &mut Receiver<MeshEvent>, want: impl Fn(&MeshEvent) -> bool) -> MeshEvent {
    loop {
        let event = events.recv().await.expect("driver running");
        if let MeshEvent::SendFailed { .. } = event {
            panic!("bench frame not sent: {event:?}");
        }
        if want(&event) {
            return event;
        }
    }
}

async fn server() -> Server {
    let config = MeshConfig::server(vec!["/ip4/127.0.0.1/tcp/0".parse().unwrap()]);
    let (driver, handle, mut events) =
        MeshDriver::new(Keypair::generate_ed25519(), config).unwrap();
    let peer = driver.local_peer_id();
    driver.spawn();
    let MeshEvent::Listening { address } =
        until(&mut events, |e| matches!(e, MeshEvent::Listening { .. })).await
    else {
        unreachable!()
    };
    Server {
        peer,
        handle,
        events,
        address,
    }
}

/// A new phone dialling `server`; returns once both sides see the link.
async fn connect_phone(server: &mut Server) -> (MeshHandle, Receiver<MeshEvent>) {
    let key = Keypair::generate_ed25519();
    let phone_peer = key.public().to_peer_id();
    server
        .handle
        .add_friend(phone_peer, Vec::new())
        .await
        .unwrap();
    let config = MeshConfig::phone().with_friend(server.peer, vec![server.address.clone()]);
    let (driver, phone, mut phone_events) = MeshDriver::new(key, config).unwrap();
    driver.spawn();
    let server_peer = server.peer;
    until(&mut phone_events, |e| {
        *e == MeshEvent::PeerConnected { peer: server_peer }
    })
    .await;
    until(&mut server.events, |e| {
        *e == MeshEvent::PeerConnected { peer: phone_peer }
    })
    .await;
    (phone, phone_events)
}

fn frames(c: &mut Criterion) {
    let rt = Runtime::new().unwrap();
    let (mut server, (phone, _phone_events)) = rt.block_on(async {
        let mut server = server().await;
        let phone = connect_phone(&mut server).await;
        (server, phone)
    });
    let mut group = c.benchmark_group("mesh_frames");
    // (frame size, frames per batch): batches stay inside the per-peer queue.
    for (size, count) in [(1024usize, 1000usize), (64 * 1024, 200), (1024 * 1024, 16)] {
        group.throughput(Throughput::Elements(count as u64));
        group.bench_function(
            format!("phone_to_server_{}KiB_x{count}", size / 1024),
            |b| {
                let frame = vec![0x5A; size];
                b.iter_custom(|iters| {
                    rt.block_on(async {
                        let start = Instant::now();
                        for _ in 0..iters {
                            for _ in 0..count {
                                phone.send(server.peer, frame.clone()).await.unwrap();
                            }
                            for _ in 0..count {
                                until(&mut server.events, |e| {
                                    matches!(e, MeshEvent::FrameReceived { .. })
                                })
                                .await;
                            }
                        }
                        start.elapsed()
                    })
                });
            },
        );
    }
    group.finish();

    let mut group = c.benchmark_group("mesh_connect");
    group.bench_function("phone_dials_server_until_both_see_the_link", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let start = Instant::now();
                    let (other, _events) = connect_phone(&mut server).await;
                    total += start.elapsed();
                    other.shutdown().await.unwrap();
                }
                total
            })
        });
    });
    group.finish();
}

criterion_group!(benches, frames);
criterion_main!(benches);

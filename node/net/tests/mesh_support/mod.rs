//! Shared helpers for the mesh driver tests: start drivers on loopback, wait
//! for events with a safety-net timeout (never a sleep), build friend pairs.
#![allow(dead_code)] // each test file uses a different subset

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use porfiry_net::{
    Backoff, Keypair, MeshConfig, MeshDriver, MeshEvent, MeshHandle, Multiaddr, PeerId,
};
use tokio::sync::mpsc::Receiver;
use tokio::task::JoinHandle;
use tokio::time::timeout;

/// Safety net for every wait; a passing test never comes near it.
pub const WAIT: Duration = Duration::from_secs(30);

/// A short backoff so redial tests take milliseconds, not seconds.
pub const FAST: Backoff = Backoff::new(Duration::from_millis(20), Duration::from_millis(200));

/// A running driver with its handle, events and task.
pub struct Node {
    pub peer: PeerId,
    pub handle: MeshHandle,
    pub events: Receiver<MeshEvent>,
    pub task: JoinHandle<()>,
}

/// Builds and spawns a driver.
pub fn start(key: Keypair, config: MeshConfig) -> Node {
    let (driver, handle, events) = MeshDriver::new(key, config).expect("driver starts");
    let peer = driver.local_peer_id();
    Node {
        peer,
        handle,
        events,
        task: driver.spawn(),
    }
}

/// Collects what tracing writes, to check that something is logged by name.
#[derive(Clone, Default)]
pub struct LogBuffer(Arc<Mutex<Vec<u8>>>);

impl LogBuffer {
    /// Everything written so far.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

impl Write for LogBuffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Sends this thread's warnings to a [`LogBuffer`] until the guard drops.
/// Use it on a current-thread runtime: the drivers spawned there log on
/// this thread, so the thread-local subscriber sees them.
pub fn capture_warnings() -> (LogBuffer, tracing::subscriber::DefaultGuard) {
    let log = LogBuffer::default();
    let writer = log.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::WARN)
        .finish();
    (log, tracing::subscriber::set_default(subscriber))
}

/// Listen on any free loopback port.
pub fn loopback() -> Vec<Multiaddr> {
    vec!["/ip4/127.0.0.1/tcp/0".parse().unwrap()]
}

/// Waits for the first event matching `want`; returns it and every event before it.
pub async fn wait_for(
    events: &mut Receiver<MeshEvent>,
    want: impl Fn(&MeshEvent) -> bool,
) -> (MeshEvent, Vec<MeshEvent>) {
    let mut before = Vec::new();
    loop {
        let event = timeout(WAIT, events.recv())
            .await
            .unwrap_or_else(|_| panic!("timed out; events so far: {before:?}"))
            .expect("driver stopped");
        if want(&event) {
            return (event, before);
        }
        before.push(event);
    }
}

/// A server listening on loopback, and the address it got.
pub async fn server(key: Keypair) -> (Node, Multiaddr) {
    listening(key, MeshConfig::server(loopback())).await
}

/// Starts a driver with `config` (which listens somewhere) and waits for
/// its first listen address.
pub async fn listening(key: Keypair, config: MeshConfig) -> (Node, Multiaddr) {
    let mut node = start(key, config);
    let (event, _) = wait_for(&mut node.events, |e| {
        matches!(e, MeshEvent::Listening { .. })
    })
    .await;
    let MeshEvent::Listening { address } = event else {
        unreachable!()
    };
    (node, address)
}

/// A phone dialling `server` at `address`, with a fast backoff.
pub fn phone(key: Keypair, server: PeerId, address: &Multiaddr, max_frame_bytes: u32) -> Node {
    let config = MeshConfig {
        backoff: FAST,
        max_frame_bytes,
        ..MeshConfig::phone()
    }
    .with_friend(server, vec![address.clone()]);
    start(key, config)
}

pub async fn connected(node: &mut Node, peer: PeerId) {
    wait_for(&mut node.events, |e| {
        *e == MeshEvent::PeerConnected { peer }
    })
    .await;
}

pub async fn received(node: &mut Node, from: PeerId) -> Vec<u8> {
    let (event, _) = wait_for(
        &mut node.events,
        |e| matches!(e, MeshEvent::FrameReceived { peer, .. } if *peer == from),
    )
    .await;
    let MeshEvent::FrameReceived { frame, .. } = event else {
        unreachable!()
    };
    frame
}

/// A server S (and its address) and a phone P that are friends and connected.
pub async fn friends_pair(phone_cap: u32) -> (Node, Multiaddr, Node) {
    let (mut s, address) = server(Keypair::generate_ed25519()).await;
    let p_key = Keypair::generate_ed25519();
    s.handle
        .add_friend(p_key.public().to_peer_id(), Vec::new())
        .await
        .unwrap();
    let mut p = phone(p_key, s.peer, &address, phone_cap);
    connected(&mut p, s.peer).await;
    connected(&mut s, p.peer).await;
    (s, address, p)
}

//! The gossipsub side of the redundancy measurement: one real
//! `libp2p::gossipsub` swarm per node of the world, in process over the
//! memory transport (noise + yamux, as in production), connected along the
//! same friend graph, all on one topic, publishing the same signed
//! envelopes from the same authors.
//!
//! Counting: gossipsub hands every message of every received RPC to its
//! `DataTransform::inbound_transform` before the duplicate check
//! (`handle_received_message` in libp2p-gossipsub 0.49), and calls it for
//! nothing else, so a transform that only counts gives the payload copies
//! received per node, duplicates included.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use futures::StreamExt;
use libp2p::core::multiaddr::Protocol;
use libp2p::core::transport::MemoryTransport;
use libp2p::core::upgrade::Version;
use libp2p::gossipsub::{self, DataTransform, IdentTopic, Message, RawMessage, TopicHash};
use libp2p::swarm::SwarmEvent;
use libp2p::{Multiaddr, Swarm, SwarmBuilder, Transport, noise, yamux};
use mesh_sim::World;
use tokio::sync::{mpsc, oneshot};

/// Memory-transport ports start here; each run takes the next block, as a
/// port stays registered in the process after its swarm is gone.
const PORT_BASE: u64 = 40_000;
/// Ports per run (more than any node count we use).
const PORT_BLOCK: u64 = 10_000;
static RUNS: AtomicU64 = AtomicU64::new(0);
/// How long to wait for every mesh to fill.
const MESH_WAIT: Duration = Duration::from_secs(20);
/// How long to wait for every message to arrive.
const DELIVERY_WAIT: Duration = Duration::from_secs(60);
/// Heartbeats to wait after full delivery for late copies (IWANT replies).
const SETTLE: Duration = Duration::from_secs(3);

/// What one gossipsub run measured.
#[derive(Debug, Clone)]
pub struct GossipFigures {
    /// Messages received by all nodes, duplicates included.
    pub copies: u64,
    /// Messages delivered to the application (first copies).
    pub delivered: u64,
    /// (item, node) pairs due: every node but the author, every item.
    pub due: u64,
    /// Smallest mesh size seen when publishing started.
    pub min_mesh: usize,
}

/// Counts every inbound message; otherwise the identity transform.
#[derive(Clone)]
struct Counting(Arc<AtomicU64>);

impl DataTransform for Counting {
    fn inbound_transform(&self, raw: RawMessage) -> Result<Message, std::io::Error> {
        self.0.fetch_add(1, Ordering::Relaxed);
        Ok(Message {
            source: raw.source,
            data: raw.data,
            sequence_number: raw.sequence_number,
            topic: raw.topic,
        })
    }

    fn outbound_transform(&self, _: &TopicHash, data: Vec<u8>) -> Result<Vec<u8>, std::io::Error> {
        Ok(data)
    }
}

enum Cmd {
    Dial(Multiaddr),
    Publish(Vec<u8>),
    MeshSize(oneshot::Sender<usize>),
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

type Node = Swarm<gossipsub::Behaviour<Counting>>;

fn memory_addr(base: u64, i: usize) -> Multiaddr {
    Multiaddr::empty().with(Protocol::Memory(base + i as u64))
}

fn build(world: &World, i: usize, counter: Arc<AtomicU64>) -> anyhow::Result<Node> {
    let swarm = SwarmBuilder::with_existing_identity(world.keys[i].to_libp2p_keypair())
        .with_tokio()
        .with_other_transport(|key| {
            let noise = noise::Config::new(key).map_err(BoxError::from)?;
            Ok::<_, BoxError>(
                MemoryTransport::default()
                    .upgrade(Version::V1)
                    .authenticate(noise)
                    .multiplex(yamux::Config::default()),
            )
        })?
        .with_behaviour(|key| {
            // Defaults throughout (D = 6, flood publish, 1 s heartbeat,
            // IDONTWANT above 1 kB): the comparison is with gossipsub as
            // shipped.
            let config = gossipsub::Config::default();
            gossipsub::Behaviour::new_with_transform(
                gossipsub::MessageAuthenticity::Signed(key.clone()),
                config,
                Counting(counter),
            )
            .map_err(BoxError::from)
        })?
        .with_swarm_config(|c| c.with_idle_connection_timeout(Duration::from_secs(300)))
        .build();
    Ok(swarm)
}

async fn drive(
    mut swarm: Node,
    topic: IdentTopic,
    mut cmds: mpsc::UnboundedReceiver<Cmd>,
    delivered: Arc<AtomicU64>,
) {
    loop {
        tokio::select! {
            cmd = cmds.recv() => match cmd {
                None => break,
                Some(Cmd::Dial(addr)) => {
                    if let Err(e) = swarm.dial(addr) {
                        eprintln!("dial failed: {e}");
                    }
                }
                Some(Cmd::Publish(data)) => {
                    if let Err(e) = swarm.behaviour_mut().publish(topic.clone(), data) {
                        eprintln!("publish failed: {e}");
                    }
                }
                Some(Cmd::MeshSize(reply)) => {
                    let _ = reply.send(swarm.behaviour().all_mesh_peers().count());
                }
            },
            event = swarm.select_next_some() => {
                if let SwarmEvent::Behaviour(gossipsub::Event::Message { .. }) = event {
                    delivered.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }
}

/// Runs the world's items through gossipsub; `gap` separates publishes.
pub async fn run(world: &World, gap: Duration) -> anyhow::Result<GossipFigures> {
    let n = world.len();
    let base = PORT_BASE + PORT_BLOCK * RUNS.fetch_add(1, Ordering::Relaxed);
    let topic = IdentTopic::new("porfiry-items");
    let copies: Vec<Arc<AtomicU64>> = (0..n).map(|_| Arc::new(AtomicU64::new(0))).collect();
    let delivered = Arc::new(AtomicU64::new(0));
    let mut senders = Vec::with_capacity(n);
    let mut tasks = Vec::with_capacity(n);
    for (i, counter) in copies.iter().enumerate() {
        let mut swarm = build(world, i, counter.clone()).context("building a swarm")?;
        swarm.listen_on(memory_addr(base, i)).context("listening")?;
        swarm
            .behaviour_mut()
            .subscribe(&topic)
            .context("subscribing")?;
        let (tx, rx) = mpsc::unbounded_channel();
        senders.push(tx);
        tasks.push(tokio::spawn(drive(
            swarm,
            topic.clone(),
            rx,
            delivered.clone(),
        )));
    }
    for (a, b) in world.links.edges() {
        senders[a]
            .send(Cmd::Dial(memory_addr(base, b)))
            .ok()
            .context("node task gone")?;
    }
    let start = Instant::now();
    let mut min_mesh = 0;
    while start.elapsed() < MESH_WAIT {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let mut sizes = Vec::with_capacity(n);
        for s in &senders {
            let (tx, rx) = oneshot::channel();
            s.send(Cmd::MeshSize(tx)).ok().context("node task gone")?;
            sizes.push(rx.await.context("node task gone")?);
        }
        min_mesh = sizes.iter().copied().min().unwrap_or(0);
        let full = (0..n).all(|i| {
            sizes[i]
                >= world
                    .links
                    .degree(i)
                    .min(gossipsub::Config::default().mesh_n())
        });
        if full {
            break;
        }
    }
    for p in &world.items {
        senders[p.author]
            .send(Cmd::Publish(p.item.envelope_bytes().to_vec()))
            .ok()
            .context("node task gone")?;
        tokio::time::sleep(gap).await;
    }
    let due = (world.items.len() * (n - 1)) as u64;
    let waited = Instant::now();
    while delivered.load(Ordering::Relaxed) < due && waited.elapsed() < DELIVERY_WAIT {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(SETTLE).await;
    drop(senders);
    for t in tasks {
        let _ = t.await;
    }
    Ok(GossipFigures {
        copies: copies.iter().map(|c| c.load(Ordering::Relaxed)).sum(),
        delivered: delivered.load(Ordering::Relaxed),
        due,
        min_mesh,
    })
}

//! Cost of the whole running node (`porfiry run`'s code: engine + libp2p
//! driver + SQLite on both sides), two nodes in one process on loopback,
//! each on its own thread and runtime as two processes would be:
//!
//! - `catch_up_10k`: a phone returns holding 10,000 notes its server lacks;
//!   time until the server's file holds all of them (verified, stored,
//!   merged into `notes`). Also prints wire bytes / envelope bytes.
//! - `live_10k`: both connected; 10,000 signed notes appear in the server's
//!   file (as `notes post` writes them, from another connection); time until
//!   the phone's file holds all of them (change detection, push, verify,
//!   store, merge).
//!
//! Each also prints, for its first iteration, the CPU time the whole process
//! (both nodes) spent while it was timed, per item and as cores kept busy:
//! on the 2-core build machine that shows whether a run waited on CPU or on
//! something else.

// `criterion_group!` generates an undocumented `pub fn`.
#![allow(missing_docs)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use porfiry_mesh::net::{Multiaddr, Profile};
use porfiry_mesh::replication::{DaemonOptions, LoopIo, Stopped, run_node};
use porfiry_mesh::sharing::item_rows::stored_record;
use porfiry_mesh::sharing::post_note;
use porfiry_mesh::sharing::publish::note_draft;
use porfiry_protocol::{Audience, NodeKey, VerifiedItem, sign};
use porfiry_skills::SystemClock;
use porfiry_storage::db::Db;
use porfiry_storage::{DB_FILE_NAME, Friend, Note, NoteSource, Sharing, Store};
use tokio::sync::{mpsc, oneshot, watch};

/// Notes per iteration.
const N: usize = 10_000;

struct Running {
    stop: oneshot::Sender<()>,
    thread: JoinHandle<Stopped>,
    listening: watch::Receiver<Vec<String>>,
}

impl Running {
    fn address(&self) -> String {
        loop {
            if let Some(a) = self.listening.borrow().first() {
                return a.clone();
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    fn stop(self) -> Stopped {
        let _ = self.stop.send(());
        self.thread.join().expect("node thread")
    }
}

/// CPU time (user + system) of this process so far, in milliseconds, from
/// `/proc/self/stat` (10 ms ticks); `None` where there is no such file.
fn cpu_ms() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name, which is in parentheses: utime and
    // stime are the 12th and 13th.
    let rest = stat.rsplit_once(')')?.1;
    let mut fields = rest.split_whitespace().skip(11);
    let user: u64 = fields.next()?.parse().ok()?;
    let system: u64 = fields.next()?.parse().ok()?;
    Some((user + system) * 10)
}

/// Prints the CPU a timed stretch took (see the module doc).
fn show_cpu(bench: &str, cpu_before: Option<u64>, wall: Duration) {
    if let (Some(before), Some(after)) = (cpu_before, cpu_ms()) {
        let cpu = after.saturating_sub(before);
        eprintln!(
            "{bench}: {cpu} ms of CPU in {} ms: {:.0} µs per item, {:.2} cores busy",
            wall.as_millis(),
            cpu as f64 * 1000.0 / N as f64,
            cpu as f64 / wall.as_millis().max(1) as f64
        );
    }
}

fn start(dir: &Path, key: NodeKey, profile: Profile) -> Running {
    let store = Store::open(dir.join(DB_FILE_NAME)).unwrap();
    let listen: Vec<Multiaddr> = match profile {
        Profile::Server => vec!["/ip4/127.0.0.1/tcp/0".parse().unwrap()],
        Profile::Phone => vec![],
    };
    let (stop, stopped) = oneshot::channel::<()>();
    let (listening_tx, listening) = watch::channel(Vec::new());
    // Named per node, so a profile tells the two nodes' loops apart.
    let name = match profile {
        Profile::Server => "server-node",
        Profile::Phone => "phone-node",
    };
    let thread = std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .thread_name(format!("{name}-rt"))
                .enable_all()
                .build()
                .unwrap();
            let shutdown = async move {
                let _ = stopped.await;
            };
            rt.block_on(async move {
                let db = Db::start(store).unwrap();
                // The sender stays alive for the whole run: no commands come.
                let (_commands_tx, commands) = mpsc::channel(1);
                let io = LoopIo {
                    commands,
                    listening: listening_tx,
                    clock: Arc::new(SystemClock::utc()),
                    events: porfiry_mesh::events::CoreEvents::new(),
                    db_changed: tokio::sync::watch::Sender::new(0),
                };
                let stopped = run_node(
                    key,
                    db.clone(),
                    DaemonOptions {
                        profile,
                        listen,
                        streams: porfiry_mesh::net::StreamControl::new(),
                        reach: porfiry_mesh::net::ReachConfig::default(),
                        quotas: porfiry_protocol::engine::Quotas::default(),
                        refused_file: None,
                        data_dir: None,
                    },
                    io,
                    shutdown,
                )
                .await
                .unwrap();
                db.close().await;
                stopped
            })
        })
        .unwrap();
    Running {
        stop,
        thread,
        listening,
    }
}

fn befriend(dir: &Path, peer: &NodeKey, address: Option<String>) {
    let store = Store::open(dir.join(DB_FILE_NAME)).unwrap();
    store
        .add_friend(
            &Friend {
                peer_id: peer.peer_id().to_string(),
                addresses: address.into_iter().collect(),
                ..Default::default()
            },
            1,
        )
        .unwrap();
}

fn wait_items(db: &Path, n: u64) {
    let store = Store::open(db).unwrap();
    while store.item_count().unwrap() < n {
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// A fresh pair of data dirs and keys.
struct Pair {
    _tmp: tempfile::TempDir,
    phone: PathBuf,
    server: PathBuf,
    phone_key: NodeKey,
    server_key: NodeKey,
}

fn pair(seed: u8) -> Pair {
    let tmp = tempfile::tempdir().unwrap();
    let phone = tmp.path().join("phone");
    let server = tmp.path().join("server");
    for d in [&phone, &server] {
        std::fs::create_dir_all(d).unwrap();
        Store::create(d.join(DB_FILE_NAME)).unwrap();
    }
    Pair {
        _tmp: tmp,
        phone,
        server,
        phone_key: NodeKey::from_seed([seed; 32]),
        server_key: NodeKey::from_seed([seed.wrapping_add(1); 32]),
    }
}

fn notes(key: &NodeKey, n: usize) -> Vec<VerifiedItem> {
    let base = porfiry_mesh::clock::now_ms();
    (0..n)
        .map(|i| {
            let row = Note {
                text: format!("note {i}: a line of ordinary chat, some eighty bytes long #bench"),
                hashtags: vec!["bench".into()],
                source: NoteSource::Cli,
                ..Default::default()
            };
            sign(key, &note_draft(&row, &Audience::Friends, base)).unwrap()
        })
        .collect()
}

fn catch_up(c: &mut Criterion) {
    let mut g = c.benchmark_group("mesh_daemon");
    g.sample_size(10);
    let mut ratio_shown = false;
    g.bench_function("catch_up_10k", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for i in 0..iters {
                let p = pair(10 + (i % 100) as u8);
                {
                    let store = Store::open(p.phone.join(DB_FILE_NAME)).unwrap();
                    let now = porfiry_mesh::clock::now_ms();
                    store
                        .transaction(|s| {
                            for j in 0..N {
                                let text = format!("note {j}: a line of ordinary chat, some eighty bytes long #bench");
                                post_note(s, &p.phone_key, &text, Sharing::Shared(Audience::Friends), NoteSource::Cli, now)
                                    .unwrap();
                            }
                            Ok(())
                        })
                        .unwrap();
                }
                befriend(&p.server, &p.phone_key, None);
                let server = start(&p.server, p.server_key.clone(), Profile::Server);
                befriend(&p.phone, &p.server_key, Some(server.address()));
                let t = Instant::now();
                let cpu = cpu_ms();
                let phone = start(&p.phone, p.phone_key.clone(), Profile::Phone);
                wait_items(&p.server.join(DB_FILE_NAME), N as u64);
                total += t.elapsed();
                if !ratio_shown {
                    show_cpu("catch_up_10k", cpu, t.elapsed());
                }
                let sent = phone.stop();
                server.stop();
                if !ratio_shown {
                    let store = Store::open(p.phone.join(DB_FILE_NAME)).unwrap();
                    let payload: usize = store
                        .item_records()
                        .unwrap()
                        .iter()
                        .map(|m| store.get_item(&m.id).unwrap().unwrap().payload.len())
                        .sum();
                    eprintln!(
                        "catch_up_10k: phone sent {} frames, {} bytes for {} envelope bytes: ratio {:.3}",
                        sent.counters.frames_sent,
                        sent.counters.bytes_sent,
                        payload,
                        sent.counters.bytes_sent as f64 / payload as f64
                    );
                    ratio_shown = true;
                }
            }
            total
        })
    });
    let mut cpu_shown = false;
    g.bench_function("live_10k", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for i in 0..iters {
                let p = pair(120 + (i % 100) as u8);
                befriend(&p.server, &p.phone_key, None);
                let server = start(&p.server, p.server_key.clone(), Profile::Server);
                befriend(&p.phone, &p.server_key, Some(server.address()));
                let phone = start(&p.phone, p.phone_key.clone(), Profile::Phone);
                // Written on the server, which notices its own file's
                // changes within `CHANGE_POLL_INTERVAL` (50 ms); a phone
                // polls every 5 s, which would be most of what this times.
                let items = notes(&p.server_key, N);
                // Connected once the server has recorded the phone online.
                let ss = Store::open(p.server.join(DB_FILE_NAME)).unwrap();
                while ss.friends().unwrap()[0].row.status != porfiry_storage::PeerStatus::Online {
                    std::thread::sleep(Duration::from_millis(2));
                }
                let t = Instant::now();
                let cpu = cpu_ms();
                ss.transaction(|s| {
                    for it in &items {
                        s.insert_items(&[stored_record(it, it.max_hops(), None)])?;
                    }
                    Ok(())
                })
                .unwrap();
                wait_items(&p.phone.join(DB_FILE_NAME), N as u64);
                total += t.elapsed();
                if !cpu_shown {
                    show_cpu("live_10k", cpu, t.elapsed());
                    cpu_shown = true;
                }
                phone.stop();
                server.stop();
            }
            total
        })
    });
    g.finish();
}

criterion_group!(benches, catch_up);
criterion_main!(benches);

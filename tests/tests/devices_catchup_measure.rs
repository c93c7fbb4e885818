//! Measurement for docs/benchmarks.md, "A new device catches up" (ignored;
//! run by hand, figures printed, nothing asserted about time):
//!
//! ```text
//! nice -n 10 cargo test -p porfiry-tests --test devices_catchup_measure -- --ignored --nocapture
//! ```
//!
//! A server whose file holds N diary entries of ~800 bytes (50,000 by
//! default, about 40 MB of text, as ten years of diary; written straight
//! into SQLite in one transaction before its daemon starts, so its
//! triggers queue every row for publishing) makes a `devices link` code; a
//! fresh phone runs `devices join CODE` and then `porfiry run --profile
//! phone`. Printed: the time from the join to all N rows in the phone's
//! file, the bytes the phone received on its TCP connections to the
//! server per entry (`ss -ti`'s `bytes_received`, sampled while they are
//! open), the phone's `mind_record` envelopes and database file per entry,
//! when the server had signed every version (its outbox empty), and both
//! daemons' peak RSS (`VmHWM`). `PORFIRY_DEVICE_ENTRIES=N` picks N.

use std::collections::HashMap;
use std::process::Command;
use std::time::{Duration, Instant};

use porfiry_storage::DB_FILE_NAME;
use porfiry_tests::mesh_node::MeshNode;

/// Entries the server holds unless `PORFIRY_DEVICE_ENTRIES` says otherwise:
/// the issue's ten years of diary.
const DEFAULT_ENTRIES: usize = 50_000;

/// Bytes of each entry's text: 50,000 of them are the issue's 40 MB.
const ENTRY_BYTES: usize = 800;

/// Longest the catch-up may take before the measurement gives up: a debug
/// build on two shared cores signs, sends and applies 50,000 versions in
/// minutes; an hour only trips on a stall.
const GIVE_UP: Duration = Duration::from_secs(3_600);

/// Between two samples of the phone's rows, RSS and sockets: often enough
/// to see a connection's last bytes before it closes, rarely enough not to
/// load the machine being measured.
const SAMPLE: Duration = Duration::from_millis(250);

fn entries_wanted() -> usize {
    std::env::var("PORFIRY_DEVICE_ENTRIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_ENTRIES)
}

fn entry_text(i: usize) -> String {
    let mut t = format!("diary entry {i}: ");
    let filler = "walked by the river, thought about the garden and the letters to write; ";
    while t.len() < ENTRY_BYTES {
        t.push_str(filler);
    }
    t.truncate(ENTRY_BYTES);
    t
}

/// Writes `n` diary entries into `node`'s file in one transaction.
fn fill_diary(node: &MeshNode, n: usize) {
    let mut conn = rusqlite::Connection::open(node.dir().join(DB_FILE_NAME)).unwrap();
    let tx = conn.transaction().unwrap();
    {
        let mut insert = tx
            .prepare("INSERT INTO diary_entries (text, created, updated) VALUES (?1, ?2, ?2)")
            .unwrap();
        for i in 0..n {
            let at = i64::try_from(i).unwrap() + 1;
            insert
                .execute(rusqlite::params![entry_text(i), at])
                .unwrap();
        }
    }
    tx.commit().unwrap();
}

fn count(node: &MeshNode, sql: &str) -> u64 {
    rusqlite::Connection::open(node.dir().join(DB_FILE_NAME))
        .unwrap()
        .query_row(sql, [], |r| r.get(0))
        .unwrap()
}

/// The TCP port in a `/ip4/…/tcp/PORT/p2p/…` address.
fn tcp_port(address: &str) -> u16 {
    let parts: Vec<&str> = address.split('/').collect();
    let at = parts
        .iter()
        .position(|p| *p == "tcp")
        .expect("a tcp address");
    parts[at + 1].parse().expect("a port")
}

/// `bytes_received` of every established TCP socket toward `port`, by its
/// local address; `None` when `ss` is missing or says nothing usable.
fn received_toward(port: u16) -> Option<HashMap<String, u64>> {
    let out = Command::new("ss")
        .args([
            "-tinH",
            "state",
            "established",
            "dport",
            "=",
            &format!(":{port}"),
        ])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut sockets = HashMap::new();
    let mut local = None;
    for line in text.lines() {
        if !line.starts_with(char::is_whitespace) {
            local = line.split_whitespace().nth(2).map(str::to_owned);
            continue;
        }
        let received = line
            .split_whitespace()
            .find_map(|f| f.strip_prefix("bytes_received:"))
            .and_then(|v| v.parse::<u64>().ok());
        if let (Some(l), Some(r)) = (local.clone(), received) {
            sockets.insert(l, r);
        }
    }
    Some(sockets)
}

/// Clock ticks per second in `/proc/PID/stat` (`USER_HZ`): 100 on every
/// Linux architecture the tests run on (`getconf CLK_TCK`).
const USER_HZ: f64 = 100.0;

/// CPU seconds (user + system) the process `pid` has used so far, from
/// `/proc/PID/stat` (Linux; `None` elsewhere).
fn cpu_seconds(pid: Option<u32>) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid?)).ok()?;
    // Fields after the command name, which is in parentheses.
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / USER_HZ)
}

#[test]
#[ignore = "a measurement for docs/benchmarks.md; run by hand"]
fn measure_a_new_device_catching_up_a_long_diary() {
    let n = entries_wanted();
    let mut server = MeshNode::init("server");
    let mut phone = MeshNode::init("phone");
    let filled = Instant::now();
    fill_diary(&server, n);
    println!(
        "server: {n} diary entries of {ENTRY_BYTES} bytes ({:.1} MB) written in {:.1} s",
        (n * ENTRY_BYTES) as f64 / 1e6,
        filled.elapsed().as_secs_f64()
    );
    server.start_server_recording_addresses();
    let port = tcp_port(server.address.as_deref().expect("listening"));
    let out = server.cli_ok(&["devices", "link"]);
    let code = out.lines().last().unwrap().trim().to_owned();

    let server_cpu_before = cpu_seconds(server.pid()).unwrap_or(0.0);
    let start = Instant::now();
    phone.cli_ok(&["devices", "join", &code]);
    let joined = start.elapsed();
    phone.start_phone();
    let mut received: HashMap<String, u64> = HashMap::new();
    let mut ss_works = true;
    let mut peak_phone = 0;
    let mut peak_server = 0;
    let mut published = None;
    let took = loop {
        if published.is_none() && count(&server, "SELECT count(*) FROM mind_outbox") == 0 {
            published = Some(start.elapsed());
        }
        if let Some(now) = received_toward(port) {
            for (socket, bytes) in now {
                let seen = received.entry(socket).or_default();
                *seen = (*seen).max(bytes);
            }
        } else {
            ss_works = false;
        }
        peak_phone = peak_phone.max(phone.peak_rss_bytes().unwrap_or(0));
        peak_server = peak_server.max(server.peak_rss_bytes().unwrap_or(0));
        let rows = count(&phone, "SELECT count(*) FROM diary_entries");
        if rows >= n as u64 {
            break start.elapsed();
        }
        assert!(
            start.elapsed() < GIVE_UP,
            "the phone holds {rows} of {n} entries after {:?}; its log:\n{}",
            start.elapsed(),
            phone.stderr()
        );
        std::thread::sleep(SAMPLE);
    };
    // The last bytes of the connection, read once more.
    if let Some(now) = received_toward(port) {
        for (socket, bytes) in now {
            let seen = received.entry(socket).or_default();
            *seen = (*seen).max(bytes);
        }
    }
    peak_phone = peak_phone.max(phone.peak_rss_bytes().unwrap_or(0));
    peak_server = peak_server.max(server.peak_rss_bytes().unwrap_or(0));
    let server_cpu = cpu_seconds(server.pid()).unwrap_or(0.0) - server_cpu_before;
    let phone_cpu = cpu_seconds(phone.pid()).unwrap_or(0.0);

    let wire: u64 = received.values().sum();
    // The envelope, signature included, as it travels.
    let stored = count(
        &phone,
        "SELECT coalesce(sum(length(payload)), 0) FROM items WHERE kind = 'mind_record'",
    );
    let file = count(
        &phone,
        "SELECT page_count * page_size FROM pragma_page_count, pragma_page_size",
    );
    let versions = count(
        &phone,
        "SELECT count(*) FROM items WHERE kind = 'mind_record'",
    );
    let rows = count(&phone, "SELECT count(*) FROM diary_entries");
    println!(
        "a new device catches up {n} diary entries: {:.1} s from `devices join` \
         (the join itself {:.1} s) to all {rows} rows in the phone's file",
        took.as_secs_f64(),
        joined.as_secs_f64()
    );
    match published {
        Some(at) => println!(
            "the server had signed every version {:.1} s after the join",
            at.as_secs_f64()
        ),
        None => println!("the server was still signing when the phone had every row"),
    }
    if ss_works && wire > 0 {
        println!(
            "bytes received by the phone from the server: {wire} over {} connection(s), {:.0} per entry",
            received.len(),
            wire as f64 / n as f64
        );
    } else {
        println!("bytes on the wire: not measured (`ss -ti` gave nothing)");
    }
    println!(
        "the phone's mind_record items: {versions}, envelopes {stored} bytes, {:.0} per entry; \
         its database file {:.1} MB, {:.0} bytes per entry",
        stored as f64 / n as f64,
        file as f64 / 1e6,
        file as f64 / n as f64
    );
    if ss_works && wire > 0 && stored > 0 {
        println!(
            "wire bytes / envelope bytes: {:.3}",
            wire as f64 / stored as f64
        );
    }
    println!("CPU time during the catch-up: server {server_cpu:.1} s, phone {phone_cpu:.1} s");
    println!(
        "peak RSS: phone {} MB, server {} MB",
        peak_phone / (1024 * 1024),
        peak_server / (1024 * 1024)
    );
    for node in [&mut phone, &mut server] {
        let exit = node.interrupt();
        assert!(exit.status.success(), "{}: {}", node.name, exit.stderr);
    }
}

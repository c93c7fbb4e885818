//! End to end over real `porfiry run` processes on loopback: a server
//! holding more than 64 MB of notes catches up a phone that joins with
//! none of them, in ONE session, every item once, while the phone's memory
//! stays bounded (the defect of issue 11: the whole difference was loaded
//! and queued at once, the driver dropped what exceeded its queue, and the
//! session aborted as "stalled").
//!
//! ```text
//!   B (server, N notes of 30 KB) ◄── A (phone, empty)
//! ```
//!
//! `PORFIRY_CATCHUP_NOTES` picks N (default 2,400, about 72 MB; 1,200 is
//! the 36 MB case of the issue). The test prints the catch-up time and both
//! daemons' peak RSS (`docs/benchmarks.md` quotes them).

use std::collections::HashSet;
use std::time::{Duration, Instant};

use porfiry_mesh::clock::now_ms;
use porfiry_mesh::sharing::post_note;
use porfiry_protocol::Audience;
use porfiry_storage::{NoteSource, Sharing};
use porfiry_tests::mesh_node::{MeshNode, POLL_INTERVAL};

/// Notes B holds unless `PORFIRY_CATCHUP_NOTES` says otherwise: 2,400 of
/// 30 KB are about 72 MB, past the 64 MB the issue asks for.
const DEFAULT_NOTES: usize = 2_400;

/// Bytes of each note's text: 30 KB, the size of the issue's notes, under
/// the 32 KiB text cap.
const NOTE_BYTES: usize = 30_000;

/// Most the phone's peak RSS may reach: the notes alone are 72 MB, so a
/// phone that held the whole difference (or its frames) at once would pass
/// this; a paced one stays far below.
const MAX_PHONE_RSS: u64 = 250 * 1024 * 1024;

/// Longest the catch-up may take (debug build, 2 shared cores): far above
/// the seconds it needs, far below the 5-minute resync that used to finish
/// the job, so a catch-up that needs a second session fails.
const CATCH_UP_DEADLINE: Duration = Duration::from_secs(240);

fn notes_wanted() -> usize {
    std::env::var("PORFIRY_CATCHUP_NOTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_NOTES)
}

fn text(i: usize) -> String {
    let head = format!("big note {i} ");
    let mut t = head.clone();
    let filler = "the quick brown fox jumps over the lazy dog ";
    while t.len() < NOTE_BYTES {
        t.push_str(filler);
    }
    t.truncate(NOTE_BYTES);
    t
}

#[test]
fn a_phone_catches_up_more_than_64_mb_in_one_session_with_bounded_memory() {
    let n = notes_wanted();
    let mut a = MeshNode::init("A");
    let mut b = MeshNode::init("B");
    {
        let store = b.store();
        let key = b.key();
        for i in 0..n {
            post_note(
                &store,
                &key,
                &text(i),
                Sharing::Shared(Audience::Friends),
                NoteSource::Cli,
                now_ms(),
            )
            .unwrap();
        }
    }
    b.befriend(&a, false, &[]);
    b.start_server(0);
    a.befriend(&b, true, &[]);
    let start = Instant::now();
    a.start_phone();
    let mut peak_a = 0;
    let mut peak_b = 0;
    loop {
        peak_a = peak_a.max(a.peak_rss_bytes().unwrap_or(0));
        peak_b = peak_b.max(b.peak_rss_bytes().unwrap_or(0));
        if a.shared_item_count() as usize >= n {
            break;
        }
        assert!(
            start.elapsed() < CATCH_UP_DEADLINE,
            "A holds {} of {n} items after {:?}; A's log:\n{}",
            a.shared_item_count(),
            start.elapsed(),
            a.stderr()
        );
        std::thread::sleep(POLL_INTERVAL * 10);
    }
    let took = start.elapsed();
    a.wait_logged(&["catch-up finished", "Responder", &b.peer_id]);
    peak_a = peak_a.max(a.peak_rss_bytes().unwrap_or(0));
    peak_b = peak_b.max(b.peak_rss_bytes().unwrap_or(0));
    let mb = (n * NOTE_BYTES) as f64 / 1e6;
    println!(
        "catch-up of {n} notes ({mb:.0} MB) to a phone: {:.1} s; peak RSS phone {} MB, server {} MB",
        took.as_secs_f64(),
        peak_a / (1024 * 1024),
        peak_b / (1024 * 1024)
    );

    // One session, finished, none aborted.
    let log = a.stderr();
    let finished: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("catch-up finished") && l.contains("Responder"))
        .collect();
    assert_eq!(finished.len(), 1, "sessions served: {finished:?}");
    assert!(
        finished[0].contains(&format!("items={n}")),
        "{}",
        finished[0]
    );
    assert!(!log.contains("catch-up aborted"), "{log}");

    // Every item once.
    let notes = a.notes_from(&b);
    assert_eq!(notes.len(), n);
    let texts: HashSet<&str> = notes.iter().map(|n| n.row.text.as_str()).collect();
    assert_eq!(texts.len(), n, "a note arrived twice");
    assert_eq!(a.shared_item_count() as usize, n);
    assert!(
        peak_a < MAX_PHONE_RSS,
        "phone peak RSS {} MB",
        peak_a / (1024 * 1024)
    );
    for node in [&mut a, &mut b] {
        let exit = node.interrupt();
        assert!(exit.status.success(), "{}: {}", node.name, exit.stderr);
    }
    a.store().check_integrity().unwrap();
}

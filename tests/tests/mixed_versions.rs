//! Mixed versions (issue 47 §3): the `porfiry` of an earlier commit beside
//! this build's, over real sockets on loopback. The old binary (commit
//! 0f8c4f7, the last before the `devices` audience and its item kinds
//! `mind_record` and `device_link`) is built and cached by `cargo xtask
//! setup --for test`; `cargo xtask test` names it in `PORFIRY_OLD_BINARY`.
//! Without it the test prints why and passes without running.
//!
//! ```text
//!   O (old) ◄── friends ──► N (new) ◄══ devices ══► D (new)
//! ```
//!
//! Checked: notes, a stagnation strategy (its mechanism too) and club items
//! (club changes, notes by the founder and by a member) travel both ways;
//! N holds the newer kinds (its own memory versions, D's, their device
//! link) and none of them reaches O: routing keeps a `devices` item among
//! the person's devices, so O never has to read one. O's sessions with N
//! go on all the same: a note after them arrives, and so does one N posts
//! while O is stopped, by the catch-up after O's restart, with N's index
//! full of items O does not know. Neither node refuses anything as
//! invalid; every note O held before is still there and its file is whole.
//!
//! O's database is read with plain SQL or its own CLI, never this build's
//! `Store`, which would migrate it to a schema the old binary refuses.

use porfiry_protocol::ItemKind;
use porfiry_storage::{DB_FILE_NAME, ListQuery, StagnationStrategy};
use porfiry_tests::mesh_node::{MeshNode, wait_for};
use porfiry_tests::old_binary::{OLD_BINARY_ENV, old_binary};
use serde_json::Value;

/// What the old node logs for an envelope it could not read.
const INVALID_LOG: &str = "rejected an invalid item";

/// A plain SQLite connection to `node`'s file (the only way this test
/// reads or writes the old node's rows).
fn sqlite(node: &MeshNode) -> rusqlite::Connection {
    rusqlite::Connection::open(node.dir().join(DB_FILE_NAME)).expect("the database opens")
}

/// The first column of every row `sql` returns on `node`'s file.
fn texts(node: &MeshNode, sql: &str, params: impl rusqlite::Params) -> Vec<String> {
    let conn = sqlite(node);
    let mut stmt = conn.prepare(sql).expect("the query prepares");
    stmt.query_map(params, |r| r.get(0))
        .expect("the query runs")
        .collect::<Result<_, _>>()
        .expect("text rows")
}

/// Every note `node`'s own CLI lists (`notes list --json`): its author
/// (`None` for its own) and text.
fn listed_notes(node: &MeshNode) -> Vec<(Option<String>, String)> {
    let out = node.cli_ok(&["notes", "list", "--json"]);
    let list: Value = serde_json::from_str(&out).expect("notes list --json is JSON");
    list.as_array()
        .expect("a JSON array")
        .iter()
        .map(|n| {
            (
                n["origin_author"].as_str().map(str::to_owned),
                n["text"].as_str().expect("a note has text").to_owned(),
            )
        })
        .collect()
}

/// Whether `node`'s CLI lists a note with `text` from `author`.
fn lists_note(node: &MeshNode, author: &MeshNode, text: &str) -> bool {
    listed_notes(node)
        .iter()
        .any(|(a, t)| a.as_deref() == Some(author.peer_id.as_str()) && t == text)
}

/// The members of `club` as `node`'s CLI lists them.
fn club_members(node: &MeshNode, club: &str) -> Vec<String> {
    let out = node.cli(&["club", "members", club, "--json"]);
    if !out.status.success() {
        return Vec::new(); // not known there yet
    }
    let list: Value = serde_json::from_slice(&out.stdout).expect("club members --json is JSON");
    let mut peers: Vec<String> = list
        .as_array()
        .expect("a JSON array")
        .iter()
        .filter_map(|m| m["peer"].as_str().map(str::to_owned))
        .collect();
    peers.sort();
    peers
}

fn now_ms() -> u64 {
    porfiry_mesh::clock::now_ms()
}

#[test]
fn an_old_node_and_a_new_one_replicate_what_both_know_and_the_old_loses_nothing() {
    let Some(old) = old_binary() else {
        return;
    };
    let mut o = MeshNode::init_with_binary("O", &old);
    let mut n = MeshNode::init("N");
    let mut d = MeshNode::init("D");
    // `porfiry 0.1.0 (commit …)`: two versions, or the test proves nothing.
    let (old_version, new_version) = (o.cli_ok(&["--version"]), n.cli_ok(&["--version"]));
    println!("old: {}new: {}", old_version, new_version);
    assert_ne!(
        old_version, new_version,
        "{OLD_BINARY_ENV} names this build"
    );

    // O's strategy, written into its file before it starts (the old
    // daemon publishes rows marked shareable when it starts).
    let now = now_ms();
    sqlite(&o)
        .execute(
            "INSERT INTO stagnation_strategies
                 (name, class, description, steps, cost, tags, shareable, created, updated)
             VALUES ('old walk', 'context_switch', 'walk away for a while',
                     '[\"stand up\"]', 2, '[\"mechanism:flashback\"]', 1, ?1, ?1)",
            [now as i64],
        )
        .expect("the old node's strategy is written");

    n.befriend(&o, false, &[]);
    n.start_server_recording_addresses();
    o.befriend(&n, true, &[]);
    o.start_server(0);
    n.wait_logged(&["friend connected", &o.peer_id]);
    o.wait_logged(&["friend connected", &n.peer_id]);

    notes_both_ways(&o, &n);
    strategies_both_ways(&o, &n);
    clubs_both_ways(&o, &n);

    let notes_before = listed_notes(&o);
    let items_before = texts(&o, "SELECT count(*) || '' FROM items", []);
    devices_items_stay_among_devices(&o, &mut n, &mut d);
    catch_up_after_a_restart(&mut o, &n);

    // Nothing O knew is lost; its file is whole; nobody refused anything.
    let notes_after = listed_notes(&o);
    for note in &notes_before {
        assert!(notes_after.contains(note), "O lost {note:?}");
    }
    let items_after = texts(&o, "SELECT count(*) || '' FROM items", []);
    assert!(
        items_after[0].parse::<u64>().unwrap() >= items_before[0].parse::<u64>().unwrap(),
        "O's items: {items_before:?} before, {items_after:?} after"
    );
    assert_eq!(
        texts(&o, "PRAGMA integrity_check", []),
        ["ok"],
        "O's file is whole"
    );
    for node in [&o, &n, &d] {
        assert_eq!(
            node.logged_count(&[INVALID_LOG]),
            0,
            "{} refused an item: {}",
            node.name,
            node.stderr()
        );
    }
    for node in [&mut o, &mut n, &mut d] {
        node.interrupt().assert_clean(&node.name);
    }
}

/// A note written on each node reaches the other.
fn notes_both_ways(o: &MeshNode, n: &MeshNode) {
    o.post("friends", "O1: from the old node");
    n.post("friends", "N1: from the new node");
    wait_for("O's note on N", || n.has_note(o, "O1: from the old node"));
    wait_for("N's note on O", || {
        lists_note(o, n, "N1: from the new node")
    });
}

/// O's strategy (written before it started) reaches N, and one N's file
/// gets while it runs reaches O, each with its mechanism.
fn strategies_both_ways(o: &MeshNode, n: &MeshNode) {
    n.store()
        .add(
            &StagnationStrategy {
                name: "new walk".into(),
                class: "context_switch".into(),
                description: "look at it from a friend's side".into(),
                steps: vec!["ask a friend".into()],
                cost: 1,
                tags: vec!["mechanism:ask_friends".into()],
                shareable: true,
                ..Default::default()
            },
            now_ms(),
        )
        .expect("the new node's strategy is written");
    wait_for("N's strategy on O", || {
        !texts(
            o,
            "SELECT name FROM stagnation_strategies WHERE origin_author = ?1",
            [&n.peer_id],
        )
        .is_empty()
    });
    assert_eq!(
        texts(
            o,
            "SELECT name || ' ' || tags FROM stagnation_strategies WHERE origin_author = ?1",
            [&n.peer_id],
        ),
        ["new walk [\"mechanism:ask_friends\"]"]
    );
    let from_o = |node: &MeshNode| -> Vec<StagnationStrategy> {
        node.store()
            .list::<StagnationStrategy>(&ListQuery::default())
            .unwrap()
            .into_iter()
            .map(|s| s.row)
            .filter(|s| s.origin_author.as_deref() == Some(o.peer_id.as_str()))
            .collect()
    };
    wait_for("O's strategy on N", || !from_o(n).is_empty());
    let got = from_o(n);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].name, "old walk");
    assert_eq!(got[0].steps, ["stand up"]);
    assert_eq!(got[0].tags, ["mechanism:flashback"]);
}

/// Each node founds a club and adds the other; the club changes reach the
/// member, and a club note by the founder and one by the member travel
/// each way.
fn clubs_both_ways(o: &MeshNode, n: &MeshNode) {
    o.cli_ok(&["club", "create", "oldclub"]);
    o.cli_ok(&["club", "add", "oldclub", &n.peer_id]);
    n.cli_ok(&["club", "create", "newclub"]);
    n.cli_ok(&["club", "add", "newclub", &o.peer_id]);
    let old_club = format!("oldclub@{}", o.peer_id);
    let new_club = format!("newclub@{}", n.peer_id);
    let mut both = vec![o.peer_id.clone(), n.peer_id.clone()];
    both.sort();
    wait_for("N to know O's club", || club_members(n, &old_club) == both);
    wait_for("O to know N's club", || club_members(o, &new_club) == both);

    o.post("club:oldclub", "OC: the old founder to its club");
    n.post("club:newclub", "NC: the new founder to its club");
    o.post(
        &format!("club:{new_club}"),
        "OM: the old member to N's club",
    );
    n.post(
        &format!("club:{old_club}"),
        "NM: the new member to O's club",
    );
    wait_for("O's club notes on N", || {
        n.has_note(o, "OC: the old founder to its club")
            && n.has_note(o, "OM: the old member to N's club")
    });
    wait_for("N's club notes on O", || {
        lists_note(o, n, "NC: the new founder to its club")
            && lists_note(o, n, "NM: the new member to O's club")
    });
}

/// Rows of `kind` in `node`'s `items` table, by plain SQL (either version).
fn kind_count(node: &MeshNode, kind: ItemKind) -> u64 {
    texts(
        node,
        "SELECT count(*) || '' FROM items WHERE kind = ?1",
        [kind.as_str()],
    )[0]
    .parse()
    .expect("a count")
}

/// D becomes N's device; memory written on each reaches the other, so N
/// holds `mind_record` and `device_link` items, its own and D's. None
/// reaches O, and a note N posts after them does.
fn devices_items_stay_among_devices(o: &MeshNode, n: &mut MeshNode, d: &mut MeshNode) {
    let out = n.cli_ok(&["devices", "link", "--valid-for", "1h"]);
    let code = out.lines().last().unwrap_or_default().trim().to_owned();
    assert!(code.starts_with("porfiry:"), "{out}");
    let joined = d.cli_ok(&["devices", "join", &code]);
    assert!(joined.contains("linked"), "{joined}");
    n.wait_logged(&["device linked", &d.peer_id]);
    d.start_phone();
    n.wait_logged(&["friend connected", &d.peer_id]);

    let diary = |node: &MeshNode| {
        texts(
            node,
            "SELECT text FROM diary_entries
             WHERE text IN ('climbed a hill', 'went to the sea') ORDER BY text",
            [],
        )
    };
    sqlite(d)
        .execute_batch(
            "INSERT INTO diary_entries (text, created, updated) VALUES ('went to the sea', 1, 1)",
        )
        .expect("D's diary entry");
    sqlite(n)
        .execute_batch(
            "INSERT INTO diary_entries (text, created, updated) VALUES ('climbed a hill', 1, 1)",
        )
        .expect("N's diary entry");
    wait_for("the diary entries on both devices", || {
        diary(n) == ["climbed a hill", "went to the sea"]
            && diary(d) == ["climbed a hill", "went to the sea"]
    });
    assert!(kind_count(n, ItemKind::MindRecord) >= 2);
    assert!(kind_count(n, ItemKind::DeviceLink) >= 1);

    // Posted after N held them, so after anything N would send O of them.
    n.post("friends", "N2: after the devices items");
    wait_for("N's later note on O", || {
        lists_note(o, n, "N2: after the devices items")
    });
    assert_eq!(kind_count(o, ItemKind::MindRecord), 0);
    assert_eq!(kind_count(o, ItemKind::DeviceLink), 0);
    assert!(diary(o).is_empty(), "{:?}", diary(o));
}

/// O stops; N posts; O starts again and catches up with N, whose index
/// holds the devices items: N's note arrives, and O's new one reaches N.
fn catch_up_after_a_restart(o: &mut MeshNode, n: &MeshNode) {
    let exit = o.interrupt();
    assert!(exit.status.success(), "O: {}", exit.stderr);
    n.post("friends", "N3: while O was stopped");
    let connected = n.logged_count(&["friend connected", &o.peer_id]);
    o.start_server(0);
    wait_for("O to connect again", || {
        n.logged_count(&["friend connected", &o.peer_id]) > connected
    });
    wait_for("N's note by catch-up on O", || {
        lists_note(o, n, "N3: while O was stopped")
    });
    o.post("friends", "O2: after the restart");
    wait_for("O's later note on N", || {
        n.has_note(o, "O2: after the restart")
    });
}

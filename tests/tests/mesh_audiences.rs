//! End to end over real `porfiry run` processes on loopback: who receives a
//! note is decided by its audience, exactly.
//!
//! Topology (arrows: who dials whom; A and C are not friends):
//!
//! ```text
//!   E (server) ◄── A (phone) ──► B (server) ◄── C (server)
//!                    A tags B with group "family"
//! ```
//!
//! Every wait is on an observable condition (a log line, a row in a SQLite
//! file); negative checks are made once a public note posted after the
//! others has arrived everywhere it should.

use porfiry_storage::{
    ListQuery, LlmConfig, LlmEntry, Sharing, StagnationStrategy, ThinkingMethod,
};
use porfiry_tests::mesh_node::{MeshNode, shared_items, wait_for};

#[test]
fn each_audience_reaches_exactly_its_nodes() {
    let mut a = MeshNode::init("A");
    let mut b = MeshNode::init("B");
    let mut c = MeshNode::init("C");
    let mut e = MeshNode::init("E");
    b.befriend(&a, false, &[]);
    b.befriend(&c, false, &[]);
    b.start_server(0);
    e.befriend(&a, false, &[]);
    e.start_server(0);
    c.befriend(&b, true, &[]);
    c.start_server(0);
    a.befriend(&b, true, &["family"]);
    a.befriend(&e, true, &[]);
    a.start_phone();
    b.wait_logged(&["friend connected", &a.peer_id]);
    b.wait_logged(&["friend connected", &c.peer_id]);
    e.wait_logged(&["friend connected", &a.peer_id]);

    // Posted while every daemon runs.
    let public = a.post("public", "P: hello everyone #mesh");
    let friends = a.post("friends", "F: for my friends");
    let group = a.post("group:family", "G: family only");
    let private = a.post("private", "X: never leaves A");
    assert!(private.is_empty(), "a private note has no item");
    let sentinel = a.post("public", "S: posted last");

    wait_for("B to get P, F, G and S", || {
        [
            "P: hello everyone #mesh",
            "F: for my friends",
            "G: family only",
            "S: posted last",
        ]
        .iter()
        .all(|t| b.has_note(&a, t))
    });
    wait_for("E to get P, F and S", || {
        [
            "P: hello everyone #mesh",
            "F: for my friends",
            "S: posted last",
        ]
        .iter()
        .all(|t| e.has_note(&a, t))
    });
    wait_for("C to get P and S through B", || {
        c.has_note(&a, "P: hello everyone #mesh") && c.has_note(&a, "S: posted last")
    });

    let texts = |n: &MeshNode| -> Vec<String> {
        let mut t: Vec<String> = n.notes_from(&a).into_iter().map(|n| n.row.text).collect();
        t.sort();
        t
    };
    assert_eq!(texts(&b).len(), 4, "B: {:?}", texts(&b));
    assert_eq!(
        texts(&e),
        [
            "F: for my friends",
            "P: hello everyone #mesh",
            "S: posted last"
        ],
        "E is a friend outside the group"
    );
    assert_eq!(
        texts(&c),
        ["P: hello everyone #mesh", "S: posted last"],
        "C is a friend of a friend"
    );
    for n in [&b, &c, &e] {
        let store = n.store();
        assert_eq!(
            shared_items(&store) as usize,
            texts(n).len(),
            "{}: one item per note",
            n.name
        );
        assert!(
            !texts(n).iter().any(|t| t.starts_with("X:")),
            "{} got the private note",
            n.name
        );
        store.check_integrity().unwrap();
    }

    // A holds four items (the private note is a row only) and its notes
    // point at them.
    let store = a.store();
    assert_eq!(shared_items(&store), 4);
    let mine = store.notes_recent(10).unwrap();
    let x = mine.iter().find(|n| n.row.text.starts_with("X:")).unwrap();
    assert_eq!(x.row.audience, Sharing::Private);
    assert_eq!(x.row.item_id, None);

    // Merged notes keep their origin and the author's fields; the hop count
    // shrinks by one per link (A's default 4 → B 3 → C 2).
    let p_on_c = c
        .notes_from(&a)
        .into_iter()
        .find(|n| n.row.text.starts_with("P:"))
        .unwrap();
    assert_eq!(
        p_on_c.row.origin_author.as_deref(),
        Some(a.peer_id.as_str())
    );
    assert_eq!(p_on_c.row.origin_item_id.unwrap().to_string(), public);
    assert_eq!(p_on_c.row.hashtags, ["mesh"]);
    assert_eq!(p_on_c.row.audience.to_string(), "public");
    let rec = c
        .store()
        .get_item(&public.parse().unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(
        rec.record.received_from.as_deref(),
        Some(b.peer_id.as_str())
    );
    assert_eq!(rec.record.hops_left, 2);
    let rec = b
        .store()
        .get_item(&group.parse().unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(
        (rec.record.hops_left, rec.record.received_from.as_deref()),
        (3, Some(a.peer_id.as_str()))
    );
    assert!(
        e.store()
            .get_item(&friends.parse().unwrap())
            .unwrap()
            .is_some()
    );
    assert!(
        c.store()
            .get_item(&sentinel.parse().unwrap())
            .unwrap()
            .is_some()
    );

    // `notes list` shows the origin, as text and as JSON.
    let text = c.cli_ok(&["notes", "list"]);
    assert!(
        text.contains(&format!("from {}: P: hello everyone", a.peer_id)),
        "{text}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&c.cli_ok(&["notes", "list", "--json"])).unwrap();
    let arr = json.as_array().unwrap();
    assert_eq!(arr.len(), 2);
    assert!(arr.iter().all(|n| n["origin_author"] == a.peer_id.as_str()));
    assert!(arr.iter().any(|n| n["origin_item_id"] == public.as_str()));

    // A clean stop of everyone.
    for n in [&mut a, &mut b, &mut c, &mut e] {
        let exit = n.terminate();
        assert!(exit.status.success(), "{}: {}", n.name, exit.stderr);
    }
}

#[test]
fn a_stranger_is_refused_and_changes_nothing() {
    let mut b = MeshNode::init("B");
    let mut d = MeshNode::init("D");
    b.start_server(0);
    let before_items = b.shared_item_count();
    let before_notes = b.store().notes_recent(100).unwrap();

    // D calls B its friend; B does not know D.
    d.befriend(&b, true, &[]);
    d.post("public", "D: let me in");
    d.start_phone();
    b.wait_logged(&[
        "refused a connection from a peer that is not a friend",
        &d.peer_id,
    ]);

    assert_eq!(b.shared_item_count(), before_items);
    assert_eq!(b.store().notes_recent(100).unwrap(), before_notes);
    assert!(b.notes_from(&d).is_empty());
    assert!(!b.logged(&["friend connected", &d.peer_id]));
    assert!(b.is_running());
    b.store().check_integrity().unwrap();
}

#[test]
fn shareable_rows_travel_and_the_rest_stay_home() {
    let mut x = MeshNode::init("X");
    let mut y = MeshNode::init("Y");
    x.befriend(&y, false, &[]);
    x.start_server(0);
    y.befriend(&x, true, &[]);
    y.start_phone();
    x.wait_logged(&["friend connected", &y.peer_id]);

    // Written into X's file by another process while X runs: the daemon's
    // change detection publishes what is marked shareable.
    let now = porfiry_mesh::clock::now_ms();
    let store = x.store();
    let strategy = |name: &str, shareable| StagnationStrategy {
        name: name.into(),
        class: "context_switch".into(),
        description: "walk away for a while".into(),
        steps: vec!["stand up".into(), "look outside".into()],
        cost: 2,
        tags: vec!["local-tag".into()],
        shareable,
        ..Default::default()
    };
    store.add(&strategy("shared walk", true), now).unwrap();
    store.add(&strategy("secret walk", false), now).unwrap();
    store
        .add(
            &LlmEntry {
                name: "home".into(),
                endpoint: "http://192.0.2.1:8080/v1".into(),
                model: "qwen3".into(),
                config: LlmConfig {
                    api_key_env: Some("MY_SECRET_KEY_VAR".into()),
                    max_tokens: Some(512),
                    ..Default::default()
                },
                shareable: true,
                ..Default::default()
            },
            now,
        )
        .unwrap();
    // Added last: once it is on Y, everything before it would be too.
    store
        .add(
            &ThinkingMethod {
                name: "analogy".into(),
                description: "start from a similar solved problem".into(),
                shareable: true,
                ..Default::default()
            },
            now,
        )
        .unwrap();

    let ys = y.store();
    // Y holds its own seeded strategies and methods too; only X's count.
    let from_x = |author: &Option<String>| author.as_deref() == Some(x.peer_id.as_str());
    wait_for("Y to get the method and the LLM address", || {
        ys.list::<ThinkingMethod>(&ListQuery::default())
            .unwrap()
            .iter()
            .filter(|m| from_x(&m.row.origin_author))
            .count()
            == 1
            && ys.list::<LlmEntry>(&ListQuery::default()).unwrap().len() == 1
    });
    let strategies: Vec<_> = ys
        .list::<StagnationStrategy>(&ListQuery::default())
        .unwrap()
        .into_iter()
        .filter(|s| from_x(&s.row.origin_author))
        .collect();
    assert_eq!(strategies.len(), 1, "{strategies:?}");
    let s = &strategies[0].row;
    assert_eq!(s.name, "shared walk");
    assert_eq!(s.steps, ["stand up", "look outside"]);
    assert_eq!(s.origin_author.as_deref(), Some(x.peer_id.as_str()));
    assert!(s.tags.is_empty(), "local tags never travel");
    assert!(!s.shareable, "a merged row is not re-published by Y");

    let llm = &ys.list::<LlmEntry>(&ListQuery::default()).unwrap()[0].row;
    assert_eq!(llm.name, format!("home@{}", x.peer_id));
    assert_eq!(llm.endpoint, "http://192.0.2.1:8080/v1");
    assert_eq!(llm.config.max_tokens, Some(512));
    assert_eq!(
        llm.config.api_key_env, None,
        "the key's env var name stays home"
    );
    for rec in ys.item_records().unwrap() {
        let payload = ys.get_item(&rec.id).unwrap().unwrap().payload;
        let needle = b"MY_SECRET_KEY_VAR";
        assert!(!payload.windows(needle.len()).any(|w| w == needle));
    }

    // On X: the three shared rows point at their items; the secret one none.
    let xs = x.store();
    assert_eq!(shared_items(&xs), 3);
    for row in xs
        .list::<StagnationStrategy>(&ListQuery::default())
        .unwrap()
    {
        assert_eq!(
            row.row.item_id.is_some(),
            row.row.shareable,
            "{}",
            row.row.name
        );
    }
    assert_eq!(shared_items(&ys), 3);
}

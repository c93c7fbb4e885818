//! End to end over real `porfiry run` processes on loopback: a direct
//! message (`notes post --audience peer:ID`, what the core's
//! `messages_send` writes) reaches its one addressee and nobody else — not
//! by live push, not by catch-up, not through a friend both share.
//!
//! ```text
//!   A (server) ◄── B (server) ◄── C (server)
//!       ▲─────────────────────────┘
//!   every pair are friends; arrows: who dials whom
//! ```
//!
//! Negative checks are made once a public note posted after the messages
//! has arrived everywhere, and after C's catch-up sessions have finished.

use porfiry_storage::Sharing;
use porfiry_tests::api_client::call;
use porfiry_tests::mesh_node::{MeshNode, shared_items, wait_for};

/// The texts of the notes `n` merged from `author`, sorted.
fn texts(n: &MeshNode, author: &MeshNode) -> Vec<String> {
    let mut t: Vec<String> = n
        .notes_from(author)
        .into_iter()
        .map(|n| n.row.text)
        .collect();
    t.sort();
    t
}

#[test]
fn a_direct_message_reaches_its_addressee_only_also_after_catch_up() {
    let mut a = MeshNode::init("A");
    let mut b = MeshNode::init("B");
    let mut c = MeshNode::init("C");
    a.befriend(&b, false, &[]);
    a.befriend(&c, false, &[]);
    a.start_server(0);
    b.befriend(&a, true, &[]);
    b.befriend(&c, false, &[]);
    b.start_server(0);
    c.befriend(&a, true, &[]);
    c.befriend(&b, true, &[]);
    c.start_server(0);
    a.wait_logged(&["friend connected", &b.peer_id]);
    a.wait_logged(&["friend connected", &c.peer_id]);
    b.wait_logged(&["friend connected", &c.peer_id]);

    // Live: a message for B, then a public note that must reach everyone.
    let to_b = a.post(&format!("peer:{}", b.peer_id), "DM1: lunch, B?");
    assert!(!to_b.is_empty(), "a direct message is a signed item");
    a.post("public", "S1: public, after DM1");
    wait_for("B to get DM1 and S1", || {
        b.has_note(&a, "DM1: lunch, B?") && b.has_note(&a, "S1: public, after DM1")
    });
    wait_for("C to get S1", || c.has_note(&a, "S1: public, after DM1"));

    let dm1 = b
        .notes_from(&a)
        .into_iter()
        .find(|n| n.row.text.starts_with("DM1"))
        .unwrap();
    assert_eq!(dm1.row.audience.to_string(), format!("peer:{}", b.peer_id));
    assert_eq!(dm1.row.origin_item_id.unwrap().to_string(), to_b);
    let rec = b.store().get_item(&to_b.parse().unwrap()).unwrap().unwrap();
    assert_eq!(
        rec.record.received_from.as_deref(),
        Some(a.peer_id.as_str())
    );
    assert!(
        c.store()
            .get_item(&to_b.parse().unwrap())
            .unwrap()
            .is_none()
    );

    // C goes away; A writes to C and to B meanwhile.
    let exit = c.terminate();
    assert!(exit.status.success(), "C: {}", exit.stderr);
    let to_c = a.post(&format!("peer:{}", c.peer_id), "DM2: C, are you there?");
    a.post(&format!("peer:{}", b.peer_id), "DM3: B again");
    a.post("public", "S2: public, after DM2 and DM3");
    wait_for("B to get DM3 and S2", || {
        b.has_note(&a, "DM3: B again") && b.has_note(&a, "S2: public, after DM2 and DM3")
    });

    // C comes back: catch-up from A brings its message; B's catch-up toward
    // C (B holds both messages for B) brings it none of B's.
    c.start_server(0);
    c.wait_logged(&["catch-up finished", &a.peer_id]);
    c.wait_logged(&["catch-up finished", &b.peer_id]);
    wait_for("C to get DM2 and S2", || {
        c.has_note(&a, "DM2: C, are you there?") && c.has_note(&a, "S2: public, after DM2 and DM3")
    });

    assert_eq!(
        texts(&b, &a),
        [
            "DM1: lunch, B?",
            "DM3: B again",
            "S1: public, after DM1",
            "S2: public, after DM2 and DM3"
        ]
    );
    assert_eq!(
        texts(&c, &a),
        [
            "DM2: C, are you there?",
            "S1: public, after DM1",
            "S2: public, after DM2 and DM3"
        ]
    );
    assert!(
        b.store()
            .get_item(&to_c.parse().unwrap())
            .unwrap()
            .is_none()
    );
    for (n, held) in [(&b, 4), (&c, 3)] {
        let store = n.store();
        assert_eq!(shared_items(&store), held, "{}: items", n.name);
        store.check_integrity().unwrap();
    }
    assert!(texts(&a, &b).is_empty() && texts(&c, &b).is_empty());

    // The CLI refuses a message to a stranger or a malformed id, and
    // writes nothing.
    let stranger = MeshNode::init("D");
    let items = a.shared_item_count();
    let notes = a.store().notes_recent(100).unwrap().len();
    for (audience, why) in [
        (format!("peer:{}", stranger.peer_id), "not a friend"),
        // Not a peer id, and no friend is called bob.
        ("peer:bob".to_owned(), "no friend named \"bob\""),
        ("peer:b@d".to_owned(), "bad peer id"),
    ] {
        let out = a.cli(&["notes", "post", "--audience", &audience, "hello?"]);
        assert!(!out.status.success(), "{audience}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(why), "{audience}: {err}");
    }
    assert_eq!(a.shared_item_count(), items);
    assert_eq!(a.store().notes_recent(100).unwrap().len(), notes);
    let mine = a.store().notes_recent(100).unwrap();
    assert!(
        mine.iter().any(|n| n.row.audience
            == Sharing::Shared(porfiry_protocol::Audience::Peer(c.peer_id.clone())))
    );

    // The API takes the same audience and refuses a stranger the same way
    // (400, nothing written); a message it accepts reaches B.
    let addr = a.api_address();
    let token = a.api_token();
    let post = |audience: &str, text: &str| {
        let body = serde_json::json!({"text": text, "audience": audience}).to_string();
        call(addr, "POST", "/api/notes", Some(&token), &body)
    };
    let refused = post(&format!("peer:{}", stranger.peer_id), "hello?");
    assert_eq!(refused.status, 400, "{}", refused.body);
    assert!(refused.body.contains("not a friend"), "{}", refused.body);
    assert_eq!(a.shared_item_count(), items);
    let sent = post(&format!("peer:{}", b.peer_id), "DM4: through the API");
    assert_eq!(sent.status, 201, "{}", sent.body);
    wait_for("B to get DM4", || b.has_note(&a, "DM4: through the API"));

    for n in [&mut a, &mut b, &mut c] {
        let exit = n.terminate();
        assert!(exit.status.success(), "{}: {}", n.name, exit.stderr);
    }
}

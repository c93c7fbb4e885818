//! End to end: quotas (issue 46 §2). B is a real `porfiry run` with small
//! budgets. T, a friend driven in-process by the node's own libp2p driver,
//! floods B with valid signed public notes by S, a stranger two hops away,
//! and with notes of its own; G, another real node, keeps posting. B keeps
//! exactly its budget of S's flood, refuses the rest at the edge (not
//! stored, not relayed to G), loses nothing of T's within its budget nor of
//! G's, and `porfiry status --json` names S with the items refused.

use porfiry_protocol::{NodeKey, VerifiedItem};
use porfiry_tests::flood::{InProcessFriend, items_frame, public_note};
use porfiry_tests::mesh_node::{MeshNode, wait_for};

/// B's budgets: small, so the test floods past them with a few hundred notes.
const STRANGER_ITEMS: usize = 40;
const FRIEND_ITEMS: usize = 300;
/// What S floods and what T writes itself.
const FLOOD: usize = 600;
const OWN: usize = 360;
/// Notes per `Items` frame T sends.
const PER_FRAME: usize = 60;

fn held(node: &MeshNode, items: &[VerifiedItem]) -> usize {
    let store = node.store();
    items
        .iter()
        .filter(|x| store.has_item(&x.id()).unwrap())
        .count()
}

fn refused_of(node: &MeshNode, author: &str) -> Option<(u64, u64)> {
    let status: serde_json::Value =
        serde_json::from_str(&node.cli_ok(&["status", "--json"])).expect("status json");
    status["refused"]
        .as_array()
        .expect("refused is a list")
        .iter()
        .find(|r| r["author"] == author)
        .map(|r| (r["items"].as_u64().unwrap(), r["bytes"].as_u64().unwrap()))
}

#[test]
fn a_flood_from_a_stranger_and_a_friend_is_held_to_budget_and_nothing_else_is_lost() {
    let t_key = NodeKey::from_seed([43; 32]);
    let s_key = NodeKey::from_seed([44; 32]);
    let t_peer = t_key.peer_id();
    let s_peer = s_key.peer_id().to_string();

    let mut b = MeshNode::init("B");
    let mut g = MeshNode::init("G");
    b.cli_ok(&["friends", "add", &t_peer.to_string()]);
    b.start_server_with(
        0,
        &[
            "--quota-stranger-items",
            &STRANGER_ITEMS.to_string(),
            "--quota-friend-items",
            &FRIEND_ITEMS.to_string(),
        ],
    );
    g.befriend(&b, true, &[]);
    b.befriend(&g, false, &[]);
    g.start_server(0);
    b.wait_logged(&["friend connected", &g.peer_id]);

    let t = InProcessFriend::connect(&t_key, &b);

    let flood: Vec<VerifiedItem> = (0..FLOOD)
        .map(|i| public_note(&s_key, i, "flood"))
        .collect();
    let own: Vec<VerifiedItem> = (0..OWN).map(|i| public_note(&t_key, i, "mine")).collect();
    let mut g_texts = Vec::new();
    let mut own_frames = own.chunks(PER_FRAME);
    for (n, f) in flood.chunks(PER_FRAME).enumerate() {
        t.send(items_frame(f));
        if let Some(o) = own_frames.next() {
            t.send(items_frame(o));
        }
        // G goes on talking through the flood.
        let text = format!("g during the flood {n}");
        g.post("public", &text);
        g_texts.push(text);
    }

    let total_refused = (FLOOD - STRANGER_ITEMS) as u64;
    wait_for("B to count every refused item of S", || {
        refused_of(&b, &s_peer).is_some_and(|(items, _)| items == total_refused)
    });
    wait_for("B to take T's notes up to its budget", || {
        held(&b, &own) == FRIEND_ITEMS
    });
    wait_for("every note of G to reach B", || {
        g_texts.iter().all(|t| b.has_note(&g, t))
    });
    assert_eq!(
        held(&b, &flood),
        STRANGER_ITEMS,
        "exactly the stranger's budget"
    );
    let (items, bytes) = refused_of(&b, &s_peer).unwrap();
    assert_eq!(items, total_refused);
    let flood_bytes: usize = flood[STRANGER_ITEMS..]
        .iter()
        .map(|x| x.envelope_bytes().len())
        .sum();
    assert_eq!(bytes, flood_bytes as u64);
    wait_for("B to count T's refused notes", || {
        refused_of(&b, &t_peer.to_string())
            .is_some_and(|(items, _)| items == (OWN - FRIEND_ITEMS) as u64)
    });

    // What B refused never reached G through it; what it kept did.
    wait_for("G to hold what B relays of S", || {
        held(&g, &flood) == STRANGER_ITEMS
    });
    assert_eq!(held(&g, &flood[STRANGER_ITEMS..]), 0);

    assert!(b.is_running(), "{}", b.stderr());
    b.store().check_integrity().unwrap();
    let text = b.cli_ok(&["status"]);
    assert!(text.contains("refused (over quota): 2 authors"), "{text}");

    t.shutdown();
    assert!(b.terminate().status.success());
    assert!(g.terminate().status.success());
}

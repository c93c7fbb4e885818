//! End to end over real `porfiry run` processes on loopback: a club note
//! travels member to member and never to a non-member, and a removed
//! member gets nothing published after its removal.
//!
//! Topology (arrows: who dials whom; A–C, A–D and C–D are not friends):
//!
//! ```text
//!   A (phone, founder) ──► B (server) ◄── C (server)
//!                          ▲
//!                          └── D (server, a friend of B, not a member)
//! ```
//!
//! Every wait is on an observable condition (a row in a SQLite file);
//! negative checks are made once a public note posted after the club note
//! has reached the node that must not have it.

use porfiry_protocol::ClubRef;
use porfiry_tests::mesh_node::{MeshNode, wait_for};

fn is_member(node: &MeshNode, club: &ClubRef, who: &MeshNode) -> bool {
    node.store()
        .club_book()
        .expect("club book")
        .is_member_now(club, &who.peer_id)
}

#[test]
fn a_club_note_reaches_members_through_members_and_stops_at_removal() {
    let mut a = MeshNode::init("A");
    let mut b = MeshNode::init("B");
    let mut c = MeshNode::init("C");
    let mut d = MeshNode::init("D");
    b.befriend(&a, false, &[]);
    b.befriend(&c, false, &[]);
    b.befriend(&d, false, &[]);
    b.start_server(0);
    c.befriend(&b, true, &[]);
    c.start_server(0);
    d.befriend(&b, true, &[]);
    d.start_server(0);
    a.befriend(&b, true, &[]);

    // The founder's club: B and C are members, D is not.
    a.cli_ok(&["club", "create", "chess"]);
    a.cli_ok(&["club", "add", "chess", &b.peer_id]);
    a.cli_ok(&["club", "add", "chess", &c.peer_id]);
    let club: ClubRef = format!("chess@{}", a.peer_id).parse().unwrap();
    a.start_phone();
    b.wait_logged(&["friend connected", &a.peer_id]);
    b.wait_logged(&["friend connected", &c.peer_id]);
    b.wait_logged(&["friend connected", &d.peer_id]);
    wait_for("C to know B and itself are members", || {
        is_member(&c, &club, &b) && is_member(&c, &club, &c)
    });

    let first = "K1: for the chess club";
    a.post("club:chess", first);
    wait_for("C to get the club note through B", || c.has_note(&a, first));
    assert!(b.has_note(&a, first), "B relayed it, so it holds it");
    let sentinel = "S1: public, posted after the club note";
    a.post("public", sentinel);
    wait_for("D to get the public note", || d.has_note(&a, sentinel));
    assert!(
        !d.has_note(&a, first),
        "a non-member never gets a club note"
    );
    assert!(
        d.store().club_changes(None).unwrap().is_empty(),
        "nor a club change"
    );

    // The founder removes C: the next club note does not reach it.
    a.cli_ok(&["club", "remove", "chess", &c.peer_id]);
    wait_for("B to learn that C was removed", || {
        !is_member(&b, &club, &c)
    });
    let second = "K2: after C left the club";
    a.post("club:chess", second);
    let sentinel2 = "S2: public, posted after the second club note";
    a.post("public", sentinel2);
    wait_for("B to get the second club note", || b.has_note(&a, second));
    wait_for("C to get the public note after it", || {
        c.has_note(&a, sentinel2)
    });
    assert!(
        !c.has_note(&a, second),
        "a removed member gets no later item"
    );
    assert!(c.has_note(&a, first), "earlier items stay where they are");
    wait_for("D to get the second public note", || {
        d.has_note(&a, sentinel2)
    });
    assert!(!d.has_note(&a, second));

    for n in [&mut a, &mut b, &mut c, &mut d] {
        assert!(n.is_running(), "{} stopped: {}", n.name, n.stderr());
    }
}

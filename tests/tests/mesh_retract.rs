//! End to end: `porfiry notes retract` withdraws a shared note everywhere it
//! went — the relay and the friend of a friend delete it — and refuses ids
//! that are malformed, unknown or someone else's, changing nothing.

use porfiry_tests::mesh_node::{MeshNode, wait_for};

#[test]
fn a_retracted_note_disappears_from_every_node_it_reached() {
    let mut x = MeshNode::init("X");
    let mut y = MeshNode::init("Y");
    let mut z = MeshNode::init("Z");
    y.start_server(0);
    y.befriend(&x, false, &[]);
    y.befriend(&z, false, &[]);
    x.befriend(&y, true, &[]);
    z.befriend(&y, true, &[]);
    x.start_phone();
    z.start_phone();

    let gone = x.post("public", "a thought I take back");
    x.post("public", "a thought I keep");
    wait_for("Z to get both notes through Y", || {
        z.has_note(&x, "a thought I take back") && z.has_note(&x, "a thought I keep")
    });

    // Only the author may retract; bad and unknown ids are refused.
    for (node, id, says) in [
        (&y, gone.as_str(), "only its author"),
        (&x, "not-hex", "bad item id"),
        (&x, &"ab".repeat(32), "no item"),
    ] {
        let before = node.shared_item_count();
        let out = node.cli(&["notes", "retract", id]);
        assert!(!out.status.success(), "retract {id} must fail");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{err}");
        assert_eq!(node.shared_item_count(), before, "nothing changed");
    }

    assert!(
        x.cli_ok(&["notes", "list"])
            .contains("a thought I take back")
    );
    let out = x.cli_ok(&["notes", "retract", &gone]);
    assert!(out.contains("retracted item"), "{out}");
    let home = x.cli_ok(&["notes", "list"]);
    assert!(
        !home.contains("a thought I take back"),
        "gone at home at once: {home}"
    );
    assert!(home.contains("a thought I keep"), "{home}");
    wait_for("Y and Z to drop the retracted note", || {
        !y.has_note(&x, "a thought I take back") && !z.has_note(&x, "a thought I take back")
    });
    assert!(y.has_note(&x, "a thought I keep") && z.has_note(&x, "a thought I keep"));
    assert!(x.is_running() && y.is_running() && z.is_running());
}

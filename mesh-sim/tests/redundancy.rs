//! Issue 4's goal for our engine: on 20 nodes with a degree-6 friend graph,
//! every node gets every public item with at most 1.2 payload copies per
//! node per item. (The gossipsub side is a bench, not a test.)

use mesh_sim::redundancy::{Setup, ours, world};

#[test]
fn ours_stays_within_1_2_copies_per_node_per_item() {
    let setup = Setup {
        items: 40,
        ..Setup::issue4()
    };
    let w = world(&setup).expect("world");
    assert!((0..20).all(|i| w.links.degree(i) == 6));
    let f = ours(&setup, &w).expect("runs");
    assert_eq!(f.due, 40 * 19, "every node but the author is entitled");
    assert_eq!(f.deliveries, f.due);
    assert!(f.per_node_per_item >= 1.0);
    assert!(
        f.per_node_per_item <= 1.2,
        "{:.3} copies per node per item",
        f.per_node_per_item
    );
}

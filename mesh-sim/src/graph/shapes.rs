//! The network shapes a sweep compares beside the complete and the random
//! regular graph: a ring lattice, a Watts–Strogatz small world and a ring of
//! clusters, each drawn from the scenario's seeded graph stream.

use rand::Rng;

use super::{Graph, MAX_STUCK_DRAWS};
use crate::error::SimError;
use crate::limits::MAX_GRAPH_ATTEMPTS;

impl Graph {
    /// Each node friends with the `k / 2` nearest on either side.
    pub fn ring(n: usize, k: usize) -> Graph {
        let mut g = Graph::empty(n);
        for j in 1..=k / 2 {
            for i in 0..n {
                g.add(i, (i + j) % n);
            }
        }
        g
    }

    /// Watts–Strogatz: the ring of `k`, each edge (i, i + j) moved to
    /// (i, random) with chance `p`, redrawn until connected.
    pub fn small_world(n: usize, k: usize, p: f64, rng: &mut impl Rng) -> Result<Graph, SimError> {
        let p = if p.is_nan() { 0.0 } else { p.clamp(0.0, 1.0) };
        for _ in 0..MAX_GRAPH_ATTEMPTS {
            let mut g = Graph::ring(n, k);
            for j in 1..=k / 2 {
                for i in 0..n {
                    let b = (i + j) % n;
                    if !rng.gen_bool(p) || g.degree(i) + 1 >= n {
                        continue;
                    }
                    for _ in 0..MAX_STUCK_DRAWS {
                        let c = rng.gen_range(0..n);
                        if c != i && !g.has(i, c) {
                            g.remove(i, b);
                            g.add(i, c);
                            break;
                        }
                    }
                }
            }
            if g.is_connected() {
                return Ok(g);
            }
        }
        Err(SimError::GraphGeneration {
            what: format!("connected small world of degree {k}, rewire {p}, on {n} nodes"),
            attempts: MAX_GRAPH_ATTEMPTS,
        })
    }

    /// `count` clusters of consecutive nodes (node `v` in cluster
    /// `v · count / n`), complete inside, and `bridges` random edges between
    /// each cluster and the next, the last one's next being the first.
    pub fn clusters(
        n: usize,
        count: usize,
        bridges: usize,
        rng: &mut impl Rng,
    ) -> Result<Graph, SimError> {
        let fail = || SimError::GraphGeneration {
            what: format!("{count} clusters with {bridges} bridges on {n} nodes"),
            attempts: MAX_STUCK_DRAWS,
        };
        if count < 2 || count > n / 2 || bridges == 0 || bridges > n / count {
            return Err(fail());
        }
        let mut members = vec![Vec::new(); count];
        for v in 0..n {
            members[v * count / n].push(v);
        }
        let mut g = Graph::empty(n);
        for m in &members {
            for (x, &a) in m.iter().enumerate() {
                for &b in &m[x + 1..] {
                    g.add(a, b);
                }
            }
        }
        // Two clusters need one set of bridges, not two.
        let pairs = if count == 2 { 1 } else { count };
        for c in 0..pairs {
            let (from, to) = (&members[c], &members[(c + 1) % count]);
            let mut added = 0;
            let mut stuck = 0;
            while added < bridges {
                let a = from[rng.gen_range(0..from.len())];
                let b = to[rng.gen_range(0..to.len())];
                if g.has(a, b) {
                    stuck += 1;
                    if stuck > MAX_STUCK_DRAWS {
                        return Err(fail());
                    }
                    continue;
                }
                g.add(a, b);
                added += 1;
                stuck = 0;
            }
        }
        Ok(g)
    }

    /// Removes the edge a–b if there.
    pub fn remove(&mut self, a: usize, b: usize) {
        self.adj[a].remove(&b);
        self.adj[b].remove(&a);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Stream, fork};

    #[test]
    fn a_ring_is_regular_and_connected() {
        let g = Graph::ring(10, 4);
        assert!((0..10).all(|v| g.degree(v) == 4));
        assert!(g.has(0, 9) && g.has(0, 8) && !g.has(0, 7));
        assert_eq!(g.edge_count(), 20);
        assert!(g.is_connected());
    }

    #[test]
    fn a_small_world_keeps_its_edges_and_rewires_some() {
        let mut rng = fork(1, Stream::Graph);
        let g = Graph::small_world(100, 6, 0.2, &mut rng).expect("draws");
        assert_eq!(g.edge_count(), 300, "rewiring keeps the edge count");
        assert!(g.is_connected());
        let ring = Graph::ring(100, 6);
        let moved = g.edges().filter(|&(a, b)| !ring.has(a, b)).count();
        assert!((30..=90).contains(&moved), "about 20 % moved: {moved}");
        let mut rng = fork(1, Stream::Graph);
        assert_eq!(
            Graph::small_world(100, 6, 0.0, &mut rng).expect("draws"),
            ring
        );
    }

    #[test]
    fn clusters_are_complete_inside_and_bridged_in_a_ring() {
        let mut rng = fork(1, Stream::Graph);
        let g = Graph::clusters(12, 3, 2, &mut rng).expect("draws");
        // Three complete clusters of four (6 edges each) and 2 × 3 bridges.
        assert_eq!(g.edge_count(), 18 + 6);
        assert!(g.has(0, 3) && g.has(4, 7) && g.has(8, 11));
        assert!(g.is_connected());
        let two = Graph::clusters(8, 2, 3, &mut rng).expect("draws");
        assert_eq!(two.edge_count(), 12 + 3);
        assert!(Graph::clusters(8, 5, 1, &mut rng).is_err());
        assert!(Graph::clusters(8, 2, 0, &mut rng).is_err());
    }
}

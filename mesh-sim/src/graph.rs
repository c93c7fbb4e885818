//! The friend graph: complete, explicit, a connected random regular graph
//! drawn from a seeded generator, or one of the shapes in `shapes` (ring,
//! small world, clusters), plus breadth-first distances for working out who
//! is entitled to an item.

use std::collections::{BTreeSet, VecDeque};

use rand::Rng;

use crate::error::SimError;
use crate::limits::MAX_GRAPH_ATTEMPTS;
use crate::scenario::GraphSpec;

mod shapes;

/// How many random pair draws may fail in a row before a random regular
/// draw restarts: only a nearly finished draw gets stuck this long.
const MAX_STUCK_DRAWS: usize = 200;

/// An undirected simple graph on nodes `0..n`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Graph {
    adj: Vec<BTreeSet<usize>>,
}

impl Graph {
    /// A graph with `n` nodes and no edges.
    pub fn empty(n: usize) -> Graph {
        Graph {
            adj: vec![BTreeSet::new(); n],
        }
    }

    /// The graph a scenario asks for.
    pub fn build(spec: &GraphSpec, n: usize, rng: &mut impl Rng) -> Result<Graph, SimError> {
        match spec {
            GraphSpec::Complete => {
                let mut g = Graph::empty(n);
                for a in 0..n {
                    for b in a + 1..n {
                        g.add(a, b);
                    }
                }
                Ok(g)
            }
            GraphSpec::Explicit { edges } => {
                let mut g = Graph::empty(n);
                for [a, b] in edges {
                    g.add(*a, *b);
                }
                Ok(g)
            }
            GraphSpec::RandomRegular { degree } => Graph::random_regular(n, *degree, rng),
            GraphSpec::Ring { degree } => Ok(Graph::ring(n, *degree)),
            GraphSpec::SmallWorld { degree, rewire } => {
                Graph::small_world(n, *degree, *rewire, rng)
            }
            GraphSpec::Clusters { count, bridges } => Graph::clusters(n, *count, *bridges, rng),
        }
    }

    /// A connected random `k`-regular graph: points are paired at random,
    /// refusing loops and double edges, restarting when stuck (the
    /// Steger–Wormald method, close to uniform for small `k`).
    pub fn random_regular(n: usize, k: usize, rng: &mut impl Rng) -> Result<Graph, SimError> {
        if k >= n || (n * k) % 2 == 1 {
            return Err(SimError::GraphGeneration {
                what: format!("{k}-regular graph on {n} nodes"),
                attempts: 0,
            });
        }
        'attempt: for _ in 0..MAX_GRAPH_ATTEMPTS {
            let mut g = Graph::empty(n);
            let mut points: Vec<usize> = (0..n).flat_map(|v| std::iter::repeat_n(v, k)).collect();
            while !points.is_empty() {
                let mut paired = false;
                for _ in 0..MAX_STUCK_DRAWS {
                    let i = rng.gen_range(0..points.len());
                    let j = rng.gen_range(0..points.len());
                    let (u, v) = (points[i], points[j]);
                    if i == j || u == v || g.has(u, v) {
                        continue;
                    }
                    g.add(u, v);
                    let (hi, lo) = if i > j { (i, j) } else { (j, i) };
                    points.swap_remove(hi);
                    points.swap_remove(lo);
                    paired = true;
                    break;
                }
                if !paired {
                    continue 'attempt;
                }
            }
            if g.is_connected() {
                return Ok(g);
            }
        }
        Err(SimError::GraphGeneration {
            what: format!("connected {k}-regular graph on {n} nodes"),
            attempts: MAX_GRAPH_ATTEMPTS,
        })
    }

    /// Adds the edge a–b (ignored for a loop).
    pub fn add(&mut self, a: usize, b: usize) {
        if a != b {
            self.adj[a].insert(b);
            self.adj[b].insert(a);
        }
    }

    /// True if a and b are friends.
    pub fn has(&self, a: usize, b: usize) -> bool {
        self.adj[a].contains(&b)
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.adj.len()
    }

    /// True for a graph without nodes.
    pub fn is_empty(&self) -> bool {
        self.adj.is_empty()
    }

    /// Friends of `a`, ascending.
    pub fn neighbours(&self, a: usize) -> impl Iterator<Item = usize> + '_ {
        self.adj[a].iter().copied()
    }

    /// Degree of `a`.
    pub fn degree(&self, a: usize) -> usize {
        self.adj[a].len()
    }

    /// Every edge once, as `(a, b)` with `a < b`, ascending.
    pub fn edges(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.adj
            .iter()
            .enumerate()
            .flat_map(|(a, ns)| ns.iter().filter(move |&&b| b > a).map(move |&b| (a, b)))
    }

    /// Number of edges.
    pub fn edge_count(&self) -> usize {
        self.adj.iter().map(BTreeSet::len).sum::<usize>() / 2
    }

    /// True if every node reaches every other.
    pub fn is_connected(&self) -> bool {
        self.is_empty() || self.within(0, usize::MAX).len() + 1 == self.len()
    }

    /// Nodes at most `hops` edges from `from`, `from` itself excluded.
    pub fn within(&self, from: usize, hops: usize) -> BTreeSet<usize> {
        let mut dist = vec![usize::MAX; self.len()];
        dist[from] = 0;
        let mut queue = VecDeque::from([from]);
        let mut out = BTreeSet::new();
        while let Some(x) = queue.pop_front() {
            if dist[x] >= hops {
                continue;
            }
            for y in self.neighbours(x) {
                if dist[y] == usize::MAX {
                    dist[y] = dist[x] + 1;
                    out.insert(y);
                    queue.push_back(y);
                }
            }
        }
        out
    }

    /// The subgraph keeping only the edges `keep` admits.
    pub fn filtered(&self, keep: impl Fn(usize, usize) -> bool) -> Graph {
        let mut g = Graph::empty(self.len());
        for (a, b) in self.edges() {
            if keep(a, b) {
                g.add(a, b);
            }
        }
        g
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Stream, fork};

    #[test]
    fn random_regular_is_regular_simple_and_connected() {
        let mut rng = fork(1, Stream::Graph);
        let g = Graph::random_regular(200, 6, &mut rng).expect("draws");
        assert!((0..200).all(|v| g.degree(v) == 6));
        assert!((0..200).all(|v| !g.has(v, v)));
        assert_eq!(g.edge_count(), 600);
        assert!(g.is_connected());
    }

    #[test]
    fn random_regular_refuses_impossible_shapes() {
        let mut rng = fork(1, Stream::Graph);
        assert!(matches!(
            Graph::random_regular(5, 3, &mut rng),
            Err(SimError::GraphGeneration { .. })
        ));
        assert!(Graph::random_regular(4, 4, &mut rng).is_err());
    }

    #[test]
    fn within_counts_hops() {
        let mut g = Graph::empty(5);
        for (a, b) in [(0, 1), (1, 2), (2, 3), (3, 4)] {
            g.add(a, b);
        }
        assert_eq!(g.within(0, 2), BTreeSet::from([1, 2]));
        assert_eq!(g.within(2, 1), BTreeSet::from([1, 3]));
        assert!(g.is_connected());
        let cut = g.filtered(|a, b| (a, b) != (1, 2));
        assert!(!cut.is_connected());
        assert_eq!(cut.within(0, 9), BTreeSet::from([1]));
    }
}

//! The run's randomness: one seed, one ChaCha20 generator per purpose and
//! per node, each on its own stream, so drawing more for one purpose (say,
//! longer churn) never shifts the draws of another (the friend graph).

use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

/// What a generator is for; each maps to a distinct ChaCha stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Node signing keys.
    Keys,
    /// The friend graph.
    Graph,
    /// Which nodes are phones.
    Phones,
    /// Random group members.
    Groups,
    /// Item authors, audiences and publish times.
    Items,
    /// Partition sides and crash times.
    Faults,
    /// Club members.
    Club,
    /// Node `i`'s link draws (latency, loss) for messages it sends.
    Node(usize),
    /// Node `i`'s churn spells.
    Churn(usize),
}

/// Streams below this are the fixed purposes; nodes get the ones above, two
/// per node.
const NODE_STREAM_BASE: u64 = 1 << 16;

impl Stream {
    fn id(self) -> u64 {
        match self {
            Stream::Keys => 1,
            Stream::Graph => 2,
            Stream::Phones => 3,
            Stream::Groups => 4,
            Stream::Items => 5,
            Stream::Faults => 6,
            Stream::Club => 7,
            Stream::Node(i) => NODE_STREAM_BASE + 2 * i as u64,
            Stream::Churn(i) => NODE_STREAM_BASE + 2 * i as u64 + 1,
        }
    }
}

/// The generator for `stream` under `seed`.
pub fn fork(seed: u64, stream: Stream) -> ChaCha20Rng {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    rng.set_stream(stream.id());
    rng
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn streams_differ_and_repeat() {
        let a: u64 = fork(7, Stream::Node(0)).r#gen();
        let b: u64 = fork(7, Stream::Node(1)).r#gen();
        let c: u64 = fork(7, Stream::Churn(0)).r#gen();
        let again: u64 = fork(7, Stream::Node(0)).r#gen();
        let other_seed: u64 = fork(8, Stream::Node(0)).r#gen();
        assert_eq!(a, again);
        assert_ne!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, other_seed);
    }
}

//! The link model: one-way latency drawn from a distribution, a chance of
//! losing a message, and a bandwidth that queues messages behind each other.
//! A connection is a pair of FIFO pipes, so messages between two friends
//! arrive in the order sent, as on a stream transport.

use rand::Rng;
use rand_distr::{Distribution, LogNormal};

use crate::error::SimError;
use crate::scenario::{Latency, LinkSpec};

/// A class of links, ready to draw from.
#[derive(Debug, Clone)]
pub struct LinkModel {
    latency: LatencyDist,
    loss: f64,
    bandwidth_kbps: u64,
    reorder: bool,
}

#[derive(Debug, Clone)]
enum LatencyDist {
    Fixed(u64),
    Uniform(u64, u64),
    LogNormal(LogNormal<f64>),
}

impl LinkModel {
    /// The model a scenario's link spec describes.
    pub fn new(spec: &LinkSpec) -> Result<LinkModel, SimError> {
        let latency = match spec.latency {
            Latency::Fixed { ms } => LatencyDist::Fixed(ms),
            Latency::Uniform { min_ms, max_ms } => LatencyDist::Uniform(min_ms, max_ms),
            Latency::Lognormal { median_ms, sigma } => {
                LatencyDist::LogNormal(LogNormal::new(median_ms.ln(), sigma).map_err(|e| {
                    SimError::InvalidScenario {
                        field: "links.latency",
                        detail: e.to_string(),
                    }
                })?)
            }
        };
        Ok(LinkModel {
            latency,
            loss: spec.loss,
            bandwidth_kbps: spec.bandwidth_kbps,
            reorder: spec.reorder,
        })
    }

    /// Whether frames in flight may overtake each other (each travels on
    /// its own stream in the real driver).
    pub fn reorder(&self) -> bool {
        self.reorder
    }

    /// Draws whether one message is lost.
    pub fn lost(&self, rng: &mut impl Rng) -> bool {
        self.loss > 0.0 && rng.gen_bool(self.loss)
    }

    /// Draws one message's one-way latency in ms.
    pub fn latency_ms(&self, rng: &mut impl Rng) -> u64 {
        match &self.latency {
            LatencyDist::Fixed(ms) => *ms,
            LatencyDist::Uniform(lo, hi) => rng.gen_range(*lo..=*hi),
            LatencyDist::LogNormal(d) => d.sample(rng).round() as u64,
        }
    }

    /// Time to put `bytes` on the wire (0 when bandwidth is unlimited).
    pub fn transmit_ms(&self, bytes: usize) -> u64 {
        if self.bandwidth_kbps == 0 {
            return 0;
        }
        // kbit/s is bits per ms.
        (bytes as u64 * 8).div_ceil(self.bandwidth_kbps)
    }
}

/// One direction of a connection: when the sender is free to transmit
/// again, and when the last message arrives (nothing overtakes it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pipe {
    free_at: u64,
    last_arrival: u64,
}

impl Pipe {
    /// Queues a message sent at `now` that takes `transmit_ms` to send and
    /// `latency_ms` to cross; returns its arrival time.
    pub fn send(&mut self, now: u64, transmit_ms: u64, latency_ms: u64) -> u64 {
        let done = self.free_at.max(now) + transmit_ms;
        self.free_at = done;
        let arrival = (done + latency_ms).max(self.last_arrival);
        self.last_arrival = arrival;
        arrival
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Stream, fork};

    #[test]
    fn pipe_queues_behind_bandwidth_and_keeps_order() {
        let mut p = Pipe::default();
        assert_eq!(p.send(0, 10, 50), 60);
        assert_eq!(p.send(0, 10, 5), 60, "a faster draw does not overtake");
        assert_eq!(p.send(100, 1, 5), 106);
    }

    #[test]
    fn transmit_time_follows_bandwidth() {
        let spec = LinkSpec {
            bandwidth_kbps: 1_000,
            ..LinkSpec::default()
        };
        let m = LinkModel::new(&spec).expect("valid");
        assert_eq!(m.transmit_ms(125_000), 1_000);
        assert_eq!(m.transmit_ms(1), 1);
        assert_eq!(
            LinkModel::new(&LinkSpec::default())
                .expect("valid")
                .transmit_ms(9_999),
            0
        );
    }

    #[test]
    fn lognormal_has_the_asked_median_and_loss_its_rate() {
        let spec = LinkSpec {
            latency: Latency::Lognormal {
                median_ms: 40.0,
                sigma: 0.5,
            },
            loss: 0.1,
            bandwidth_kbps: 0,
            reorder: false,
        };
        let m = LinkModel::new(&spec).expect("valid");
        let mut rng = fork(3, Stream::Node(0));
        let mut draws: Vec<u64> = (0..10_001).map(|_| m.latency_ms(&mut rng)).collect();
        draws.sort_unstable();
        let median = draws[5_000];
        assert!((36..=44).contains(&median), "median {median}");
        let lost = (0..10_000).filter(|_| m.lost(&mut rng)).count();
        assert!((800..1_200).contains(&lost), "lost {lost}");
    }
}

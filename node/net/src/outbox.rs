//! Per-peer send window: how many frames are in flight to each peer and which
//! wait behind them.
//!
//! libp2p refuses streams past `MAX_CONCURRENT_STREAMS` per connection, so the
//! driver keeps at most `max_in_flight` unacknowledged frames per peer and
//! queues the rest, bounded in bytes: a frame that does not fit is handed
//! back (the driver then holds it and stops taking commands until the queue
//! drains, so nothing is dropped for being queued). A frame may carry a
//! tracking key, handed back when its request ends, so the driver can tell
//! the sender when a group of frames has drained. Pure bookkeeping: the
//! caller passes a `send` closure that starts a request and returns its id,
//! so a frame leaves the queue exactly when it is handed to libp2p.

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;

/// A frame did not fit in the peer's queue; it is handed back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueFull(pub Vec<u8>);

#[derive(Debug)]
struct PeerWindow<R> {
    in_flight: Vec<R>,
    queue: VecDeque<(Vec<u8>, Option<u64>)>,
    queued_bytes: usize,
}

impl<R> Default for PeerWindow<R> {
    fn default() -> Self {
        Self {
            in_flight: Vec::new(),
            queue: VecDeque::new(),
            queued_bytes: 0,
        }
    }
}

/// Send windows of all peers. `P` is the peer key, `R` the request id.
#[derive(Debug)]
pub struct Outbox<P, R> {
    max_in_flight: usize,
    max_queued_bytes: usize,
    peers: HashMap<P, PeerWindow<R>>,
    owner: HashMap<R, (P, Option<u64>)>,
}

impl<P, R> Outbox<P, R>
where
    P: Eq + Hash + Clone,
    R: Eq + Hash + Clone,
{
    /// An outbox allowing `max_in_flight` frames per peer and `max_queued_bytes` behind them.
    pub fn new(max_in_flight: usize, max_queued_bytes: usize) -> Self {
        Self {
            max_in_flight,
            max_queued_bytes,
            peers: HashMap::new(),
            owner: HashMap::new(),
        }
    }

    /// Sends `frame` now through `send` if the window allows, else queues it.
    #[cfg(test)]
    pub fn offer(
        &mut self,
        peer: &P,
        frame: Vec<u8>,
        send: impl FnOnce(Vec<u8>) -> R,
    ) -> Result<(), QueueFull> {
        self.offer_tracked(peer, frame, None, send)
    }

    /// Like [`Outbox::offer`], with a tracking key handed back by
    /// [`Outbox::finished_tracked`] or [`Outbox::drop_peer_tracked`].
    pub fn offer_tracked(
        &mut self,
        peer: &P,
        frame: Vec<u8>,
        track: Option<u64>,
        send: impl FnOnce(Vec<u8>) -> R,
    ) -> Result<(), QueueFull> {
        let window = self.peers.entry(peer.clone()).or_default();
        if window.in_flight.len() < self.max_in_flight {
            let id = send(frame);
            window.in_flight.push(id.clone());
            self.owner.insert(id, (peer.clone(), track));
            return Ok(());
        }
        if window.queued_bytes.saturating_add(frame.len()) > self.max_queued_bytes {
            return Err(QueueFull(frame));
        }
        window.queued_bytes += frame.len();
        window.queue.push_back((frame, track));
        Ok(())
    }

    /// Request `id` ended (acknowledged or failed). Returns its peer, if the id
    /// was ours; if it still held a slot in the peer's current window, the
    /// peer's next queued frame is handed to `send`.
    #[cfg(test)]
    pub fn finished(&mut self, id: &R, send: impl FnOnce(&P, Vec<u8>) -> R) -> Option<P> {
        self.finished_tracked(id, send).map(|(peer, _)| peer)
    }

    /// Like [`Outbox::finished`], also returning the frame's tracking key.
    pub fn finished_tracked(
        &mut self,
        id: &R,
        send: impl FnOnce(&P, Vec<u8>) -> R,
    ) -> Option<(P, Option<u64>)> {
        let (peer, track) = self.owner.remove(id)?;
        let Some(window) = self.peers.get_mut(&peer) else {
            return Some((peer, track));
        };
        let before = window.in_flight.len();
        window.in_flight.retain(|r| r != id);
        if window.in_flight.len() < before
            && let Some((frame, next_track)) = window.queue.pop_front()
        {
            window.queued_bytes -= frame.len();
            let next = send(&peer, frame);
            window.in_flight.push(next.clone());
            self.owner.insert(next, (peer.clone(), next_track));
        }
        if window.in_flight.is_empty() && window.queue.is_empty() {
            self.peers.remove(&peer);
        }
        Some((peer, track))
    }

    /// Forgets `peer`'s window (its last connection closed): returns the frames
    /// that were still queued, never sent. Its in-flight requests still end
    /// through [`Outbox::finished`] (libp2p fails them), but no longer hold a
    /// slot, so they cannot free one of a later connection's.
    #[cfg(test)]
    pub fn drop_peer(&mut self, peer: &P) -> Vec<Vec<u8>> {
        self.drop_peer_tracked(peer)
            .into_iter()
            .map(|(frame, _)| frame)
            .collect()
    }

    /// Like [`Outbox::drop_peer`], with each frame's tracking key.
    pub fn drop_peer_tracked(&mut self, peer: &P) -> Vec<(Vec<u8>, Option<u64>)> {
        match self.peers.remove(peer) {
            Some(window) => window.queue.into(),
            None => Vec::new(),
        }
    }

    /// Bytes queued for `peer` behind those in flight.
    #[cfg(test)]
    pub fn queued_bytes(&self, peer: &P) -> usize {
        self.peers.get(peer).map_or(0, |w| w.queued_bytes)
    }

    /// Frames in flight to `peer`.
    #[cfg(test)]
    pub fn in_flight(&self, peer: &P) -> usize {
        self.peers.get(peer).map_or(0, |w| w.in_flight.len())
    }

    /// Frames queued for `peer` behind those in flight.
    #[cfg(test)]
    pub fn queued(&self, peer: &P) -> usize {
        self.peers.get(peer).map_or(0, |w| w.queue.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Ids(u32, Vec<(u32, Vec<u8>)>);

    impl Ids {
        fn send(&mut self, frame: Vec<u8>) -> u32 {
            self.0 += 1;
            self.1.push((self.0, frame));
            self.0
        }
    }

    #[test]
    fn sends_up_to_the_window_then_queues() {
        let mut ids = Ids(0, Vec::new());
        let mut outbox = Outbox::new(2, 100);
        for f in [b"a", b"b", b"c"] {
            outbox.offer(&"p", f.to_vec(), |fr| ids.send(fr)).unwrap();
        }
        assert_eq!(ids.1, [(1, b"a".to_vec()), (2, b"b".to_vec())]);
        assert_eq!((outbox.in_flight(&"p"), outbox.queued(&"p")), (2, 1));
    }

    #[test]
    fn finishing_a_request_sends_the_next_in_order() {
        let mut ids = Ids(0, Vec::new());
        let mut outbox = Outbox::new(1, 100);
        for f in [b"a", b"b", b"c"] {
            outbox.offer(&"p", f.to_vec(), |fr| ids.send(fr)).unwrap();
        }
        assert_eq!(outbox.finished(&1, |_, fr| ids.send(fr)), Some("p"));
        assert_eq!(outbox.finished(&2, |_, fr| ids.send(fr)), Some("p"));
        let sent: Vec<&[u8]> = ids.1.iter().map(|(_, f)| f.as_slice()).collect();
        assert_eq!(sent, [b"a", b"b", b"c"]);
        assert_eq!(outbox.finished(&3, |_, fr| ids.send(fr)), Some("p"));
        assert_eq!((outbox.in_flight(&"p"), outbox.queued(&"p")), (0, 0));
    }

    #[test]
    fn queue_is_bounded_in_bytes() {
        let mut ids = Ids(0, Vec::new());
        let mut outbox = Outbox::new(1, 10);
        outbox.offer(&"p", vec![0; 50], |fr| ids.send(fr)).unwrap();
        outbox.offer(&"p", vec![1; 6], |fr| ids.send(fr)).unwrap();
        assert_eq!(
            outbox.offer(&"p", vec![2; 5], |fr| ids.send(fr)),
            Err(QueueFull(vec![2; 5]))
        );
        outbox.offer(&"p", vec![3; 4], |fr| ids.send(fr)).unwrap();
        assert_eq!(outbox.queued(&"p"), 2);
    }

    #[test]
    fn peers_have_separate_windows() {
        let mut ids = Ids(0, Vec::new());
        let mut outbox = Outbox::new(1, 0);
        outbox
            .offer(&"p", b"a".to_vec(), |fr| ids.send(fr))
            .unwrap();
        outbox
            .offer(&"q", b"b".to_vec(), |fr| ids.send(fr))
            .unwrap();
        assert!(
            outbox
                .offer(&"p", b"c".to_vec(), |fr| ids.send(fr))
                .is_err()
        );
        assert_eq!(ids.1.len(), 2);
    }

    #[test]
    fn dropping_a_peer_returns_queued_frames_and_ignores_late_results() {
        let mut ids = Ids(0, Vec::new());
        let mut outbox = Outbox::new(1, 100);
        outbox
            .offer(&"p", b"a".to_vec(), |fr| ids.send(fr))
            .unwrap();
        outbox
            .offer(&"p", b"b".to_vec(), |fr| ids.send(fr))
            .unwrap();
        assert_eq!(outbox.drop_peer(&"p"), [b"b".to_vec()]);
        // The peer reconnects and sends again; the old request's late failure
        // is still reported as the peer's, but must not free the new slot.
        outbox
            .offer(&"p", b"c".to_vec(), |fr| ids.send(fr))
            .unwrap();
        outbox
            .offer(&"p", b"d".to_vec(), |fr| ids.send(fr))
            .unwrap();
        assert_eq!(outbox.finished(&1, |_, fr| ids.send(fr)), Some("p"));
        assert_eq!((outbox.in_flight(&"p"), outbox.queued(&"p")), (1, 1));
        assert_eq!(
            outbox.finished(&1, |_, fr| ids.send(fr)),
            None,
            "an id ends once"
        );
        assert_eq!(
            outbox.finished(&99, |_, fr| ids.send(fr)),
            None,
            "unknown ids are ignored"
        );
        assert_eq!(outbox.drop_peer(&"zzz"), Vec::<Vec<u8>>::new());
    }

    #[test]
    fn tracking_keys_come_back_when_requests_end_or_the_peer_drops() {
        let mut ids = Ids(0, Vec::new());
        let mut outbox = Outbox::new(1, 100);
        for (f, k) in [(b"a", 7), (b"b", 8), (b"c", 9)] {
            outbox
                .offer_tracked(&"p", f.to_vec(), Some(k), |fr| ids.send(fr))
                .unwrap();
        }
        assert_eq!(outbox.queued_bytes(&"p"), 2);
        assert_eq!(
            outbox.finished_tracked(&1, |_, fr| ids.send(fr)),
            Some(("p", Some(7)))
        );
        assert_eq!(outbox.drop_peer_tracked(&"p"), [(b"c".to_vec(), Some(9))]);
        assert_eq!(
            outbox.finished_tracked(&2, |_, fr| ids.send(fr)),
            Some(("p", Some(8))),
            "a dropped peer's in-flight request still hands its key back"
        );
    }
}

//! Which friend to ask (pure): advertised offers ranked by reachability, recent
//! refusals and capacity, and the memory of recent `busy` / `not_permitted`
//! answers ([`Recent`]) that [`super::FriendLlm`] keeps.

use std::collections::HashMap;
use std::time::Duration;

use libp2p::PeerId;
use porfiry_skills::llm::FriendFailure;
use tokio::time::Instant;

/// How long a `not_permitted` answer sends a friend to the back of the line: the
/// friend must act to change it, and a few minutes keeps us from asking on every
/// call while still noticing soon after they allow us.
pub const NOT_PERMITTED_MEMORY: Duration = Duration::from_secs(300);

/// How long any other failure before the first token (unreachable, model down)
/// sends a friend to the back: long enough for a chat's next turn to go elsewhere.
pub const FAILURE_MEMORY: Duration = Duration::from_secs(30);

/// One friend's advertised model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offer {
    /// The friend.
    pub peer: PeerId,
    /// The model's name.
    pub model: String,
    /// Requests it serves at once (1 when not advertised).
    pub concurrency: u32,
}

/// Recent answers that make a friend a worse choice for a while.
#[derive(Debug, Default, Clone)]
pub struct Recent {
    until: HashMap<PeerId, (u8, Instant)>,
}

impl Recent {
    /// Remembers a failure of `peer` at `now`.
    pub fn note(&mut self, peer: PeerId, failure: &FriendFailure, now: Instant) {
        let (rank, wait) = match failure {
            FriendFailure::NotPermitted => (3, NOT_PERMITTED_MEMORY),
            FriendFailure::Busy { retry_after } => (1, *retry_after),
            _ => (2, FAILURE_MEMORY),
        };
        self.until.insert(peer, (rank, now + wait));
    }

    /// `peer` answered: forget its failures.
    pub fn served(&mut self, peer: &PeerId) {
        self.until.remove(peer);
    }

    /// How bad `peer` looks at `now`: 0 fine, 1 busy, 2 failed, 3 not permitted.
    pub fn penalty(&self, peer: &PeerId, now: Instant) -> u8 {
        match self.until.get(peer) {
            Some((rank, until)) if *until > now => *rank,
            _ => 0,
        }
    }

    /// `peers` in the order to try them: by penalty, else as given.
    pub fn order(&self, peers: &[PeerId], now: Instant) -> Vec<PeerId> {
        let mut out = peers.to_vec();
        out.sort_by_key(|p| self.penalty(p, now));
        out
    }
}

/// Which model to use and the friends to try, best first: offers of `model` (or,
/// when `None`, of the model of the best offer), reachable ones first, then
/// without recent failures, then more concurrency; ties keep the given order.
pub fn rank(
    offers: &[Offer],
    model: Option<&str>,
    reachable: impl Fn(&PeerId) -> bool,
    recent: &Recent,
    now: Instant,
) -> Option<(String, Vec<PeerId>)> {
    let mut ranked: Vec<&Offer> = offers
        .iter()
        .filter(|o| model.is_none_or(|m| o.model == m))
        .collect();
    ranked.sort_by_key(|o| {
        (
            !reachable(&o.peer),
            recent.penalty(&o.peer, now),
            std::cmp::Reverse(o.concurrency),
        )
    });
    let chosen = ranked.first()?.model.clone();
    let mut peers: Vec<PeerId> = Vec::new();
    for o in ranked.iter().filter(|o| o.model == chosen) {
        if !peers.contains(&o.peer) {
            peers.push(o.peer);
        }
    }
    Some((chosen, peers))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offer(peer: PeerId, model: &str, concurrency: u32) -> Offer {
        Offer {
            peer,
            model: model.into(),
            concurrency,
        }
    }

    #[test]
    fn reachable_then_unrefused_then_roomier_first() {
        let [a, b, c, d] = [(); 4].map(|()| PeerId::random());
        let now = Instant::now();
        let mut recent = Recent::default();
        recent.note(
            b,
            &FriendFailure::Busy {
                retry_after: Duration::from_secs(5),
            },
            now,
        );
        let offers = vec![
            offer(a, "m", 1),
            offer(b, "m", 4),
            offer(c, "m", 2),
            offer(d, "m", 8),
        ];
        let (model, peers) = rank(&offers, Some("m"), |p| *p != d, &recent, now).unwrap();
        assert_eq!(model, "m");
        assert_eq!(peers, vec![c, a, b, d]);
        // The busy memory runs out.
        let later = now + Duration::from_secs(6);
        let (_, peers) = rank(&offers, None, |p| *p != d, &recent, later).unwrap();
        assert_eq!(peers, vec![b, c, a, d]);
    }

    #[test]
    fn a_model_is_chosen_when_none_is_asked_and_others_filtered() {
        let [a, b] = [(); 2].map(|()| PeerId::random());
        let now = Instant::now();
        let offers = vec![offer(a, "small", 1), offer(b, "big", 1)];
        let recent = Recent::default();
        assert_eq!(
            rank(&offers, None, |p| *p == b, &recent, now),
            Some(("big".into(), vec![b]))
        );
        assert_eq!(
            rank(&offers, Some("small"), |_| true, &recent, now),
            Some(("small".into(), vec![a]))
        );
        assert_eq!(rank(&offers, Some("other"), |_| true, &recent, now), None);
    }

    #[test]
    fn not_permitted_goes_last_and_served_forgets() {
        let [a, b] = [(); 2].map(|()| PeerId::random());
        let now = Instant::now();
        let mut recent = Recent::default();
        recent.note(a, &FriendFailure::NotPermitted, now);
        assert_eq!(recent.order(&[a, b], now), vec![b, a]);
        assert_eq!(
            recent.order(&[a, b], now + NOT_PERMITTED_MEMORY),
            vec![a, b]
        );
        recent.served(&a);
        assert_eq!(recent.penalty(&a, now), 0);
    }
}

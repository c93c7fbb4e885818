//! The friend gate: only friends connect, either way — with one narrow
//! exception for invitations.
//!
//! While the [`InviteDoor`] is open (the node has at least one unexpired,
//! unused invitation), a peer that is not a friend may still complete an
//! INBOUND connection as a *guest*, at most [`MAX_GUESTS`] of them at a time.
//! A guest may only present an invitation secret: the driver drops its
//! frames and reports no `PeerConnected` for it (so replication never starts),
//! offload streams refuse it, and the driver closes its connections when
//! [`GUEST_WINDOW`] has passed unless it became a friend. With the door shut
//! the gate is exactly the old allow-list: strangers are denied when their
//! connection is established, before any stream is opened.

use std::collections::{HashMap, HashSet, VecDeque};
use std::convert::Infallible;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use libp2p::core::Endpoint;
use libp2p::core::transport::PortUse;
use libp2p::swarm::{
    CloseConnection, ConnectionClosed, ConnectionDenied, ConnectionId, FromSwarm, ListenFailure,
    NetworkBehaviour, THandler, THandlerInEvent, THandlerOutEvent, ToSwarm, dummy,
};
use libp2p::{Multiaddr, PeerId};

/// How long a guest may stay connected without becoming a friend: enough
/// for one invitation exchange (a stream open and two small messages) over
/// a slow mobile link, short enough that a stranger cannot camp on the node.
pub const GUEST_WINDOW: Duration = Duration::from_secs(10);

/// At most this many distinct guests at once: invitations are redeemed one
/// at a time by a person, so a handful is plenty, and it bounds what
/// strangers can hold while the door is open.
pub const MAX_GUESTS: usize = 4;

/// Whether strangers may connect as guests (some invitation is open).
/// Shared between the invitation service, which sets it, and the gate.
#[derive(Debug, Clone, Default)]
pub struct InviteDoor(Arc<AtomicBool>);

impl InviteDoor {
    /// Opens (`true`) or shuts (`false`) the door.
    pub fn set_open(&self, open: bool) {
        self.0.store(open, Ordering::Relaxed);
    }

    /// Whether the door is open now.
    pub fn is_open(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Why the gate denied a connection: the peer is not a friend (and was not
/// admitted as a guest).
#[derive(Debug)]
pub struct NotAFriend {
    /// The peer denied.
    pub peer: PeerId,
}

impl fmt::Display for NotAFriend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "peer {} is not a friend", self.peer)
    }
}

impl std::error::Error for NotAFriend {}

/// The gate behaviour.
#[derive(Debug, Default)]
pub struct FriendGate {
    friends: HashSet<PeerId>,
    door: InviteDoor,
    /// Guests connected now, with their connections.
    guests: HashMap<PeerId, HashSet<ConnectionId>>,
    close: VecDeque<PeerId>,
    waker: Option<Waker>,
}

impl FriendGate {
    /// A gate with no friends that admits guests while `door` is open.
    pub fn new(door: InviteDoor) -> Self {
        Self {
            door,
            ..Self::default()
        }
    }

    /// Lets `peer` connect and be dialled (a guest becomes a friend).
    /// Returns whether it was new.
    pub fn allow(&mut self, peer: PeerId) -> bool {
        self.guests.remove(&peer);
        self.friends.insert(peer)
    }

    /// Stops letting `peer` connect and closes its connections. Returns
    /// whether it had been a friend.
    pub fn disallow(&mut self, peer: PeerId) -> bool {
        let removed = self.friends.remove(&peer);
        if removed {
            self.close_all(peer);
        }
        removed
    }

    /// Closes every connection of `peer` (a guest whose window is over).
    pub fn close_all(&mut self, peer: PeerId) {
        self.close.push_back(peer);
        if let Some(waker) = self.waker.take() {
            waker.wake();
        }
    }

    /// Whether `peer` is a friend.
    pub fn is_friend(&self, peer: &PeerId) -> bool {
        self.friends.contains(peer)
    }

    fn forget_guest(&mut self, peer: PeerId, id: ConnectionId) {
        if let Some(ids) = self.guests.get_mut(&peer) {
            ids.remove(&id);
            if ids.is_empty() {
                self.guests.remove(&peer);
            }
        }
    }

    /// Whether `peer` is connected as a guest now.
    pub fn is_guest(&self, peer: &PeerId) -> bool {
        self.guests.contains_key(peer)
    }

    fn enforce(&self, peer: &PeerId) -> Result<(), ConnectionDenied> {
        if self.friends.contains(peer) {
            Ok(())
        } else {
            Err(ConnectionDenied::new(NotAFriend { peer: *peer }))
        }
    }

    /// A stranger's inbound connection: a guest if the door is open and
    /// there is room.
    fn admit_guest(&mut self, peer: PeerId, id: ConnectionId) -> Result<(), ConnectionDenied> {
        let known = self.guests.contains_key(&peer);
        if !self.door.is_open() || (!known && self.guests.len() >= MAX_GUESTS) {
            return Err(ConnectionDenied::new(NotAFriend { peer }));
        }
        self.guests.entry(peer).or_default().insert(id);
        Ok(())
    }
}

impl NetworkBehaviour for FriendGate {
    type ConnectionHandler = dummy::ConnectionHandler;
    type ToSwarm = Infallible;

    fn handle_established_inbound_connection(
        &mut self,
        id: ConnectionId,
        peer: PeerId,
        _: &Multiaddr,
        _: &Multiaddr,
    ) -> Result<THandler<Self>, ConnectionDenied> {
        if !self.friends.contains(&peer) {
            self.admit_guest(peer, id)?;
        }
        Ok(dummy::ConnectionHandler)
    }

    fn handle_pending_outbound_connection(
        &mut self,
        _: ConnectionId,
        peer: Option<PeerId>,
        _: &[Multiaddr],
        _: Endpoint,
    ) -> Result<Vec<Multiaddr>, ConnectionDenied> {
        if let Some(peer) = peer {
            self.enforce(&peer)?;
        }
        Ok(vec![])
    }

    fn handle_established_outbound_connection(
        &mut self,
        _: ConnectionId,
        peer: PeerId,
        _: &Multiaddr,
        _: Endpoint,
        _: PortUse,
    ) -> Result<THandler<Self>, ConnectionDenied> {
        self.enforce(&peer)?;
        Ok(dummy::ConnectionHandler)
    }

    fn on_swarm_event(&mut self, event: FromSwarm) {
        // A guest connection ends either by closing or, when a part after
        // the gate (the connection limits) denied it, by a listen failure.
        let (peer, id) = match event {
            FromSwarm::ConnectionClosed(ConnectionClosed {
                peer_id,
                connection_id,
                ..
            }) => (peer_id, connection_id),
            FromSwarm::ListenFailure(ListenFailure {
                peer_id: Some(peer_id),
                connection_id,
                ..
            }) => (peer_id, connection_id),
            _ => return,
        };
        self.forget_guest(peer, id);
    }

    fn on_connection_handler_event(
        &mut self,
        _: PeerId,
        _: ConnectionId,
        event: THandlerOutEvent<Self>,
    ) {
        match event {}
    }

    fn poll(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<ToSwarm<Self::ToSwarm, THandlerInEvent<Self>>> {
        if let Some(peer) = self.close.pop_front() {
            return Poll::Ready(ToSwarm::CloseConnection {
                peer_id: peer,
                connection: CloseConnection::All,
            });
        }
        self.waker = Some(cx.waker().clone());
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peer(n: u8) -> PeerId {
        porfiry_protocol::NodeKey::from_seed([n; 32]).peer_id()
    }

    fn addr() -> Multiaddr {
        "/ip4/127.0.0.1/tcp/1".parse().unwrap()
    }

    fn inbound(gate: &mut FriendGate, peer: PeerId) -> bool {
        gate.handle_established_inbound_connection(
            ConnectionId::new_unchecked(0),
            peer,
            &addr(),
            &addr(),
        )
        .is_ok()
    }

    #[test]
    fn a_stranger_is_denied_while_the_door_is_shut() {
        let mut gate = FriendGate::new(InviteDoor::default());
        let stranger = peer(1);
        assert!(!inbound(&mut gate, stranger));
        assert!(!gate.is_guest(&stranger));
        let friend = peer(2);
        gate.allow(friend);
        assert!(inbound(&mut gate, friend));
    }

    #[test]
    fn an_open_door_admits_a_bounded_number_of_inbound_guests_only() {
        let door = InviteDoor::default();
        let mut gate = FriendGate::new(door.clone());
        door.set_open(true);
        let guests: Vec<PeerId> = (0..MAX_GUESTS).map(|i| peer(10 + i as u8)).collect();
        for (i, g) in guests.iter().enumerate() {
            let id = ConnectionId::new_unchecked(i);
            assert!(
                gate.handle_established_inbound_connection(id, *g, &addr(), &addr())
                    .is_ok()
            );
            assert!(gate.is_guest(g));
            assert!(!gate.is_friend(g));
        }
        assert!(!inbound(&mut gate, peer(50)), "over MAX_GUESTS");
        // Never dialled out to: a guest is inbound only.
        let out = gate.handle_established_outbound_connection(
            ConnectionId::new_unchecked(99),
            guests[0],
            &addr(),
            Endpoint::Dialer,
            PortUse::New,
        );
        assert!(out.is_err());
        // Becoming a friend frees its guest slot.
        gate.allow(guests[0]);
        assert!(!gate.is_guest(&guests[0]));
        assert!(inbound(&mut gate, peer(51)));
        // A guest whose connection closes frees its slot too.
        gate.forget_guest(guests[1], ConnectionId::new_unchecked(1));
        assert!(!gate.is_guest(&guests[1]));
        assert!(inbound(&mut gate, peer(53)));
        // Shutting the door stops new guests.
        door.set_open(false);
        assert!(!inbound(&mut gate, peer(52)));
    }
}

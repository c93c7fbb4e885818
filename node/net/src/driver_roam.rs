//! A roaming node: one that listens nowhere and has bound its port to dial
//! from (`ReachConfig::punch_port`), a phone. When it leaves a network (from
//! Wi-Fi to mobile data) the address of that port on the network goes
//! away, and every connection it had went out from the network it left:
//! they are dead, although TCP would take minutes to say so and a phone
//! pings only every 2 minutes (`PHONE_PING_INTERVAL`). So when such an
//! address goes, the driver closes all its connections at once, which
//! makes every friend due for a redial; when an address comes, friends not
//! connected are dialled now instead of at their backoff. Friends learn
//! the new addresses from the node's next `reachable_at` item.
//!
//! Only on a roaming node: that port's listener is what watches the
//! interfaces, and on a server a vanished interface (a container's bridge)
//! says nothing about the links, which may well run elsewhere.

use libp2p::PeerId;
use libp2p::swarm::SwarmEvent;

use super::MeshDriver;
use crate::behaviour::MeshBehaviourEvent;
use crate::reach::is_interface_address;

impl MeshDriver {
    /// Sees `event` before the driver handles it: on a roaming node, an
    /// interface address gone closes every link, one come dials the
    /// friends not connected.
    pub(super) fn roam_observe(&mut self, event: &SwarmEvent<MeshBehaviourEvent>) {
        if !self.reach.roams() {
            return;
        }
        match event {
            SwarmEvent::ExpiredListenAddr { address, .. } if is_interface_address(address) => {
                let peers: Vec<PeerId> = self.swarm.connected_peers().copied().collect();
                tracing::info!(
                    %address,
                    links = peers.len(),
                    "this node left a network: its links there are dead, so they are closed and its friends dialled again"
                );
                for peer in peers {
                    // Err only when no longer connected: nothing to close.
                    let _ = self.swarm.disconnect_peer_id(peer);
                }
            }
            SwarmEvent::NewListenAddr { address, .. } if is_interface_address(address) => {
                self.dial_unconnected_now(None);
            }
            _ => {}
        }
    }
}

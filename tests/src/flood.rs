//! What a friend driven in-process sends in the flood tests: signed public
//! notes and the `Items` frames that carry them, as a real node's push does.

use porfiry_protocol::wire::{self, WireItem, WireMessage};
use porfiry_protocol::{Audience, Body, NodeKey, PayloadDraft, VerifiedItem, sign};

/// Public note `i` by `key` ("`text` `i`", four hops), a millisecond apart
/// from its neighbours.
pub fn public_note(key: &NodeKey, i: usize, text: &str) -> VerifiedItem {
    sign(
        key,
        &PayloadDraft {
            created_ms: porfiry_mesh::clock::now_ms() + i as u64,
            audience: Audience::Public,
            max_hops: 4,
            expires_ms: None,
            replaces: None,
            body: Body::Note(porfiry_protocol::Note::by_user(format!("{text} {i}"))),
        },
    )
    .expect("a test note signs")
}

/// One live-push `Items` frame holding `items`, each offered with 3 hops.
pub fn items_frame(items: &[VerifiedItem]) -> Vec<u8> {
    wire::encode(&WireMessage::Items {
        session: None,
        items: items
            .iter()
            .map(|x| WireItem {
                hops: 3,
                envelope: x.envelope_bytes().to_vec(),
            })
            .collect(),
    })
    .expect("the frame encodes")
}

/// A friend of a real node, driven in-process by the node's own libp2p
/// driver with its own key: it sends whatever frames a test gives it.
pub struct InProcessFriend {
    /// The runtime its driver runs on.
    pub rt: tokio::runtime::Runtime,
    /// Its driver.
    pub handle: porfiry_mesh::net::MeshHandle,
    /// The node it is a friend of.
    pub to: porfiry_mesh::net::PeerId,
}

impl InProcessFriend {
    /// Dials `node` (which must list `key`'s peer id as a friend and
    /// listen) and waits until `node` logs the friend connected.
    pub fn connect(key: &NodeKey, node: &crate::mesh_node::MeshNode) -> InProcessFriend {
        use porfiry_mesh::net::{MeshConfig, MeshDriver, Multiaddr, PeerId};
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime");
        let to: PeerId = node.peer_id.parse().expect("the node's peer id");
        let address: Multiaddr = node
            .address
            .as_deref()
            .expect("the node listens")
            .parse()
            .expect("its address");
        let config = MeshConfig::phone().with_friend(to, vec![address]);
        let handle = {
            let _guard = rt.enter();
            let (driver, handle, mut events) =
                MeshDriver::new(key.to_libp2p_keypair(), config).expect("a driver");
            rt.spawn(driver.run());
            // The driver waits on a full event queue: drain it.
            rt.spawn(async move { while events.recv().await.is_some() {} });
            handle
        };
        node.wait_logged(&["friend connected", &key.peer_id().to_string()]);
        InProcessFriend { rt, handle, to }
    }

    /// Sends one frame (queued on the driver; returns before it arrives).
    pub fn send(&self, frame: Vec<u8>) {
        self.rt
            .block_on(self.handle.send(self.to, frame))
            .expect("the driver takes the frame");
    }

    /// Stops the driver and its runtime.
    pub fn shutdown(self) {
        self.rt
            .block_on(self.handle.shutdown())
            .expect("the driver stops");
        self.rt.shutdown_timeout(std::time::Duration::from_secs(5));
    }
}

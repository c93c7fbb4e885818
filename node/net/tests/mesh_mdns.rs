//! LAN discovery (`--mdns`) with real drivers: two friends that know no
//! address of each other find each other and connect; a stranger on the
//! same LAN is found too but never connected to — its own attempt is
//! refused by the friend gate. Skipped, with the reason printed, on a
//! machine without a multicast-capable network interface.

mod mesh_support;

use mesh_support::{WAIT, start, wait_for};
use porfiry_net::{Keypair, MeshConfig, MeshEvent, PeerId, ReachConfig};
use tokio::time::timeout;

/// `IFF_UP | IFF_MULTICAST` from `<linux/if.h>`.
const UP_AND_MULTICAST: u32 = 0x1 | 0x1000;

/// A non-loopback interface that is up and does multicast, if any.
fn multicast_interface() -> Option<String> {
    let dir = std::fs::read_dir("/sys/class/net").ok()?;
    dir.flatten().find_map(|entry| {
        let name = entry.file_name().to_string_lossy().into_owned();
        let flags = std::fs::read_to_string(entry.path().join("flags")).ok()?;
        let flags = u32::from_str_radix(flags.trim().trim_start_matches("0x"), 16).ok()?;
        (name != "lo" && flags & UP_AND_MULTICAST == UP_AND_MULTICAST).then_some(name)
    })
}

fn lan_node(key: Keypair, friends: &[PeerId]) -> mesh_support::Node {
    let mut config = MeshConfig {
        reach: ReachConfig {
            mdns: true,
            ..ReachConfig::default()
        },
        // Every interface: mDNS announces the listen addresses, and a
        // LAN peer must get one it can dial.
        ..MeshConfig::server(vec!["/ip4/0.0.0.0/tcp/0".parse().unwrap()])
    };
    for f in friends {
        config = config.with_friend(*f, Vec::new());
    }
    start(key, config)
}

#[tokio::test]
async fn friends_on_the_lan_find_each_other_and_a_stranger_is_never_connected() {
    let Some(interface) = multicast_interface() else {
        println!("skipped: no multicast-capable network interface is up");
        return;
    };
    println!("mDNS over {interface}");
    let (a_key, b_key, c_key) = (
        Keypair::generate_ed25519(),
        Keypair::generate_ed25519(),
        Keypair::generate_ed25519(),
    );
    let (a_peer, b_peer, c_peer) = (
        a_key.public().to_peer_id(),
        b_key.public().to_peer_id(),
        c_key.public().to_peer_id(),
    );
    let mut a = lan_node(a_key, &[b_peer]);
    let _b = lan_node(b_key, &[a_peer]);
    // C wants A, but A does not know it.
    let _c = lan_node(c_key, &[a_peer]);
    wait_for(&mut a.events, |e| {
        *e == MeshEvent::PeerConnected { peer: b_peer }
    })
    .await;
    wait_for(&mut a.events, |e| {
        *e == MeshEvent::PeerRefused { peer: c_peer }
    })
    .await;
    a.handle.shutdown().await.unwrap();
    while let Some(event) = timeout(WAIT, a.events.recv()).await.expect("driver stops") {
        assert_ne!(event, MeshEvent::PeerConnected { peer: c_peer });
    }
}

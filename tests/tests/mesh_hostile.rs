//! End to end: a friend that misbehaves. A test peer runs the node's own
//! libp2p driver in-process with its own key, is B's friend, and sends B (a
//! real `porfiry run` process) a tampered item, a frame over the wire cap,
//! a frame over the transport cap and bytes that are not a message. Each is
//! refused and logged; B keeps running, its file unchanged; and because the
//! connection is KEPT (the driver's documented choice: only the offending
//! frame's stream is dropped), a good item sent afterwards on the same link
//! is accepted.

use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use porfiry_mesh::net::{MeshConfig, MeshDriver, MeshEvent, MeshHandle, Multiaddr, PeerId};
use porfiry_protocol::wire::{self, WireItem, WireMessage};
use porfiry_protocol::{Audience, Body, NodeKey, PayloadDraft, VerifiedItem, sign};
use porfiry_tests::mesh_node::{DEADLINE, MeshNode, wait_for};

fn note(key: &NodeKey, text: &str) -> VerifiedItem {
    sign(
        key,
        &PayloadDraft {
            created_ms: porfiry_mesh::clock::now_ms(),
            audience: Audience::Public,
            max_hops: 3,
            expires_ms: None,
            replaces: None,
            body: Body::Note(porfiry_protocol::Note::by_user(text)),
        },
    )
    .unwrap()
}

fn items_frame(envelope: Vec<u8>) -> Vec<u8> {
    wire::encode(&WireMessage::Items {
        session: None,
        items: vec![WireItem { hops: 3, envelope }],
    })
    .unwrap()
}

/// Waits for the first event `pick` accepts.
fn wait_event(rx: &Receiver<MeshEvent>, what: &str, pick: impl Fn(&MeshEvent) -> bool) {
    let start = Instant::now();
    loop {
        let left = DEADLINE.saturating_sub(start.elapsed());
        match rx.recv_timeout(left) {
            Ok(e) if pick(&e) => return,
            Ok(_) => {}
            Err(RecvTimeoutError::Timeout) => panic!("timed out waiting for {what}"),
            Err(RecvTimeoutError::Disconnected) => panic!("driver gone while waiting for {what}"),
        }
    }
}

#[test]
fn tampered_items_and_oversized_frames_are_refused_and_the_link_stays_up() {
    let key = NodeKey::from_seed([42; 32]);
    let t_peer = key.peer_id();
    let mut b = MeshNode::init("B");
    b.cli_ok(&["friends", "add", &t_peer.to_string()]);
    b.start_server(0);
    let b_peer: PeerId = b.peer_id.parse().unwrap();
    let b_addr: Multiaddr = b.address.as_deref().unwrap().parse().unwrap();

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    // The test peer's own cap is raised so it will send what B must refuse.
    let config = MeshConfig {
        max_frame_bytes: 8 * 1024 * 1024,
        ..MeshConfig::phone().with_friend(b_peer, vec![b_addr])
    };
    let (handle, rx) = {
        let _guard = rt.enter();
        let (driver, handle, mut events) =
            MeshDriver::new(key.to_libp2p_keypair(), config).unwrap();
        rt.spawn(driver.run());
        let (tx, rx) = std::sync::mpsc::channel();
        rt.spawn(async move {
            while let Some(e) = events.recv().await {
                let _ = tx.send(e);
            }
        });
        (handle, rx)
    };
    let send = |h: &MeshHandle, frame: Vec<u8>| rt.block_on(h.send(b_peer, frame)).unwrap();
    wait_event(
        &rx,
        "the link to B",
        |e| matches!(e, MeshEvent::PeerConnected { peer } if *peer == b_peer),
    );
    b.wait_logged(&["friend connected", &t_peer.to_string()]);
    let items_before = b.shared_item_count();
    let notes_before = b.store().notes_recent(100).unwrap();

    // 1. A signed note with one byte of its text changed: the signature fails.
    let genuine = note(&key, "genuine words");
    let mut tampered = genuine.envelope_bytes().to_vec();
    let at = tampered.windows(7).position(|w| w == b"genuine").unwrap();
    tampered[at] = b'G';
    send(&handle, items_frame(tampered));
    b.wait_logged(&["rejected an invalid item", &t_peer.to_string(), "signature"]);

    // 2. A frame the transport carries but the wire format refuses (2 MiB).
    send(&handle, vec![0x83; 2 * 1024 * 1024]);
    b.wait_logged(&[
        "dropped a frame that is not a wire message",
        "more than the limit",
    ]);

    // 3. Bytes that are not a message at all.
    send(&handle, vec![0xff, 0x00, 0x13]);
    b.wait_logged(&["dropped a frame that is not a wire message", "bytes=3"]);

    // 4. A frame over the transport's 4 MiB cap: refused from its length
    //    prefix, its stream dropped, the connection kept.
    send(&handle, vec![0u8; 5 * 1024 * 1024]);
    b.wait_logged(&["rejected a frame; stream dropped, connection kept"]);

    assert!(b.is_running(), "B survived: {}", b.stderr());
    assert_eq!(b.shared_item_count(), items_before, "nothing stored");
    assert_eq!(
        b.store().notes_recent(100).unwrap(),
        notes_before,
        "nothing merged"
    );

    // The same link still carries a good item.
    let good = note(&key, "good after all");
    send(&handle, items_frame(good.envelope_bytes().to_vec()));
    wait_for("B to accept the good note", || {
        b.shared_item_count() == items_before + 1
    });
    let store = b.store();
    assert!(store.has_item(&good.id()).unwrap());
    assert!(!store.has_item(&genuine.id()).unwrap());
    let from_t: Vec<String> = store
        .notes_recent(100)
        .unwrap()
        .into_iter()
        .filter(|n| n.row.origin_author.as_deref() == Some(t_peer.to_string().as_str()))
        .map(|n| n.row.text)
        .collect();
    assert_eq!(from_t, ["good after all"]);
    store.check_integrity().unwrap();
    // No disconnect happened on the way.
    let disconnected = rx
        .try_iter()
        .any(|e| matches!(e, MeshEvent::PeerDisconnected { .. }));
    assert!(!disconnected, "the link was dropped");
    assert!(!b.logged(&["friend disconnected", &t_peer.to_string()]));

    rt.block_on(handle.shutdown()).unwrap();
    rt.shutdown_timeout(Duration::from_secs(5));
    let exit = b.terminate();
    assert!(exit.status.success(), "{}", exit.stderr);
}

//! A person's devices through the bindings' own Rust API (issue 45): a
//! server's device code links a phone, both list each other, the codes
//! that must not link are refused with a reason (a friend's invitation, a
//! used code, a device code presented as a friend's, what is not a code),
//! `valid_secs` has `invite`'s bounds, and an unlink by the device's friend
//! name empties both lists. The memory crossing between the two is the
//! Python test's (`tests/python/test_devices.py`), through the generated
//! module.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use porfiry_ffi::node::MAX_INVITATION_SECS;
use porfiry_ffi::{NodeProfile, NodeSettings, PorfiryError, PorfiryNode};

/// How long a condition may take: loopback links take milliseconds; 60 s
/// only trips on a real hang on a loaded 2-core machine.
const DEADLINE: Duration = Duration::from_secs(60);

/// Between two looks at a condition.
const POLL: Duration = Duration::from_millis(25);

fn run<T>(f: impl Future<Output = T>) -> T {
    futures::executor::block_on(f)
}

/// Polls `check` until it gives a value, for at most [`DEADLINE`].
fn eventually<T>(what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + DEADLINE;
    loop {
        if let Some(v) = check() {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(POLL);
    }
}

fn start(dir: &std::path::Path, server: bool) -> Arc<PorfiryNode> {
    PorfiryNode::start(NodeSettings {
        data_dir: dir.display().to_string(),
        profile: if server {
            NodeProfile::Server
        } else {
            NodeProfile::Phone
        },
        listen: if server {
            vec!["/ip4/127.0.0.1/tcp/0".into()]
        } else {
            Vec::new()
        },
        model: None,
        language: "en".into(),
        constrained: None,
        toolset_idle_secs: None,
        media_catalog: None,
        think_ticks_per_hour: None,
    })
    .expect("the node starts")
}

/// Waits until `node` listens (its codes carry the addresses).
fn wait_listening(node: &PorfiryNode) {
    eventually("the server to listen", || {
        let status = run(node.status()).expect("status");
        (!status.listening.is_empty()).then_some(())
    });
}

fn invitation_error(result: Result<impl std::fmt::Debug, PorfiryError>) -> String {
    match result {
        Err(PorfiryError::Invitation(why)) => why,
        other => panic!("expected an Invitation error, got {other:?}"),
    }
}

#[test]
fn a_server_links_a_phone_both_list_each_other_and_an_unlink_empties_both() {
    let tmp = tempfile::tempdir().expect("a temporary folder");
    let server = start(&tmp.path().join("server"), true);
    let phone = start(&tmp.path().join("phone"), false);
    let stranger = start(&tmp.path().join("stranger"), false);
    wait_listening(&server);

    // A friend's invitation does not link a device, and says so.
    let friend_code = run(server.invite(None, 600)).expect("an invitation");
    let why = invitation_error(run(phone.join_device(friend_code)));
    assert!(
        why.contains("invites a friend, it does not link a device: join with it as a friend"),
        "{why}"
    );
    assert!(run(phone.devices()).expect("devices").is_empty());

    let code = run(server.link_device(600)).expect("a device code");
    let device = run(phone.join_device(format!("  {code}\n"))).expect("linked");
    assert_eq!(device.peer_id, server.peer_id());
    assert_eq!(device.last_sync_ms, None);

    let on_phone = run(phone.devices()).expect("devices");
    assert_eq!(on_phone.len(), 1, "{on_phone:?}");
    assert_eq!(on_phone[0].peer_id, server.peer_id());
    assert_eq!(on_phone[0].linked_since_ms, device.linked_since_ms);
    let on_server = eventually("the phone in the server's list", || {
        let list = run(server.devices()).expect("devices");
        (!list.is_empty()).then_some(list)
    });
    assert_eq!(on_server.len(), 1, "{on_server:?}");
    assert_eq!(on_server[0].peer_id, phone.peer_id());
    assert_eq!(on_server[0].linked_since_ms, device.linked_since_ms);

    // A code is used once.
    let why = invitation_error(run(stranger.join_device(code)));
    assert!(why.contains("used already"), "{why}");
    // A device code presented to become a friend is refused, and says so.
    let device_code = run(server.link_device(600)).expect("a device code");
    let why = invitation_error(run(stranger.join(device_code, None)));
    assert!(
        why.contains("it does not make a friend: join it as a device, or ask"),
        "{why}"
    );
    assert!(run(stranger.devices()).expect("devices").is_empty());

    // The device is a friend here: its friend name shows and unlinks it.
    run(server.rename_friend(phone.peer_id(), "pocket".into())).expect("renamed");
    let [listed] = <[_; 1]>::try_from(run(server.devices()).expect("devices")).expect("one");
    assert_eq!(listed.name.as_deref(), Some("pocket"));

    // Unlinking what is not a device is not found; the device's unlink
    // empties this list at once and the other's once it learns.
    match run(server.unlink_device(stranger.peer_id())) {
        Err(PorfiryError::NotFound(why)) => assert!(why.contains("devices() lists"), "{why}"),
        other => panic!("expected NotFound, got {other:?}"),
    }
    run(server.unlink_device("pocket".into())).expect("unlinked");
    assert!(run(server.devices()).expect("devices").is_empty());
    eventually("the unlink on the phone", || {
        run(phone.devices())
            .expect("devices")
            .is_empty()
            .then_some(())
    });

    for node in [server, phone, stranger] {
        node.shutdown().expect("shut down");
    }
}

#[test]
fn device_codes_have_invites_bounds_and_what_is_not_a_code_is_bad_input() {
    let tmp = tempfile::tempdir().expect("a temporary folder");
    let phone = start(&tmp.path().join("phone"), false);
    for secs in [0, MAX_INVITATION_SECS + 1] {
        match run(phone.link_device(secs)) {
            Err(PorfiryError::BadInput(why)) => assert!(why.contains("valid for"), "{why}"),
            other => panic!("valid_secs {secs}: expected BadInput, got {other:?}"),
        }
    }
    match run(phone.join_device("not a code".into())) {
        Err(PorfiryError::BadInput(why)) => assert!(why.contains("code"), "{why}"),
        other => panic!("expected BadInput, got {other:?}"),
    }
    phone.pause().expect("paused");
    assert!(matches!(
        run(phone.devices()),
        Err(PorfiryError::NotRunning(_))
    ));
    phone.shutdown().expect("shut down");
}

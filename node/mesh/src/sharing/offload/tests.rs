//! Tests of `super`: the advertisement on a real SQLite file, read back by
//! a friend's store through the merge path.

use porfiry_protocol::{Body, NodeKey};
use porfiry_storage::{DB_FILE_NAME, Store};

use super::*;
use crate::sharing::merge::merge_item;

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::create(dir.path().join(DB_FILE_NAME)).unwrap();
    (dir, store)
}

fn offer(model: &str) -> OfferedModel {
    OfferedModel {
        model: model.into(),
        features: vec!["tools".into()],
        context_tokens: Some(8192),
        concurrency: 2,
    }
}

#[test]
fn an_offer_is_published_once_replaced_on_change_and_retracted_when_off() {
    let (_d, a) = store();
    let (_e, b) = store();
    let key = NodeKey::from_seed([3; 32]);
    let own = key.peer_id().to_string();

    let first = advertise_offload(&a, &key, Some(&offer("qwen")), 1_000).unwrap();
    assert_eq!(first.len(), 1);
    let Body::LlmAddress(addr) = first[0].body() else {
        panic!("not an LlmAddress")
    };
    assert_eq!(
        addr.endpoint, own,
        "the endpoint is the peer id, never a URL"
    );
    assert_eq!(addr.model, "qwen");
    assert_eq!(addr.limits.context_tokens, Some(8192));
    assert!(
        advertise_offload(&a, &key, Some(&offer("qwen")), 2_000)
            .unwrap()
            .is_empty(),
        "unchanged: nothing new"
    );

    for item in &first {
        merge_item(&b, item).unwrap();
    }
    let seen = offload_candidates(&b).unwrap();
    assert_eq!(
        seen,
        [Candidate {
            peer: own.clone(),
            model: "qwen".into(),
            context: Some(8192),
            concurrency: 2,
            features: vec!["tools".into()],
        }]
    );
    assert!(
        offload_candidates(&a).unwrap().is_empty(),
        "our own offer is not a candidate"
    );

    let changed = advertise_offload(&a, &key, Some(&offer("llama")), 3_000).unwrap();
    assert_eq!(changed.len(), 2, "a retraction and the new advertisement");
    for item in &changed {
        if let Body::Retraction(r) = item.body() {
            crate::sharing::merge::forget_merged(&b, &r.target).unwrap();
        } else {
            merge_item(&b, item).unwrap();
        }
    }
    let seen = offload_candidates(&b).unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].model, "llama");

    let off = advertise_offload(&a, &key, None, 4_000).unwrap();
    assert_eq!(off.len(), 1);
    let Body::Retraction(r) = off[0].body() else {
        panic!("not a retraction")
    };
    crate::sharing::merge::forget_merged(&b, &r.target).unwrap();
    assert!(offload_candidates(&b).unwrap().is_empty());
    assert!(advertise_offload(&a, &key, None, 5_000).unwrap().is_empty());
}

#[test]
fn a_club_servers_hundreds_of_advertising_friends_are_all_candidates() {
    // A club server: 300 friends, each offering its model.
    let (_d, b) = store();
    for i in 0..300u32 {
        let mut seed = [0u8; 32];
        seed[..4].copy_from_slice(&i.to_be_bytes());
        let key = NodeKey::from_seed(seed);
        let (_f, friend) = store();
        let items =
            advertise_offload(&friend, &key, Some(&offer(&format!("m{i}"))), 1_000).unwrap();
        for item in &items {
            merge_item(&b, item).unwrap();
        }
    }
    let seen = offload_candidates(&b).unwrap();
    assert_eq!(seen.len(), 300);
    let models: std::collections::BTreeSet<_> = seen.iter().map(|c| c.model.clone()).collect();
    assert_eq!(models.len(), 300, "each friend's model once");
}

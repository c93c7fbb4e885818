//! Tests of `super`: the setting read by a real publishing pass over a
//! real SQLite file, every item checked for the audience it carries.

use std::collections::HashSet;

use porfiry_protocol::club::{CLUB_MAX_HOPS, ClubRef};
use porfiry_protocol::{Audience, ItemId, VerifiedItem};
use porfiry_storage::{Rating, StagnationStrategy, Store, ThinkingMethod};

use super::super::tests::{key, store};
use super::super::{DEFAULT_KNOWHOW_MAX_HOPS, publish_pending};
use super::*;

/// One shareable strategy, thinking method and rating, each named `tag`.
fn add_knowhow(store: &Store, tag: &str, at: u64) {
    store
        .add(
            &StagnationStrategy {
                name: format!("s-{tag}"),
                shareable: true,
                ..Default::default()
            },
            at,
        )
        .unwrap();
    store
        .add(
            &ThinkingMethod {
                name: format!("m-{tag}"),
                shareable: true,
                ..Default::default()
            },
            at,
        )
        .unwrap();
    store
        .add(
            &Rating {
                target: ItemId([7; 32]).to_string(),
                score: 1,
                comment: tag.into(),
                shareable: true,
                ..Default::default()
            },
            at,
        )
        .unwrap();
}

/// The know-how one pass publishes with the setting stored as the JSON
/// `stored` (none: unset), as `config_update` stores a text.
fn published(stored: Option<serde_json::Value>) -> Vec<VerifiedItem> {
    let (_d, store) = store();
    if let Some(v) = stored {
        store.config_set(KNOWHOW_AUDIENCE_KEY, &v, 1).unwrap();
    }
    add_knowhow(&store, "a", 2);
    let mut skipped = HashSet::new();
    let items = publish_pending(&store, &key(), 3, &mut skipped).unwrap();
    assert_eq!(items.len(), 3, "a strategy, a method and a rating");
    items
}

fn assert_all(items: &[VerifiedItem], audience: &Audience, hops: u8) {
    for item in items {
        assert_eq!(item.audience(), audience, "{}", item.kind());
        assert_eq!(item.max_hops(), hops, "{}", item.kind());
    }
}

fn club() -> ClubRef {
    ClubRef::new("chess", &key().peer_id().to_string()).unwrap()
}

#[test]
fn unset_know_how_is_public_as_before() {
    assert_all(
        &published(None),
        &KNOWHOW_AUDIENCE,
        DEFAULT_KNOWHOW_MAX_HOPS,
    );
    assert_eq!(KNOWHOW_AUDIENCE, Audience::Public);
}

#[test]
fn public_know_how_is_public() {
    assert_all(
        &published(Some("public".into())),
        &Audience::Public,
        DEFAULT_KNOWHOW_MAX_HOPS,
    );
}

#[test]
fn friends_know_how_is_for_friends() {
    assert_all(
        &published(Some("friends".into())),
        &Audience::Friends,
        DEFAULT_KNOWHOW_MAX_HOPS,
    );
}

#[test]
fn group_know_how_is_for_the_group() {
    assert_all(
        &published(Some("group:family".into())),
        &Audience::Group("family".into()),
        DEFAULT_KNOWHOW_MAX_HOPS,
    );
}

#[test]
fn club_know_how_is_for_the_club_and_travels_as_club_items_do() {
    assert_all(
        &published(Some(format!("club:{}", club()).into())),
        &Audience::Club(club()),
        CLUB_MAX_HOPS,
    );
}

#[test]
fn a_bad_value_falls_back_to_friends_only_and_is_marked_once() {
    let bad: [serde_json::Value; 5] = [
        "everyone".into(),
        "group:Family".into(),
        format!("peer:{}", key().peer_id()).into(),
        "devices".into(),
        5.into(),
    ];
    for value in bad {
        assert_all(
            &published(Some(value)),
            &KNOWHOW_AUDIENCE_WHEN_BAD,
            DEFAULT_KNOWHOW_MAX_HOPS,
        );
    }
    let (_d, store) = store();
    let k = key();
    store
        .config_set(KNOWHOW_AUDIENCE_KEY, "everyone", 1)
        .unwrap();
    let mut skipped = HashSet::new();
    let marks = |s: &HashSet<(&'static str, i64)>| {
        s.iter().filter(|(t, _)| *t == KNOWHOW_AUDIENCE_KEY).count()
    };
    // Warned on the first pass, not again while the value stays.
    add_knowhow(&store, "a", 2);
    let first = publish_pending(&store, &k, 3, &mut skipped).unwrap();
    assert_all(&first, &KNOWHOW_AUDIENCE_WHEN_BAD, DEFAULT_KNOWHOW_MAX_HOPS);
    assert_eq!(marks(&skipped), 1);
    let mark = skipped.clone();
    add_knowhow(&store, "b", 4);
    let second = publish_pending(&store, &k, 5, &mut skipped).unwrap();
    assert_all(
        &second,
        &KNOWHOW_AUDIENCE_WHEN_BAD,
        DEFAULT_KNOWHOW_MAX_HOPS,
    );
    assert_eq!(
        skipped, mark,
        "the same bad value is not warned about again"
    );
    // Another bad value replaces the mark; a good one clears it.
    store
        .config_set(KNOWHOW_AUDIENCE_KEY, "devices", 6)
        .unwrap();
    publish_pending(&store, &k, 7, &mut skipped).unwrap();
    assert_eq!(marks(&skipped), 1);
    assert_ne!(skipped, mark);
    store.config_set(KNOWHOW_AUDIENCE_KEY, "public", 8).unwrap();
    add_knowhow(&store, "c", 9);
    let fixed = publish_pending(&store, &k, 10, &mut skipped).unwrap();
    assert_all(&fixed, &Audience::Public, DEFAULT_KNOWHOW_MAX_HOPS);
    assert!(skipped.is_empty());
}

#[test]
fn only_audiences_know_how_may_go_to_are_stored() {
    let (_d, store) = store();
    for refused in [
        Audience::Devices,
        Audience::Peer(key().peer_id().to_string()),
    ] {
        let e = set_knowhow_audience(&store, &refused, 1).unwrap_err();
        assert!(matches!(e, KnowhowAudienceError::NotForKnowhow(_)), "{e}");
        assert!(e.to_string().starts_with(KNOWHOW_AUDIENCE_KEY), "{e}");
    }
    assert!(stored_knowhow_audience(&store).unwrap().is_none());
    let e = parse_knowhow_audience("everyone").unwrap_err();
    assert!(e.to_string().starts_with(KNOWHOW_AUDIENCE_KEY), "{e}");
    for good in [
        Audience::Public,
        Audience::Friends,
        Audience::Group("family".into()),
        Audience::Club(club()),
    ] {
        set_knowhow_audience(&store, &good, 2).unwrap();
        assert_eq!(stored_knowhow_audience(&store).unwrap(), Some(good.clone()));
        assert_eq!(
            store.config_value(KNOWHOW_AUDIENCE_KEY).unwrap(),
            Some(serde_json::Value::String(good.to_string())),
            "stored as the text a person or `config_update` writes"
        );
    }
}

//! Tests of `super`: real SQLite files, real signatures.

use std::collections::HashSet;

use porfiry_protocol::limits::MAX_TEXT_BYTES;
use porfiry_protocol::{Audience, Body, ItemId, NodeKey, VerifiedItem};
use porfiry_storage::{
    DB_FILE_NAME, ListQuery, LlmConfig, LlmEntry, Note, NoteSource, Rating, Sharing,
    StagnationStrategy, Store, ThinkingMethod,
};

use super::*;

/// A fresh store in its own folder (also for the submodules' tests).
pub(super) fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::create(dir.path().join(DB_FILE_NAME)).unwrap();
    (dir, store)
}

/// The publishing node's key (also for the submodules' tests).
pub(super) fn key() -> NodeKey {
    NodeKey::from_seed([5; 32])
}

#[test]
fn a_posted_note_its_item_and_their_link_are_written_together() {
    let (_d, store) = store();
    let p = post_note(
        &store,
        &key(),
        "hi @bob #Rust",
        Sharing::Shared(Audience::Group("family".into())),
        NoteSource::Cli,
        1_000,
    )
    .unwrap();
    let item = p.item.expect("shared notes are signed");
    let row = store.get::<Note>(p.id).unwrap();
    assert_eq!(row.row.item_id, Some(item.id()));
    assert_eq!(row.row.mentions, ["bob"]);
    assert_eq!(row.row.hashtags, ["rust"]);
    assert_eq!(row.created_ms, 1_000);

    let rec = store.get_item(&item.id()).unwrap().unwrap();
    assert_eq!(rec.record.received_from, None);
    assert_eq!(rec.record.hops_left, DEFAULT_NOTE_MAX_HOPS);
    assert_eq!(rec.record.author, key().peer_id().to_string());
    let back = VerifiedItem::decode(&rec.payload, 0).unwrap();
    assert_eq!(back.audience(), &Audience::Group("family".into()));
    assert_eq!(back.created_ms(), 1_000);
    let Body::Note(n) = back.body() else {
        panic!("a note")
    };
    assert_eq!(
        (n.text.as_str(), n.source.as_str()),
        ("hi @bob #Rust", "cli")
    );
    assert_eq!(n.hashtags, ["rust"]);
}

#[test]
fn a_reply_is_signed_with_what_it_answers_at_once() {
    let (_d, store) = store();
    let answered = ItemId([7; 32]);
    let friends = Sharing::Shared(Audience::Friends);
    let p = post_reply(
        &store,
        &key(),
        "yes, at seven",
        friends.clone(),
        NoteSource::User,
        Some(answered),
        3,
    )
    .unwrap();
    let item = p.item.expect("a shared reply is signed when written");
    let row = store.get::<Note>(p.id).unwrap();
    assert_eq!(row.row.reply_to, Some(answered));
    assert_eq!(row.row.item_id, Some(item.id()), "nothing left to publish");
    let rec = store.get_item(&item.id()).unwrap().unwrap();
    let Body::Note(n) = VerifiedItem::decode(&rec.payload, 0)
        .unwrap()
        .body()
        .clone()
    else {
        panic!("a note")
    };
    assert_eq!(n.reply_to, Some(answered));
    // A plain note answers nothing.
    let plain = post_note(&store, &key(), "hi", friends, NoteSource::User, 4).unwrap();
    let Body::Note(n) = plain.item.unwrap().body().clone() else {
        panic!("a note")
    };
    assert_eq!(n.reply_to, None);
}

#[test]
fn a_direct_message_goes_to_a_friend_only_with_one_hop() {
    let (_d, store) = store();
    let bob = NodeKey::from_seed([6; 32]).peer_id().to_string();
    let to_bob = Sharing::Shared(Audience::Peer(bob.clone()));
    let err = post_note(&store, &key(), "lunch?", to_bob.clone(), NoteSource::Llm, 1).unwrap_err();
    assert!(
        matches!(&err, SharingError::NotAFriend(p) if *p == bob),
        "{err}"
    );
    assert!(err.to_string().contains("not a friend"), "{err}");
    assert_eq!(store.count::<Note>().unwrap(), 0);
    assert_eq!(store.item_count().unwrap(), 0);

    store
        .add_friend(
            &porfiry_storage::Friend {
                peer_id: bob.clone(),
                ..Default::default()
            },
            1,
        )
        .unwrap();
    let p = post_note(&store, &key(), "lunch?", to_bob.clone(), NoteSource::Llm, 2).unwrap();
    let item = p.item.expect("a direct message is signed");
    assert_eq!(item.audience(), &Audience::Peer(bob));
    assert_eq!(item.max_hops(), DIRECT_MESSAGE_MAX_HOPS);
    assert_eq!(store.get::<Note>(p.id).unwrap().row.audience, to_bob);
    let rec = store.get_item(&item.id()).unwrap().unwrap();
    assert_eq!(rec.record.hops_left, DIRECT_MESSAGE_MAX_HOPS);
}

#[test]
fn a_private_note_never_becomes_an_item() {
    let (_d, store) = store();
    let p = post_note(&store, &key(), "mine", Sharing::Private, NoteSource::Cli, 1).unwrap();
    assert!(p.item.is_none());
    assert_eq!(store.item_count().unwrap(), 0);
    assert_eq!(store.get::<Note>(p.id).unwrap().row.item_id, None);
    // Nor does a publishing pass pick it up.
    let mut skipped = HashSet::new();
    assert!(
        publish_pending(&store, &key(), 2, &mut skipped)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn a_note_too_long_for_an_item_is_refused_and_nothing_is_written() {
    let (_d, store) = store();
    let long = "x".repeat(MAX_TEXT_BYTES + 1);
    let err = post_note(
        &store,
        &key(),
        &long,
        Sharing::Shared(Audience::Public),
        NoteSource::Cli,
        1,
    )
    .unwrap_err();
    assert!(matches!(err, SharingError::Item(_)), "{err}");
    assert_eq!(store.count::<Note>().unwrap(), 0);
    assert_eq!(store.item_count().unwrap(), 0);
    // The same text kept private is fine: it never has to fit an item.
    post_note(&store, &key(), &long, Sharing::Private, NoteSource::Cli, 1).unwrap();
}

#[test]
fn a_whitespace_note_is_refused_whole() {
    let (_d, store) = store();
    let err = post_note(
        &store,
        &key(),
        "  ",
        Sharing::Shared(Audience::Public),
        NoteSource::Cli,
        1,
    )
    .unwrap_err();
    assert!(matches!(err, SharingError::Storage(_)), "{err}");
    assert_eq!(
        store.item_count().unwrap(),
        0,
        "the signed item went with the refused row"
    );
}

#[test]
fn publishing_signs_shareable_rows_once_and_leaves_the_rest() {
    let (_d, store) = store();
    let k = key();
    let strategy = |name: &str, shareable| StagnationStrategy {
        name: name.into(),
        cost: 900,
        shareable,
        ..Default::default()
    };
    store.add(&strategy("shared", true), 10).unwrap();
    store.add(&strategy("kept", false), 10).unwrap();
    store
        .add(
            &ThinkingMethod {
                name: "m".into(),
                shareable: true,
                ..Default::default()
            },
            11,
        )
        .unwrap();
    // A note a tool wrote with an audience but did not sign.
    store
        .add(
            &Note {
                text: "from a tool".into(),
                audience: Sharing::Shared(Audience::Friends),
                ..Default::default()
            },
            12,
        )
        .unwrap();
    let target = ItemId([7; 32]);
    store
        .add(
            &Rating {
                target: target.to_string(),
                score: 2,
                shareable: true,
                ..Default::default()
            },
            13,
        )
        .unwrap();
    store
        .add(
            &LlmEntry {
                name: "home".into(),
                endpoint: "https://llm.example.org/v1".into(),
                model: "m".into(),
                config: LlmConfig {
                    api_key_env: Some("HOME_KEY".into()),
                    ..Default::default()
                },
                shareable: true,
                ..Default::default()
            },
            14,
        )
        .unwrap();

    let mut skipped = HashSet::new();
    let items = publish_pending(&store, &k, 100, &mut skipped).unwrap();
    let kinds: Vec<String> = items.iter().map(|i| i.kind().to_string()).collect();
    assert_eq!(items.len(), 5, "{kinds:?}");
    assert!(skipped.is_empty());
    assert_eq!(store.item_count().unwrap(), 5);
    for s in store
        .list::<StagnationStrategy>(&ListQuery::default())
        .unwrap()
    {
        assert_eq!(s.row.item_id.is_some(), s.row.shareable);
    }
    for item in &items {
        match item.body() {
            Body::StagnationStrategy(s) => {
                assert_eq!(s.cost, 255, "cost clamped to the item scale");
                assert_eq!(item.audience(), &KNOWHOW_AUDIENCE);
            }
            Body::Rating(r) => assert_eq!((r.target, r.score), (target, 2)),
            Body::LlmAddress(a) => {
                assert_eq!(item.audience(), &LLM_ADDRESS_AUDIENCE);
                assert_eq!(item.max_hops(), LLM_ADDRESS_MAX_HOPS);
                assert_eq!(a.endpoint, "https://llm.example.org/v1");
                let needle = b"HOME_KEY";
                assert!(
                    !item
                        .envelope_bytes()
                        .windows(needle.len())
                        .any(|w| w == needle)
                );
            }
            Body::Note(n) => {
                assert_eq!(n.text, "from a tool");
                assert_eq!(item.created_ms(), 12, "the row's time, not the pass's");
            }
            _ => {}
        }
    }
    // Nothing is signed twice.
    assert!(
        publish_pending(&store, &k, 101, &mut skipped)
            .unwrap()
            .is_empty()
    );
    assert_eq!(store.item_count().unwrap(), 5);
}

#[test]
fn rows_that_cannot_become_items_are_skipped_once_and_remembered() {
    let (_d, store) = store();
    let bad_target = store
        .add(
            &Rating {
                target: "strategy:3".into(),
                score: 1,
                shareable: true,
                ..Default::default()
            },
            1,
        )
        .unwrap();
    let bad_score = store
        .add(
            &Rating {
                target: ItemId([1; 32]).to_string(),
                score: 9,
                shareable: true,
                ..Default::default()
            },
            1,
        )
        .unwrap();
    let bad_endpoint = store
        .add(
            &LlmEntry {
                name: "x".into(),
                endpoint: "https://user:pw@example.org".into(),
                shareable: true,
                ..Default::default()
            },
            1,
        )
        .unwrap();
    let mut skipped = HashSet::new();
    assert!(
        publish_pending(&store, &key(), 2, &mut skipped)
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        skipped,
        HashSet::from([
            ("ratings", bad_target),
            ("ratings", bad_score),
            ("llm_registry", bad_endpoint)
        ])
    );
    assert_eq!(store.item_count().unwrap(), 0);
    // A good row behind them still goes out.
    store
        .add(
            &ThinkingMethod {
                name: "ok".into(),
                shareable: true,
                ..Default::default()
            },
            3,
        )
        .unwrap();
    assert_eq!(
        publish_pending(&store, &key(), 4, &mut skipped)
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn note_drafts_clamp_priority_and_keep_reply_to() {
    let n = Note {
        text: "t".into(),
        priority: -5,
        reply_to: Some(ItemId([2; 32])),
        ..Default::default()
    };
    let d = note_draft(&n, &Audience::Public, 9);
    let Body::Note(b) = &d.body else { panic!() };
    assert_eq!((b.priority, b.reply_to), (0, Some(ItemId([2; 32]))));
    let n = Note {
        priority: 1_000,
        ..n
    };
    let Body::Note(b) = note_draft(&n, &Audience::Public, 9).body else {
        panic!()
    };
    assert_eq!(b.priority, 255);
}

#[test]
fn a_strategys_mechanism_travels_so_a_friends_core_can_apply_it() {
    let (_d, mine) = self::store();
    let k = key();
    for (name, tags) in [
        ("look back", vec!["mechanism:flashback".to_owned()]),
        ("no mechanism", vec![]),
    ] {
        mine.add(
            &StagnationStrategy {
                name: name.into(),
                tags,
                shareable: true,
                ..Default::default()
            },
            10,
        )
        .unwrap();
    }
    let mut skipped = HashSet::new();
    let items = publish_pending(&mine, &k, 100, &mut skipped).unwrap();
    let mechanisms: Vec<Option<String>> = items
        .iter()
        .filter_map(|i| match i.body() {
            Body::StagnationStrategy(s) => Some(s.mechanism.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(mechanisms.len(), 2);
    assert!(mechanisms.contains(&Some("flashback".into())));
    assert!(mechanisms.contains(&None));

    // The friend's copy carries the tag its core chooses strategies by.
    let (_d2, friend) = self::store();
    crate::sharing::merge::merge_items(&friend, &items).unwrap();
    let rows = friend
        .list::<StagnationStrategy>(&ListQuery::default())
        .unwrap();
    let tags = |n: &str| {
        rows.iter()
            .find(|r| r.row.name == n)
            .map(|r| r.row.tags.clone())
            .unwrap()
    };
    assert_eq!(tags("look back"), ["mechanism:flashback"]);
    assert!(tags("no mechanism").is_empty());
}

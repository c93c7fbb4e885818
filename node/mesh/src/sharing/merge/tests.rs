//! Tests of `super`: friends' items merged into a real SQLite file.

use porfiry_protocol::{
    Audience, Body, ItemId, LlmAddress, LlmLimits, NodeKey, PayloadDraft, Rating, Retraction,
    VerifiedItem, sign,
};
use porfiry_storage::{DB_FILE_NAME, ListQuery, LlmEntry, Note, NoteSource, Sharing, Store};

use super::*;

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::create(dir.path().join(DB_FILE_NAME)).unwrap();
    (dir, store)
}

fn item(body: Body, audience: Audience) -> VerifiedItem {
    sign(
        &NodeKey::from_seed([8; 32]),
        &PayloadDraft {
            created_ms: 4_000,
            audience,
            max_hops: 3,
            expires_ms: None,
            replaces: None,
            body,
        },
    )
    .unwrap()
}

fn note(text: &str, source: &str) -> Body {
    Body::Note(porfiry_protocol::Note {
        text: text.into(),
        topic: Some("t".into()),
        mentions: vec!["bob".into()],
        hashtags: vec!["x".into()],
        priority: 3,
        source: source.into(),
        reply_to: None,
    })
}

#[test]
fn a_note_is_merged_once_with_its_origin_and_forgotten_on_retraction() {
    let (_d, store) = store();
    let it = item(note("hello", "llm"), Audience::Friends);
    let id = merge_item(&store, &it).unwrap().unwrap();
    assert_eq!(
        merge_item(&store, &it).unwrap(),
        Some(id),
        "the same row again"
    );
    let n = store.get::<Note>(id).unwrap();
    assert_eq!(n.created_ms, 4_000, "the author's time");
    assert_eq!(n.row.origin_author.as_deref(), Some(it.author_peer_id()));
    assert_eq!(n.row.origin_item_id, Some(it.id()));
    assert_eq!(n.row.audience, Sharing::Shared(Audience::Friends));
    assert_eq!(n.row.source, NoteSource::Llm);
    assert_eq!((n.row.priority, n.row.topic.as_deref()), (3, Some("t")));
    assert_eq!(
        (n.row.mentions.clone(), n.row.hashtags.clone()),
        (vec!["bob".to_string()], vec!["x".to_string()])
    );
    assert!(!n.row.read && !n.row.hidden && n.row.tags.is_empty() && n.row.item_id.is_none());

    assert!(forget_merged(&store, &it.id()).unwrap());
    assert_eq!(store.count::<Note>().unwrap(), 0);
    assert!(!forget_merged(&store, &it.id()).unwrap());
}

#[test]
fn an_unknown_source_label_reads_as_user_and_a_blank_note_is_refused() {
    let (_d, store) = store();
    let id = merge_item(&store, &item(note("x", "some-bot"), Audience::Public))
        .unwrap()
        .unwrap();
    assert_eq!(store.get::<Note>(id).unwrap().row.source, NoteSource::User);
    let err = merge_item(&store, &item(note("   ", "user"), Audience::Public)).unwrap_err();
    assert!(err.to_string().contains("empty"), "{err}");
}

#[test]
fn ratings_and_llm_addresses_get_local_rows_and_retractions_none() {
    let (_d, store) = store();
    let target = ItemId([4; 32]);
    let r = item(
        Body::Rating(Rating {
            target,
            score: -2,
            comment: "meh".into(),
        }),
        Audience::Public,
    );
    let id = merge_item(&store, &r).unwrap().unwrap();
    let row = store.get::<porfiry_storage::Rating>(id).unwrap().row;
    assert_eq!(
        (row.target, row.score, row.shareable),
        (target.to_string(), -2, false)
    );

    let a = item(
        Body::LlmAddress(LlmAddress {
            name: "home".into(),
            endpoint: "https://llm.example.org".into(),
            model: "m".into(),
            features: vec!["tools".into()],
            limits: LlmLimits {
                context_tokens: Some(8192),
                max_output_tokens: Some(256),
                requests_per_minute: None,
            },
        }),
        Audience::Friends,
    );
    merge_item(&store, &a).unwrap();
    let l = &store.list::<LlmEntry>(&ListQuery::default()).unwrap()[0].row;
    assert_eq!(l.name, format!("home@{}", a.author_peer_id()));
    assert_eq!(l.config.max_tokens, Some(256));
    assert_eq!(l.config.other["context_tokens"], 8192);
    assert!(!l.is_main && !l.shareable && l.config.api_key_env.is_none());

    let t = item(Body::Retraction(Retraction { target }), Audience::Public);
    assert_eq!(merge_item(&store, &t).unwrap(), None);
}

#[test]
fn a_batch_merges_mixed_kinds_in_order_and_a_refused_row_costs_no_other() {
    let (_d, store) = store();
    let first = item(note("first", "user"), Audience::Public);
    let blank = item(note("   ", "user"), Audience::Public);
    let rating = item(
        Body::Rating(Rating {
            target: ItemId([5; 32]),
            score: 1,
            comment: String::new(),
        }),
        Audience::Public,
    );
    let retraction = item(
        Body::Retraction(Retraction { target: first.id() }),
        Audience::Public,
    );
    let second = item(note("second", "user"), Audience::Friends);
    let batch = [
        first.clone(),
        blank,
        rating.clone(),
        retraction,
        second.clone(),
        first.clone(),
    ];
    let out = merge_items(&store, &batch).unwrap();
    assert_eq!(out.len(), batch.len(), "one answer per item");
    let id_first = out[0].as_ref().unwrap().unwrap();
    assert!(out[1].is_err(), "the blank note is refused alone");
    let id_rating = out[2].as_ref().unwrap().unwrap();
    assert_eq!(*out[3].as_ref().unwrap(), None, "a retraction has no row");
    let id_second = out[4].as_ref().unwrap().unwrap();
    assert_eq!(
        *out[5].as_ref().unwrap(),
        Some(id_first),
        "repeated in the batch: the same row"
    );
    assert_eq!(store.count::<Note>().unwrap(), 2);
    assert_eq!(
        store.get::<Note>(id_second).unwrap().row.origin_item_id,
        Some(second.id())
    );
    assert_eq!(
        store
            .get::<porfiry_storage::Rating>(id_rating)
            .unwrap()
            .row
            .origin_item_id,
        Some(rating.id())
    );
    // Merging the whole batch again adds nothing.
    let again = merge_items(&store, &batch).unwrap();
    assert_eq!(*again[0].as_ref().unwrap(), Some(id_first));
    assert_eq!(store.count::<Note>().unwrap(), 2);
    assert!(merge_items(&store, &[]).unwrap().is_empty());
}

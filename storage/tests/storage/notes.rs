//! The notes table: generic CRUD through `Note`, plus read marks, tags,
//! filters, counts, cleanup and merging notes from friends.

use porfiry_protocol::Audience;
use porfiry_protocol::ItemId;
use porfiry_storage::{
    ListQuery, Merged, Note, NoteFilter, NoteSource, Sharing, StorageError, Stored,
    limits::{MAX_LIST_LIMIT, MAX_TEXT_BYTES},
};

use crate::temp_store;

fn note(text: &str) -> Note {
    Note {
        text: text.into(),
        ..Default::default()
    }
}

fn texts(rows: &[Stored<Note>]) -> Vec<&str> {
    rows.iter().map(|n| n.row.text.as_str()).collect()
}

#[test]
fn add_get_update_delete_round_trip_every_field() {
    let (_dir, store) = temp_store();
    let full = Note {
        text: "Привет, #mesh @bob".into(),
        topic: Some("greeting".into()),
        mentions: vec!["bob".into()],
        hashtags: vec!["mesh".into()],
        source: NoteSource::Llm,
        priority: 3,
        read: true,
        hidden: true,
        tags: vec!["idea".into(), "важно".into()],
        llm_id: Some("qwen".into()),
        reply_to: Some(ItemId([3; 32])),
        audience: Sharing::Shared(Audience::Group("family".into())),
        item_id: Some(ItemId([9; 32])),
        origin_author: None,
        origin_item_id: None,
    };
    let id = store.add(&full, 1_000).unwrap();
    let got = store.get::<Note>(id).unwrap();
    assert_eq!((got.id, got.created_ms, got.updated_ms), (id, 1_000, 1_000));
    assert_eq!(got.row, full);

    let mut changed = full.clone();
    changed.text = "edited".into();
    changed.audience = Sharing::Private;
    store.update(id, &changed, 2_000).unwrap();
    let got = store.get::<Note>(id).unwrap();
    assert_eq!((got.created_ms, got.updated_ms), (1_000, 2_000));
    assert_eq!(got.row, changed);

    store.delete::<Note>(id).unwrap();
    assert!(matches!(
        store.get::<Note>(id),
        Err(StorageError::NotFound { table: "notes", .. })
    ));
}

#[test]
fn missing_ids_are_not_found_everywhere() {
    let (_dir, store) = temp_store();
    let nf = |r: Result<(), StorageError>| {
        assert!(matches!(r, Err(StorageError::NotFound { .. })), "{r:?}")
    };
    nf(store.update(42, &note("x"), 1));
    nf(store.delete::<Note>(42));
    nf(store.notes_mark_read(42, true, 1));
    nf(store.notes_set_hidden(42, true, 1));
    nf(store.set_tags::<Note>(42, &["a".into()], 1));
    nf(store.mark_published::<Note>(42, &ItemId([1; 32]), 1));
}

#[test]
fn bad_input_is_refused_and_nothing_is_written() {
    let (_dir, store) = temp_store();
    assert!(matches!(
        store.add(&note("  "), 1),
        Err(StorageError::Invalid { .. })
    ));
    let huge = note(&"x".repeat(MAX_TEXT_BYTES + 1));
    match store.add(&huge, 1) {
        Err(StorageError::TooLong {
            table: "notes",
            column: "text",
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
    let bad_tags = Note {
        tags: vec!["a".into(), "a".into()],
        ..note("x")
    };
    assert!(matches!(
        store.add(&bad_tags, 1),
        Err(StorageError::Invalid { .. })
    ));
    let half_origin = Note {
        origin_author: Some("12D3KooWbob".into()),
        ..note("x")
    };
    assert!(matches!(
        store.add(&half_origin, 1),
        Err(StorageError::Invalid { .. })
    ));
    let bad_group = Note {
        audience: Sharing::Shared(Audience::Group("Bad Group".into())),
        ..note("x")
    };
    assert!(matches!(
        store.add(&bad_group, 1),
        Err(StorageError::Invalid { .. })
    ));
    let bad_peer = Note {
        audience: Sharing::Shared(Audience::Peer("bob".into())),
        ..note("x")
    };
    match store.add(&bad_peer, 1) {
        Err(e @ StorageError::Invalid { .. }) => {
            assert!(e.to_string().contains("bad peer id"), "{e}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(store.count::<Note>().unwrap(), 0);

    let id = store.add(&note("ok"), 1).unwrap();
    assert!(store.set_tags::<Note>(id, &[" padded".into()], 2).is_err());
    assert!(store.update(id, &note(""), 2).is_err());
    assert_eq!(store.get::<Note>(id).unwrap().row, note("ok"));
}

#[test]
fn check_constraints_back_the_types() {
    let (_dir, store) = temp_store();
    let raw = crate::raw(&store);
    for sql in [
        "INSERT INTO notes (text, source, created, updated) VALUES ('x', 'robot', 1, 1)",
        "INSERT INTO notes (text, audience, created, updated) VALUES ('x', 'everyone', 1, 1)",
        "INSERT INTO notes (text, audience, created, updated) VALUES ('x', 'peer:', 1, 1)",
        "INSERT INTO notes (text, tags, created, updated) VALUES ('x', 'not json', 1, 1)",
        "INSERT INTO notes (text, read, created, updated) VALUES ('x', 2, 1, 1)",
    ] {
        assert!(raw.execute(sql, []).is_err(), "accepted: {sql}");
    }
}

#[test]
fn hand_edited_bad_values_are_reported_with_their_column() {
    let (_dir, store) = temp_store();
    let id = store.add(&note("x"), 1).unwrap();
    // json_valid accepts an object where a list of strings belongs.
    crate::raw(&store)
        .execute("UPDATE notes SET hashtags = '{\"a\":1}' WHERE id = ?", [id])
        .unwrap();
    match store.get::<Note>(id) {
        Err(StorageError::BadColumn {
            table: "notes",
            column,
            ..
        }) => assert_eq!(column, "hashtags"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn readmark_tags_and_hidden() {
    let (_dir, store) = temp_store();
    let id = store.add(&note("x"), 1).unwrap();
    store.notes_mark_read(id, true, 2).unwrap();
    store
        .set_tags::<Note>(id, &["todo".into(), "mesh".into()], 3)
        .unwrap();
    store.notes_set_hidden(id, true, 4).unwrap();
    let n = store.get::<Note>(id).unwrap();
    assert!(n.row.read && n.row.hidden);
    assert_eq!(n.row.tags, ["todo", "mesh"]);
    assert_eq!(n.updated_ms, 4);
    store.notes_mark_read(id, false, 5).unwrap();
    assert!(!store.get::<Note>(id).unwrap().row.read);
}

#[test]
fn recent_n_is_newest_first() {
    let (_dir, store) = temp_store();
    for i in 0..10u64 {
        store.add(&note(&format!("n{i}")), 100 + i).unwrap();
    }
    assert_eq!(texts(&store.notes_recent(3).unwrap()), ["n9", "n8", "n7"]);
    assert!(store.notes_recent(0).is_err());
    assert!(store.notes_recent(MAX_LIST_LIMIT + 1).is_err());
    let page2 = store
        .list::<Note>(&ListQuery {
            limit: Some(3),
            offset: 3,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(texts(&page2), ["n6", "n5", "n4"]);
    let oldest = store
        .list::<Note>(&ListQuery {
            limit: Some(2),
            oldest_first: true,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(texts(&oldest), ["n0", "n1"]);
}

#[test]
fn filters_select_exactly_the_matching_notes() {
    let (_dir, store) = temp_store();
    let rows = [
        Note {
            source: NoteSource::User,
            priority: 0,
            hashtags: vec!["ai".into()],
            ..note("plain user")
        },
        Note {
            source: NoteSource::Llm,
            priority: 5,
            read: true,
            tags: vec!["idea".into()],
            ..note("llm idea")
        },
        Note {
            source: NoteSource::System,
            priority: 9,
            hidden: true,
            mentions: vec!["bob".into()],
            ..note("ALERT 100%")
        },
        Note {
            origin_author: Some("12D3KooWbob".into()),
            origin_item_id: Some(ItemId([7; 32])),
            audience: Sharing::Shared(Audience::Public),
            ..note("from bob")
        },
    ];
    for (i, r) in rows.iter().enumerate() {
        store.add(r, 10 * (i as u64 + 1)).unwrap();
    }
    let q = |f: NoteFilter| {
        let mut v: Vec<String> = store
            .notes_filter(&f)
            .unwrap()
            .into_iter()
            .map(|n| n.row.text)
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        q(NoteFilter {
            source: Some(NoteSource::Llm),
            ..Default::default()
        }),
        ["llm idea"]
    );
    assert_eq!(
        q(NoteFilter {
            min_priority: Some(5),
            ..Default::default()
        }),
        ["ALERT 100%", "llm idea"]
    );
    assert_eq!(
        q(NoteFilter {
            read: Some(false),
            hidden: Some(false),
            ..Default::default()
        }),
        ["from bob", "plain user"]
    );
    assert_eq!(
        q(NoteFilter {
            tag: Some("idea".into()),
            ..Default::default()
        }),
        ["llm idea"]
    );
    assert_eq!(
        q(NoteFilter {
            hashtag: Some("ai".into()),
            ..Default::default()
        }),
        ["plain user"]
    );
    assert_eq!(
        q(NoteFilter {
            mention: Some("bob".into()),
            ..Default::default()
        }),
        ["ALERT 100%"]
    );
    assert_eq!(
        q(NoteFilter {
            text: Some("alert".into()),
            ..Default::default()
        }),
        ["ALERT 100%"]
    );
    // LIKE wildcards in the search text are literal.
    assert_eq!(
        q(NoteFilter {
            text: Some("0%".into()),
            ..Default::default()
        }),
        ["ALERT 100%"]
    );
    assert!(
        q(NoteFilter {
            text: Some("_l".into()),
            ..Default::default()
        })
        .is_empty()
    );
    assert_eq!(
        q(NoteFilter {
            from_mesh: Some(true),
            ..Default::default()
        }),
        ["from bob"]
    );
    assert_eq!(
        q(NoteFilter {
            from_mesh: Some(false),
            ..Default::default()
        })
        .len(),
        3
    );
    assert_eq!(
        q(NoteFilter {
            author: Some("12D3KooWbob".into()),
            ..Default::default()
        }),
        ["from bob"]
    );
    assert_eq!(
        q(NoteFilter {
            since_ms: Some(30),
            ..Default::default()
        }),
        ["ALERT 100%", "from bob"]
    );
    // Generic list filters work on notes as well; pins do not exist here.
    assert_eq!(
        store
            .list::<Note>(&ListQuery {
                tag: Some("idea".into()),
                ..Default::default()
            })
            .unwrap()
            .len(),
        1
    );
    assert!(matches!(
        store.list::<Note>(&ListQuery {
            pinned: Some(true),
            ..Default::default()
        }),
        Err(StorageError::Invalid { .. })
    ));
}

#[test]
fn counts_by_priority_and_cleanup() {
    let (_dir, store) = temp_store();
    for (p, read, t) in [
        (0, false, 1),
        (0, true, 2),
        (2, false, 3),
        (2, false, 4),
        (5, true, 5),
    ] {
        store
            .add(
                &Note {
                    priority: p,
                    read,
                    ..note("x")
                },
                t,
            )
            .unwrap();
    }
    assert_eq!(
        store.notes_count_by_priority(false, None).unwrap(),
        [(5, 1), (2, 2), (0, 2)]
    );
    assert_eq!(
        store.notes_count_by_priority(true, None).unwrap(),
        [(2, 2), (0, 1)]
    );
    assert_eq!(
        store.notes_cleanup(5, true).unwrap(),
        1,
        "only the read note before t=5"
    );
    assert_eq!(store.notes_cleanup(4, false).unwrap(), 2);
    assert_eq!(store.count::<Note>().unwrap(), 2);
}

#[test]
fn merging_a_friends_note_is_idempotent_and_retractable() {
    let (_dir, store) = temp_store();
    let merged = Note {
        origin_author: Some("12D3KooWbob".into()),
        origin_item_id: Some(ItemId([0xAB; 32])),
        audience: Sharing::Shared(Audience::Public),
        ..note("hi from bob")
    };
    let first = store.merge_from_item(&merged, 777).unwrap();
    assert!(matches!(first, Merged::Added(_)));
    assert_eq!(
        store.merge_from_item(&merged, 777).unwrap(),
        Merged::Existing(first.id())
    );
    assert_eq!(store.count::<Note>().unwrap(), 1);
    assert_eq!(store.get::<Note>(first.id()).unwrap().created_ms, 777);
    assert_eq!(
        store
            .find_by_item::<Note>(&ItemId([0xAB; 32]))
            .unwrap()
            .unwrap()
            .id,
        first.id()
    );
    assert!(matches!(
        store.merge_from_item(&note("local"), 1),
        Err(StorageError::Invalid { .. })
    ));

    assert!(store.delete_merged::<Note>(&ItemId([0xAB; 32])).unwrap());
    assert!(!store.delete_merged::<Note>(&ItemId([0xAB; 32])).unwrap());
    assert_eq!(store.count::<Note>().unwrap(), 0);
}

#[test]
fn notes_waiting_to_be_published() {
    let (_dir, store) = temp_store();
    let private = store.add(&note("mine"), 1).unwrap();
    let public = store
        .add(
            &Note {
                audience: Sharing::Shared(Audience::Public),
                ..note("for all")
            },
            2,
        )
        .unwrap();
    let merged = Note {
        origin_author: Some("12D3KooWbob".into()),
        origin_item_id: Some(ItemId([1; 32])),
        audience: Sharing::Shared(Audience::Public),
        ..note("bob's")
    };
    store.merge_from_item(&merged, 3).unwrap();
    let waiting: Vec<i64> = store
        .to_publish::<Note>(None)
        .unwrap()
        .iter()
        .map(|n| n.id)
        .collect();
    assert_eq!(waiting, [public]);
    store
        .mark_published::<Note>(public, &ItemId([5; 32]), 4)
        .unwrap();
    assert!(store.to_publish::<Note>(None).unwrap().is_empty());
    assert_eq!(
        store
            .find_by_item::<Note>(&ItemId([5; 32]))
            .unwrap()
            .unwrap()
            .id,
        public
    );
    assert!(
        store
            .find_by_item::<Note>(&ItemId([6; 32]))
            .unwrap()
            .is_none()
    );
    // The same item id cannot mark two rows.
    assert!(matches!(
        store.mark_published::<Note>(private, &ItemId([5; 32]), 5),
        Err(StorageError::Duplicate { .. })
    ));
}

#[test]
fn except_local_leaves_out_this_nodes_own_notes_of_a_source_not_a_friends() {
    let (_dir, store) = temp_store();
    let mine = |text: &str, priority| Note {
        source: NoteSource::Llm,
        priority,
        ..note(text)
    };
    store.add(&mine("my thought", 0), 1).unwrap();
    store.add(&mine("my urgent plan", 2), 2).unwrap();
    store.add(&note("the user's"), 3).unwrap();
    store
        .add(
            &Note {
                origin_author: Some("12D3KooWbob".into()),
                origin_item_id: Some(ItemId([9; 32])),
                audience: Sharing::Shared(Audience::Public),
                ..mine("bob's core", 2)
            },
            4,
        )
        .unwrap();
    let texts: Vec<String> = store
        .notes_filter(&NoteFilter {
            except_local: Some(NoteSource::Llm),
            oldest_first: true,
            ..Default::default()
        })
        .unwrap()
        .into_iter()
        .map(|n| n.row.text)
        .collect();
    assert_eq!(texts, ["the user's", "bob's core"]);
    assert_eq!(
        store
            .notes_count_by_priority(true, Some(NoteSource::Llm))
            .unwrap(),
        [(2, 1), (0, 1)]
    );
    assert_eq!(
        store.notes_count_by_priority(true, None).unwrap(),
        [(2, 2), (0, 2)]
    );
}

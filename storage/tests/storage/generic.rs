//! The shared mechanism's rules on every table: required fields, foreign
//! keys, unique columns, pins, tags, search and tag statistics.

use porfiry_storage::*;

use crate::{s, sample_llm, tags, temp_store};

#[test]
fn required_fields_and_foreign_keys_are_enforced() {
    let (_dir, store) = temp_store();
    let invalid = |r: Result<i64, StorageError>| {
        assert!(matches!(r, Err(StorageError::Invalid { .. })), "{r:?}")
    };
    invalid(store.add(&DiaryEntry::default(), 1));
    invalid(store.add(&Concept::default(), 1));
    invalid(store.add(&Goal::default(), 1));
    invalid(store.add(&Task::default(), 1));
    invalid(store.add(&MemoryEntry::default(), 1));
    invalid(store.add(&ProcessEntry::default(), 1));
    invalid(store.add(&LlmEntry::default(), 1));
    invalid(store.add(&StagnationStrategy::default(), 1));
    invalid(store.add(&ThinkingMethod::default(), 1));
    invalid(store.add(&Rating::default(), 1));
    invalid(store.add(&Identity::default(), 1));
    invalid(store.add(&SystemPrompt::default(), 1));
    invalid(store.add(&User::default(), 1));
    invalid(store.add(&UserGroup::default(), 1));
    invalid(store.add(&ExternalService::default(), 1));
    invalid(store.add(&AgentScript::default(), 1));
    invalid(store.add(&AgentTable::default(), 1));
    let fk = |r: Result<i64, StorageError>| {
        assert!(matches!(r, Err(StorageError::ForeignKey { .. })), "{r:?}")
    };
    fk(store.add(
        &Task {
            goal_id: Some(99),
            title: s("t"),
            ..Default::default()
        },
        1,
    ));
    fk(store.add(
        &ExternalAccount {
            service_id: 99,
            login: s("x"),
            ..Default::default()
        },
        1,
    ));
    fk(store.add(
        &TickRecord {
            tick: 1,
            response_id: Some(99),
            ..Default::default()
        },
        1,
    ));
    let c = store
        .add(
            &Concept {
                name: s("a"),
                ..Default::default()
            },
            1,
        )
        .unwrap();
    fk(store.add(
        &Link {
            from_concept: c,
            to_concept: 99,
            relation: s("r"),
            ..Default::default()
        },
        1,
    ));
    assert_eq!(store.count::<Link>().unwrap(), 0);
}

#[test]
fn unique_columns_refuse_duplicates() {
    let (_dir, store) = temp_store();
    let dup = |r: Result<i64, StorageError>| {
        assert!(matches!(r, Err(StorageError::Duplicate { .. })), "{r:?}")
    };
    store
        .add(
            &Concept {
                name: s("x"),
                ..Default::default()
            },
            1,
        )
        .unwrap();
    dup(store.add(
        &Concept {
            name: s("x"),
            ..Default::default()
        },
        1,
    ));
    store.add(&sample_llm("a"), 1).unwrap();
    dup(store.add(&sample_llm("a"), 1));
    let p = SystemPrompt {
        name: s("core"),
        language: s("en"),
        content: s("x"),
    };
    store.add(&p, 1).unwrap();
    dup(store.add(&p, 1));
    let sc = AgentScript {
        name: s("a"),
        version: s("1"),
        language: s("sh"),
        code: s("x"),
        ..Default::default()
    };
    store.add(&sc, 1).unwrap();
    dup(store.add(&sc, 1));
    store
        .add(
            &User {
                did: Some(s("did:x")),
                ..Default::default()
            },
            1,
        )
        .unwrap();
    dup(store.add(
        &User {
            did: Some(s("did:x")),
            ..Default::default()
        },
        1,
    ));
}

#[test]
fn pins_tags_search_and_tag_filters() {
    let (_dir, store) = temp_store();
    let a = store
        .add(
            &DiaryEntry {
                text: s("about Mesh sync"),
                tags: tags(&["mesh"]),
                ..Default::default()
            },
            1,
        )
        .unwrap();
    let b = store
        .add(
            &DiaryEntry {
                text: s("about cooking"),
                ..Default::default()
            },
            2,
        )
        .unwrap();
    store.set_pinned::<DiaryEntry>(b, true, 3).unwrap();
    let pinned = store
        .list::<DiaryEntry>(&ListQuery {
            pinned: Some(true),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(pinned.iter().map(|r| r.id).collect::<Vec<_>>(), [b]);
    store.set_pinned::<DiaryEntry>(b, false, 4).unwrap();
    assert!(
        store
            .list::<DiaryEntry>(&ListQuery {
                pinned: Some(true),
                ..Default::default()
            })
            .unwrap()
            .is_empty()
    );
    assert!(matches!(
        store.set_pinned::<DiaryEntry>(99, true, 4),
        Err(StorageError::NotFound { .. })
    ));

    let found = store
        .list::<DiaryEntry>(&ListQuery {
            text: Some(s("mesh")),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(
        found.iter().map(|r| r.id).collect::<Vec<_>>(),
        [a],
        "search is case-insensitive"
    );
    store
        .set_tags::<DiaryEntry>(b, &tags(&["food", "mesh"]), 5)
        .unwrap();
    let tagged = store
        .list::<DiaryEntry>(&ListQuery {
            tag: Some(s("mesh")),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(tagged.len(), 2);
    let since = store
        .list::<DiaryEntry>(&ListQuery {
            since_ms: Some(2),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(since.iter().map(|r| r.id).collect::<Vec<_>>(), [b]);

    // Filters a table does not have are refused, not ignored.
    assert!(
        store
            .list::<Goal>(&ListQuery {
                pinned: Some(true),
                ..Default::default()
            })
            .is_err()
    );
    assert!(
        store
            .list::<UserGroup>(&ListQuery {
                tag: Some(s("x")),
                ..Default::default()
            })
            .is_err()
    );
    assert!(
        store
            .list::<TickRecord>(&ListQuery {
                text: Some(s("x")),
                ..Default::default()
            })
            .is_ok()
    );
}

#[test]
fn tag_stats_count_across_tables() {
    let (_dir, store) = temp_store();
    store
        .add(
            &DiaryEntry {
                text: s("d"),
                tags: tags(&["mesh", "ai"]),
                ..Default::default()
            },
            1,
        )
        .unwrap();
    store
        .add(
            &Concept {
                name: s("c"),
                tags: tags(&["mesh"]),
                ..Default::default()
            },
            1,
        )
        .unwrap();
    store
        .add(
            &Goal {
                title: s("g"),
                tags: tags(&["ai", "mesh"]),
                ..Default::default()
            },
            1,
        )
        .unwrap();
    assert_eq!(
        store.tag_stats(TagSource::ALL).unwrap(),
        [(s("mesh"), 3), (s("ai"), 2)]
    );
    assert_eq!(
        store.tag_stats(&[TagSource::Diary]).unwrap(),
        [(s("ai"), 1), (s("mesh"), 1)]
    );
    assert!(store.tag_stats(&[TagSource::Tasks]).unwrap().is_empty());
    assert!(store.tag_stats(&[]).is_err());
    assert_eq!(
        "concepts".parse::<TagSource>().unwrap(),
        TagSource::Concepts
    );
}

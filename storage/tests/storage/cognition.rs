//! Tables of the cognitive core's own operations: the semantic graph,
//! goals and tasks, recent responses, process_log and agent_log.

use std::collections::BTreeMap;

use porfiry_storage::*;

use crate::{s, tags, temp_store};

#[test]
fn graph_links_follow_their_concepts() {
    let (_dir, store) = temp_store();
    let a = store
        .add(
            &Concept {
                name: s("agent"),
                ..Default::default()
            },
            1,
        )
        .unwrap();
    let b = store
        .add(
            &Concept {
                name: s("mesh"),
                ..Default::default()
            },
            1,
        )
        .unwrap();
    let c = store
        .add(
            &Concept {
                name: s("llm"),
                ..Default::default()
            },
            1,
        )
        .unwrap();
    store
        .add(
            &Link {
                from_concept: a,
                to_concept: b,
                relation: s("part_of"),
                weight: 1.0,
                ..Default::default()
            },
            2,
        )
        .unwrap();
    store
        .add(
            &Link {
                from_concept: c,
                to_concept: a,
                relation: s("used_by"),
                weight: 1.0,
                ..Default::default()
            },
            3,
        )
        .unwrap();
    assert_eq!(store.links_of(a).unwrap().len(), 2);
    assert_eq!(store.concept_by_name("mesh").unwrap().unwrap().id, b);
    assert!(store.concept_by_name("nope").unwrap().is_none());
    store.delete::<Concept>(a).unwrap();
    assert_eq!(
        store.count::<Link>().unwrap(),
        0,
        "links go with their concept"
    );
    assert!(
        store
            .add(
                &Link {
                    from_concept: b,
                    to_concept: c,
                    relation: s(" "),
                    weight: 1.0,
                    ..Default::default()
                },
                4
            )
            .is_err()
    );
}

#[test]
fn pursued_goals_are_filtered_before_the_limit() {
    let (_dir, store) = temp_store();
    let goal = |title: &str, status| Goal {
        title: s(title),
        status,
        ..Default::default()
    };
    let open = store.add(&goal("old open", Progress::Open), 1).unwrap();
    let working = store
        .add(&goal("working", Progress::InProgress), 2)
        .unwrap();
    for i in 0..30 {
        let status = if i % 2 == 0 {
            Progress::Done
        } else {
            Progress::Cancelled
        };
        store.add(&goal("finished", status), 10 + i).unwrap();
    }
    let newest = store.add(&goal("new open", Progress::Open), 100).unwrap();
    let ids = |limit| -> Vec<i64> {
        store
            .goals_pursued(limit)
            .unwrap()
            .iter()
            .map(|g| g.id)
            .collect()
    };
    assert_eq!(
        ids(5),
        [newest, working, open],
        "newest first, none finished"
    );
    assert_eq!(ids(2), [newest, working], "bounded by the limit");
    assert!(store.goals_pursued(0).is_err(), "a list's limit rules");
}

#[test]
fn goals_tasks_status_and_counts() {
    let (_dir, store) = temp_store();
    let g = store
        .add(
            &Goal {
                title: s("ship"),
                ..Default::default()
            },
            1,
        )
        .unwrap();
    let t1 = store
        .add(
            &Task {
                goal_id: Some(g),
                title: s("code"),
                ..Default::default()
            },
            2,
        )
        .unwrap();
    store
        .add(
            &Task {
                goal_id: Some(g),
                title: s("test"),
                ..Default::default()
            },
            3,
        )
        .unwrap();
    store
        .add(
            &Task {
                title: s("loose"),
                ..Default::default()
            },
            4,
        )
        .unwrap();
    store.set_task_status(t1, Progress::Done, 5).unwrap();
    store.set_goal_status(g, Progress::InProgress, 5).unwrap();
    assert_eq!(
        store.get::<Goal>(g).unwrap().row.status,
        Progress::InProgress
    );
    assert_eq!(
        store
            .tasks_of_goal(g)
            .unwrap()
            .iter()
            .map(|t| t.row.title.as_str())
            .collect::<Vec<_>>(),
        ["code", "test"]
    );
    assert_eq!(
        store.task_counts().unwrap(),
        [
            (Progress::Open, 2),
            (Progress::InProgress, 0),
            (Progress::Done, 1),
            (Progress::Cancelled, 0)
        ]
    );
    store.delete::<Goal>(g).unwrap();
    assert_eq!(
        store.get::<Task>(t1).unwrap().row.goal_id,
        None,
        "tasks outlive their goal"
    );
    assert!(matches!(
        store.set_task_status(99, Progress::Done, 6),
        Err(StorageError::NotFound { .. })
    ));
}

#[test]
fn recent_responses_concentration_and_cleanup() {
    let (_dir, store) = temp_store();
    let mk = |content: &str, tg: &[&str], emo: &[(&str, u8)]| RecentResponse {
        content: s(content),
        tags: tags(tg),
        emotions: emo.iter().map(|(e, n)| format!("{e}:{n}")).collect(),
        ..Default::default()
    };
    store.add(&mk("r1", &["ai"], &[("joy", 2)]), 1).unwrap();
    store
        .add(&mk("r2", &["ai", "mesh"], &[("joy", 5)]), 2)
        .unwrap();
    store
        .add(&mk("r3", &["mesh"], &[("anxiety", 3)]), 3)
        .unwrap();
    let contents = |c: Concentration| -> Vec<String> {
        store
            .responses_concentrated(&c)
            .unwrap()
            .into_iter()
            .map(|r| r.row.content)
            .collect()
    };
    assert_eq!(
        store
            .responses_recent(2)
            .unwrap()
            .iter()
            .map(|r| r.row.content.as_str())
            .collect::<Vec<_>>(),
        ["r3", "r2"]
    );
    assert_eq!(
        contents(Concentration {
            tags: tags(&["ai", "mesh"]),
            ..Default::default()
        }),
        ["r2"]
    );
    assert_eq!(
        contents(Concentration {
            tags: tags(&["ai", "mesh"]),
            mode: MatchMode::Any,
            ..Default::default()
        }),
        ["r3", "r2", "r1"]
    );
    assert_eq!(
        contents(Concentration {
            emotions: vec![(s("joy"), 4)],
            ..Default::default()
        }),
        ["r2"]
    );
    assert_eq!(
        contents(Concentration {
            tags: tags(&["ai"]),
            emotions: vec![(s("anxiety"), 2)],
            mode: MatchMode::Any,
            limit: Some(2)
        }),
        ["r3", "r2"]
    );
    assert_eq!(contents(Concentration::default()).len(), 3);
    assert_eq!(store.responses_keep_latest(1).unwrap(), 2);
    assert_eq!(store.responses_recent(10).unwrap()[0].row.content, "r3");

    let bad = |r: RecentResponse| {
        assert!(
            matches!(store.add(&r, 9), Err(StorageError::Invalid { .. })),
            "{r:?}"
        )
    };
    bad(mk("x", &[], &[("joy", 0)]));
    bad(mk("x", &[], &[("joy", 6)]));
    bad(RecentResponse {
        validators: vec![ValidatorVote {
            llm: s("a"),
            rating: 4,
            ..Default::default()
        }],
        ..mk("x", &[], &[])
    });
    bad(RecentResponse {
        distribution: BTreeMap::from([(s("-4"), 1)]),
        ..mk("x", &[], &[])
    });
    bad(RecentResponse {
        rating: f64::NAN,
        ..mk("x", &[], &[])
    });
}

#[test]
fn the_last_reply_outlives_a_long_run_of_reflex_records_and_their_cleanup() {
    let (_dir, store) = temp_store();
    let reply = |content: &str, reflex| RecentResponse {
        content: s(content),
        stagnation_reflex: reflex,
        ..Default::default()
    };
    assert!(store.responses_last_reply().unwrap().is_none(), "none yet");
    store.add(&reply("older thought", false), 1).unwrap();
    let repeated = store.add(&reply("the repeated thought", false), 2).unwrap();
    // A repetition far longer than what cleanup keeps: reflex records only.
    for t in 3..20 {
        store.add(&reply("reflex fired", true), t).unwrap();
    }
    let last = |store: &Store| store.responses_last_reply().unwrap().map(|r| r.id);
    assert_eq!(last(&store), Some(repeated));
    assert_eq!(
        store.responses_keep_latest(5).unwrap(),
        13,
        "all but the newest 5 and the last reply"
    );
    assert_eq!(last(&store), Some(repeated), "cleanup keeps it");
    assert_eq!(store.count::<RecentResponse>().unwrap(), 6);
    // A new reply takes its place; the old one may go now.
    let newer = store.add(&reply("a new thought", false), 30).unwrap();
    store.responses_keep_latest(5).unwrap();
    assert_eq!(last(&store), Some(newer));
    assert_eq!(store.count::<RecentResponse>().unwrap(), 5);
}

#[test]
fn concentration_compares_tags_and_emotions_ignoring_case_unicode_too() {
    let (_dir, store) = temp_store();
    let reply = |content: &str, tg: &[&str], emo: &[&str]| RecentResponse {
        content: s(content),
        tags: tags(tg),
        emotions: emo.iter().map(|e| s(e)).collect(),
        ..Default::default()
    };
    store.add(&reply("lower", &["agi"], &[]), 1).unwrap();
    store
        .add(&reply("mixed", &["Архитектура"], &["Тревожность:3"]), 2)
        .unwrap();
    store
        .add(&reply("other", &["mesh"], &["joy:5"]), 3)
        .unwrap();
    let contents = |c: Concentration| -> Vec<String> {
        store
            .responses_concentrated(&c)
            .unwrap()
            .into_iter()
            .map(|r| r.row.content)
            .collect()
    };
    // The seed's own example: ["архитектура","AGI"], "or".
    assert_eq!(
        contents(Concentration {
            tags: tags(&["архитектура", "AGI"]),
            mode: MatchMode::Any,
            ..Default::default()
        }),
        ["mixed", "lower"]
    );
    assert_eq!(
        contents(Concentration {
            tags: tags(&["AGI"]),
            ..Default::default()
        }),
        ["lower"]
    );
    assert_eq!(
        contents(Concentration {
            emotions: vec![(s("тревожность"), 2)],
            ..Default::default()
        }),
        ["mixed"]
    );
}

#[test]
fn recent_responses_are_stored_in_the_seeds_formats() {
    let (dir, store) = temp_store();
    let id = store.add(&crate::sample_response(), 1).unwrap();
    let raw = rusqlite::Connection::open(dir.path().join(porfiry_storage::DB_FILE_NAME)).unwrap();
    let (emotions, distribution, validators): (String, String, String) = raw
        .query_row(
            "SELECT emotions, distribution, validators FROM llm_recent_responses WHERE id = ?",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!(emotions, r#"["joy:4","anxiety:1"]"#);
    assert_eq!(distribution, r#"{"+2":1,"+3":2,"-1":1}"#);
    assert_eq!(
        validators,
        r#"[{"LLM":"gpt","rating":2},{"LLM":"qwen","rating":-1}]"#
    );
    // A vote written with a lower-case key (before the seed's format) still reads.
    raw.execute(
        r#"UPDATE llm_recent_responses SET validators = '[{"llm":"old","rating":1}]' WHERE id = ?"#,
        [id],
    )
    .unwrap();
    assert_eq!(
        store.get::<RecentResponse>(id).unwrap().row.validators,
        vec![ValidatorVote {
            llm: s("old"),
            rating: 1,
            ..Default::default()
        }]
    );
    let bad = |r: RecentResponse| {
        assert!(
            matches!(store.add(&r, 9), Err(StorageError::Invalid { .. })),
            "{r:?}"
        )
    };
    bad(RecentResponse {
        emotions: tags(&["joy"]),
        ..Default::default()
    });
    bad(RecentResponse {
        emotions: tags(&[":3"]),
        ..Default::default()
    });
    bad(RecentResponse {
        distribution: BTreeMap::from([(s("2"), 1)]),
        ..Default::default()
    });
    bad(RecentResponse {
        distribution: BTreeMap::from([(s("+0"), 1)]),
        ..Default::default()
    });
}

#[test]
fn process_log_statuses_open_list_and_cleanup() {
    let (_dir, store) = temp_store();
    let p = |name: &str| ProcessEntry {
        name: s(name),
        ..Default::default()
    };
    let a = store.add(&p("a"), 1).unwrap();
    let b = store.add(&p("b"), 2).unwrap();
    let c = store.add(&p("c"), 3).unwrap();
    store
        .process_finish(a, ProcessStatus::Timeout, "no answer in 30 s", 4)
        .unwrap();
    store
        .process_set_status(b, ProcessStatus::Close, 5)
        .unwrap();
    store
        .process_set_status(c, ProcessStatus::Close, 50)
        .unwrap();
    let open = store.processes_open().unwrap();
    assert_eq!(open.len(), 1);
    assert_eq!(
        (open[0].row.status, open[0].row.result.as_deref()),
        (ProcessStatus::Timeout, Some("no answer in 30 s"))
    );
    assert_eq!(
        store.processes_cleanup(Some(10)).unwrap(),
        1,
        "only closed before t=10"
    );
    assert_eq!(store.processes_cleanup(None).unwrap(), 1);
    assert_eq!(store.count::<ProcessEntry>().unwrap(), 1);
    assert!(matches!(
        store.process_set_status(b, ProcessStatus::Ok, 6),
        Err(StorageError::NotFound { .. })
    ));
    assert!("running".parse::<ProcessStatus>().is_err());
    let raw = crate::raw(&store);
    assert!(
        raw.execute("UPDATE process_log SET status = 'running'", [])
            .is_err(),
        "CHECK refuses unknown status"
    );
    let raw2 = crate::raw(&store);
    raw2.execute_batch(
        "PRAGMA ignore_check_constraints = 1; UPDATE process_log SET status = 'running'",
    )
    .unwrap();
    assert!(
        matches!(store.processes_open(), Err(StorageError::BadColumn { .. })),
        "hand-made bad status is reported"
    );
}

#[test]
fn agent_log_last_tick() {
    let (_dir, store) = temp_store();
    assert!(store.last_tick().unwrap().is_none());
    let r = store
        .add(
            &RecentResponse {
                content: s("x"),
                ..Default::default()
            },
            1,
        )
        .unwrap();
    for tick in 1..=3 {
        store
            .add(
                &TickRecord {
                    tick,
                    response_id: Some(r),
                    ..Default::default()
                },
                tick as u64,
            )
            .unwrap();
    }
    assert_eq!(store.last_tick().unwrap().unwrap().row.tick, 3);
    store.delete::<RecentResponse>(r).unwrap();
    assert_eq!(
        store.last_tick().unwrap().unwrap().row.response_id,
        None,
        "log outlives the reply"
    );
}

#[test]
fn counts_since_a_moment_skip_older_rows_and_the_excluded_source() {
    let (_dir, store) = temp_store();
    for (at, source) in [
        (100, NoteSource::User),
        (200, NoteSource::Llm),
        (300, NoteSource::User),
        (300, NoteSource::System),
    ] {
        store
            .add(
                &Note {
                    text: "n".into(),
                    source,
                    ..Default::default()
                },
                at,
            )
            .unwrap();
    }
    // A friend's core writes as `llm` too: merged here, it is a stimulus.
    store
        .add(
            &Note {
                text: "n".into(),
                source: NoteSource::Llm,
                origin_author: Some("12D3KooWfriend".into()),
                origin_item_id: Some(porfiry_protocol::ItemId([7; 32])),
                ..Default::default()
            },
            300,
        )
        .unwrap();
    assert_eq!(store.notes_count_since(200, NoteSource::Llm).unwrap(), 3);
    assert_eq!(store.notes_count_since(0, NoteSource::Llm).unwrap(), 4);
    assert_eq!(store.count_since::<Note>(200).unwrap(), 4);
    assert_eq!(store.count_since::<Note>(301).unwrap(), 0);
}

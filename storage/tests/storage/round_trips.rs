//! Every HMP table through the generic API: add / get / list / update /
//! delete / not found, with two realistic rows each.

use std::collections::BTreeMap;
use std::fmt::Debug;

use porfiry_storage::*;
use serde_json::json;

use crate::{s, sample_llm, sample_response, tags, temp_store};

/// add → get → list → update → get → delete → NotFound, for any table.
fn crud_round_trip<T: Record + Clone + PartialEq + Debug>(store: &Store, a: T, b: T) {
    let id = store.add(&a, 10).unwrap();
    let got = store.get::<T>(id).unwrap();
    assert_eq!(
        (got.row.clone(), got.created_ms, got.updated_ms),
        (a.clone(), 10, 10),
        "{}",
        T::TABLE
    );
    assert!(
        store
            .list::<T>(&ListQuery::default())
            .unwrap()
            .iter()
            .any(|r| r.id == id)
    );
    store.update(id, &b, 20).unwrap();
    let got = store.get::<T>(id).unwrap();
    assert_eq!(
        (got.row, got.created_ms, got.updated_ms),
        (b.clone(), 10, 20),
        "{}",
        T::TABLE
    );
    let before = store.count::<T>().unwrap();
    store.delete::<T>(id).unwrap();
    assert_eq!(store.count::<T>().unwrap(), before - 1);
    assert!(
        matches!(store.get::<T>(id), Err(StorageError::NotFound { .. })),
        "{}",
        T::TABLE
    );
    assert!(
        matches!(store.update(id, &a, 30), Err(StorageError::NotFound { .. })),
        "{}",
        T::TABLE
    );
    assert!(
        matches!(store.delete::<T>(id), Err(StorageError::NotFound { .. })),
        "{}",
        T::TABLE
    );
}

#[test]
fn every_table_round_trips() {
    let (_dir, store) = temp_store();
    crud_round_trip(
        &store,
        DiaryEntry {
            text: s("Saw a loop in my thoughts"),
            priority: 1,
            tags: tags(&["reflection"]),
            ..Default::default()
        },
        DiaryEntry {
            text: s("Fixed it"),
            pinned: true,
            llm_id: Some(s("qwen")),
            ..Default::default()
        },
    );
    crud_round_trip(
        &store,
        Concept {
            name: s("mesh"),
            description: s("a network of friends"),
            ..Default::default()
        },
        Concept {
            name: s("mesh network"),
            pinned: true,
            tags: tags(&["net"]),
            ..Default::default()
        },
    );
    let c1 = store
        .add(
            &Concept {
                name: s("a"),
                ..Default::default()
            },
            1,
        )
        .unwrap();
    let c2 = store
        .add(
            &Concept {
                name: s("b"),
                ..Default::default()
            },
            1,
        )
        .unwrap();
    crud_round_trip(
        &store,
        Link {
            from_concept: c1,
            to_concept: c2,
            relation: s("is_a"),
            weight: 0.5,
            ..Default::default()
        },
        Link {
            from_concept: c2,
            to_concept: c1,
            relation: s("causes"),
            weight: 1.0,
            ..Default::default()
        },
    );
    crud_round_trip(
        &store,
        Goal {
            title: s("Learn chess"),
            priority: 2,
            ..Default::default()
        },
        Goal {
            title: s("Learn chess well"),
            status: Progress::InProgress,
            ..Default::default()
        },
    );
    let g = store
        .add(
            &Goal {
                title: s("g"),
                ..Default::default()
            },
            1,
        )
        .unwrap();
    crud_round_trip(
        &store,
        Task {
            goal_id: Some(g),
            title: s("Read a book"),
            ..Default::default()
        },
        Task {
            goal_id: None,
            title: s("Read two"),
            status: Progress::Done,
            pinned: true,
            ..Default::default()
        },
    );
    crud_round_trip(
        &store,
        MemoryEntry {
            title: Some(s("plan")),
            content: s("ask bob about offload"),
            ..Default::default()
        },
        MemoryEntry {
            title: None,
            content: s("done"),
            tags: tags(&["plan"]),
            ..Default::default()
        },
    );
    crud_round_trip(
        &store,
        sample_response(),
        RecentResponse {
            content: s("second"),
            ..Default::default()
        },
    );
    crud_round_trip(
        &store,
        ProcessEntry {
            name: s("shell"),
            cmd_id: Some(s("c-1")),
            command: json!({"type": "shell", "args": {"cmd": "ls"}}),
            ..Default::default()
        },
        ProcessEntry {
            name: s("shell"),
            status: ProcessStatus::Error,
            result: Some(s("exit 2")),
            ..Default::default()
        },
    );
    crud_round_trip(
        &store,
        TickRecord {
            tick: 1,
            mode: s("auto"),
            commands_total: 3,
            commands_executed: 2,
            duration_ms: 1_500,
            ..Default::default()
        },
        TickRecord {
            tick: 1,
            mode: s("manual"),
            summary: s("idle"),
            ..Default::default()
        },
    );
    crud_round_trip(
        &store,
        sample_llm("local"),
        LlmEntry {
            trust: 0.9,
            is_validator: true,
            ..sample_llm("local2")
        },
    );
    crud_round_trip(
        &store,
        StagnationStrategy {
            name: s("Flashback"),
            class: s("internal_rebuild"),
            steps: tags(&["pick an old entry"]),
            cost: 1,
            ..Default::default()
        },
        StagnationStrategy {
            name: s("Sleep"),
            class: s("radical_pause"),
            cost: 9,
            shareable: true,
            ..Default::default()
        },
    );
    crud_round_trip(
        &store,
        ThinkingMethod {
            name: s("Analogy"),
            steps: tags(&["find a similar solved problem"]),
            ..Default::default()
        },
        ThinkingMethod {
            name: s("Inversion"),
            shareable: true,
            ..Default::default()
        },
    );
    crud_round_trip(
        &store,
        Rating {
            target: s("stagnation_strategies:1"),
            score: 2,
            comment: s("worked"),
            ..Default::default()
        },
        Rating {
            target: s("stagnation_strategies:1"),
            score: -1,
            ..Default::default()
        },
    );
    crud_round_trip(
        &store,
        Identity {
            name: s("Porfiry"),
            role: s("cognitive core"),
            metadata: BTreeMap::from([(s("lang"), json!("ru"))]),
            ..Default::default()
        },
        Identity {
            name: s("Porfiry"),
            peer_id: Some(s("12D3KooWMe")),
            ..Default::default()
        },
    );
    crud_round_trip(
        &store,
        SystemPrompt {
            name: s("core"),
            language: s("ru"),
            content: s("Ты — когнитивное ядро"),
        },
        SystemPrompt {
            name: s("core"),
            language: s("en"),
            content: s("You are the cognitive core"),
        },
    );
    crud_round_trip(
        &store,
        User {
            username: s("anna"),
            did: Some(s("did:key:z6Mk")),
            languages: tags(&["ru", "en"]),
            ..Default::default()
        },
        User {
            username: s("anna"),
            mail: Some(s("a@example.org")),
            operator: true,
            banned_until: Some(99),
            ..Default::default()
        },
    );
    crud_round_trip(
        &store,
        UserGroup {
            name: s("family"),
            members: vec![1, 2],
            ..Default::default()
        },
        UserGroup {
            name: s("club"),
            description: s("chess"),
            members: vec![],
        },
    );
    crud_round_trip(
        &store,
        ExternalService {
            name: s("searx"),
            kind: s("search"),
            url: s("http://127.0.0.1:8888"),
            ..Default::default()
        },
        ExternalService {
            name: s("rss"),
            config: BTreeMap::from([(s("every_min"), json!(30))]),
            ..Default::default()
        },
    );
    let svc = store
        .add(
            &ExternalService {
                name: s("mail"),
                ..Default::default()
            },
            1,
        )
        .unwrap();
    crud_round_trip(
        &store,
        ExternalAccount {
            service_id: svc,
            login: s("agent@example.org"),
            secret_ref: Some(s("MAIL_PASSWORD")),
            ..Default::default()
        },
        ExternalAccount {
            service_id: svc,
            login: s("other"),
            ..Default::default()
        },
    );
    crud_round_trip(
        &store,
        AgentScript {
            name: s("wc"),
            version: s("1"),
            language: s("python"),
            code: s("print(1)"),
            ..Default::default()
        },
        AgentScript {
            name: s("wc"),
            version: s("2"),
            language: s("bash"),
            code: s("wc -l"),
            tags: tags(&["util"]),
            ..Default::default()
        },
    );
    crud_round_trip(
        &store,
        AgentTable {
            table_name: s("books"),
            schema: s("CREATE TABLE books (title TEXT)"),
            ..Default::default()
        },
        AgentTable {
            table_name: s("books"),
            schema: s("CREATE TABLE books (title TEXT, year INT)"),
            description: s("reading list"),
            llm_id: None,
        },
    );
}

//! LLM registry, shareable strategies / methods / ratings (publish and
//! merge), config, prompts, users and external accounts.

use porfiry_protocol::ItemId;
use porfiry_storage::*;
use serde_json::json;

use crate::{s, sample_llm, temp_store};

#[test]
fn llm_registry_main_validators_and_no_secrets() {
    let (_dir, store) = temp_store();
    let a = store.add(&sample_llm("a"), 1).unwrap();
    let b = store
        .add(
            &LlmEntry {
                is_validator: true,
                ..sample_llm("b")
            },
            1,
        )
        .unwrap();
    assert!(store.llm_main().unwrap().is_none());
    store.llm_select_main(a, 2).unwrap();
    store.llm_select_main(b, 3).unwrap();
    assert_eq!(
        store.llm_main().unwrap().unwrap().id,
        b,
        "one main at a time"
    );
    assert!(!store.get::<LlmEntry>(a).unwrap().row.is_main);
    assert!(matches!(
        store.llm_select_main(99, 4),
        Err(StorageError::NotFound { .. })
    ));
    assert_eq!(
        store.llm_main().unwrap().unwrap().id,
        b,
        "failed select changes nothing"
    );
    assert_eq!(
        store
            .llm_validators()
            .unwrap()
            .iter()
            .map(|l| l.id)
            .collect::<Vec<_>>(),
        [b]
    );
    assert_eq!(
        store
            .llm_by_name("a")
            .unwrap()
            .unwrap()
            .row
            .config
            .temperature,
        Some(0.7)
    );
    let mut leaky = sample_llm("c");
    leaky.config.other.insert(s("API_KEY"), json!("sk-123"));
    assert!(matches!(
        store.add(&leaky, 5),
        Err(StorageError::Invalid { .. })
    ));
    // A second main row is impossible even by hand.
    let raw = crate::raw(&store);
    assert!(
        raw.execute("UPDATE llm_registry SET is_main = 1", [])
            .is_err()
    );
}

#[test]
fn shareable_rows_publish_and_merge() {
    let (_dir, store) = temp_store();
    let local = store
        .add(
            &StagnationStrategy {
                name: s("Flashback"),
                shareable: true,
                ..Default::default()
            },
            1,
        )
        .unwrap();
    store
        .add(
            &StagnationStrategy {
                name: s("Private trick"),
                ..Default::default()
            },
            2,
        )
        .unwrap();
    let todo = store.to_publish::<StagnationStrategy>(None).unwrap();
    assert_eq!(todo.iter().map(|r| r.id).collect::<Vec<_>>(), [local]);
    store
        .mark_published::<StagnationStrategy>(local, &ItemId([1; 32]), 3)
        .unwrap();
    assert!(
        store
            .to_publish::<StagnationStrategy>(None)
            .unwrap()
            .is_empty()
    );

    let from_bob = ThinkingMethod {
        name: s("Inversion"),
        origin_author: Some(s("12D3KooWBob")),
        origin_item_id: Some(ItemId([2; 32])),
        ..Default::default()
    };
    let m = store.merge_from_item(&from_bob, 10).unwrap();
    assert!(matches!(m, Merged::Added(_)));
    assert_eq!(
        store.merge_from_item(&from_bob, 10).unwrap(),
        Merged::Existing(m.id())
    );
    assert!(
        store
            .delete_merged::<ThinkingMethod>(&ItemId([2; 32]))
            .unwrap()
    );

    let r = Rating {
        target: s("thinking_methods:1"),
        score: 3,
        shareable: true,
        ..Default::default()
    };
    store.add(&r, 1).unwrap();
    store
        .add(
            &Rating {
                score: -1,
                ..r.clone()
            },
            2,
        )
        .unwrap();
    store
        .merge_from_item(
            &Rating {
                score: 1,
                origin_author: Some(s("p")),
                origin_item_id: Some(ItemId([3; 32])),
                ..r.clone()
            },
            3,
        )
        .unwrap();
    assert_eq!(store.ratings_of("thinking_methods:1").unwrap().len(), 3);
    assert_eq!(
        store.rating_summary("thinking_methods:1").unwrap(),
        Some((1.0, 3))
    );
    assert_eq!(store.rating_summary("nothing").unwrap(), None);
    assert_eq!(
        store.to_publish::<Rating>(None).unwrap().len(),
        2,
        "merged rows are not republished"
    );

    let llm = store
        .merge_from_item(
            &LlmEntry {
                origin_author: Some(s("p")),
                origin_item_id: Some(ItemId([4; 32])),
                ..sample_llm("bob-llm")
            },
            4,
        )
        .unwrap();
    assert_eq!(
        store
            .find_by_item::<LlmEntry>(&ItemId([4; 32]))
            .unwrap()
            .unwrap()
            .id,
        llm.id()
    );
}

#[test]
fn strategies_cheapest_first() {
    let (_dir, store) = temp_store();
    for (name, class, cost) in [
        ("Sleep", "radical_pause", 9),
        ("Mesh ask", "external_stimulation", 1),
        ("Flashback", "internal_rebuild", 2),
    ] {
        store
            .add(
                &StagnationStrategy {
                    name: s(name),
                    class: s(class),
                    cost,
                    ..Default::default()
                },
                1,
            )
            .unwrap();
    }
    let names: Vec<String> = store
        .strategies_by_cost(None)
        .unwrap()
        .into_iter()
        .map(|r| r.row.name)
        .collect();
    assert_eq!(names, ["Mesh ask", "Flashback", "Sleep"]);
    assert_eq!(
        store
            .strategies_by_cost(Some("radical_pause"))
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn config_values_are_typed_json() {
    let (_dir, store) = temp_store();
    assert_eq!(store.config_get::<u32>("cycle.responses").unwrap(), None);
    store.config_set("cycle.responses", &5u32, 1).unwrap();
    store
        .config_set("emotions", &["joy", "anxiety"], 1)
        .unwrap();
    store.config_set("cycle.responses", &7u32, 2).unwrap();
    assert_eq!(store.config_get::<u32>("cycle.responses").unwrap(), Some(7));
    assert_eq!(
        store
            .config_get::<Vec<String>>("emotions")
            .unwrap()
            .unwrap(),
        ["joy", "anxiety"]
    );
    assert!(matches!(
        store.config_get::<u32>("emotions"),
        Err(StorageError::BadColumn { .. })
    ));
    assert_eq!(store.config_all().unwrap().len(), 2);
    assert!(store.config_delete("emotions").unwrap());
    assert!(!store.config_delete("emotions").unwrap());
    assert!(store.config_set("has space", &1, 1).is_err());
    assert!(store.config_set("", &1, 1).is_err());
    assert_eq!(
        store.config_value("cycle.responses").unwrap(),
        Some(json!(7))
    );
}

#[test]
fn prompts_users_groups_and_accounts() {
    let (_dir, store) = temp_store();
    store
        .add(
            &SystemPrompt {
                name: s("core"),
                language: s("ru"),
                content: s("Ты"),
            },
            1,
        )
        .unwrap();
    store
        .add(
            &SystemPrompt {
                name: s("core"),
                language: s("en"),
                content: s("You"),
            },
            1,
        )
        .unwrap();
    assert_eq!(
        store
            .system_prompt("core", "en")
            .unwrap()
            .unwrap()
            .row
            .content,
        "You"
    );
    assert!(store.system_prompt("core", "de").unwrap().is_none());

    let anna = store
        .add(
            &User {
                username: s("anna"),
                did: Some(s("did:a")),
                ..Default::default()
            },
            1,
        )
        .unwrap();
    let bob = store
        .add(
            &User {
                username: s("bob"),
                ..Default::default()
            },
            1,
        )
        .unwrap();
    store
        .add(
            &UserGroup {
                name: s("family"),
                members: vec![anna, bob],
                ..Default::default()
            },
            1,
        )
        .unwrap();
    store
        .add(
            &UserGroup {
                name: s("admins"),
                members: vec![anna],
                ..Default::default()
            },
            1,
        )
        .unwrap();
    assert_eq!(store.user_by_did("did:a").unwrap().unwrap().id, anna);
    let groups: Vec<String> = store
        .groups_of_user(anna)
        .unwrap()
        .into_iter()
        .map(|g| g.row.name)
        .collect();
    assert_eq!(groups, ["admins", "family"]);

    let svc = store
        .add(
            &ExternalService {
                name: s("mail"),
                ..Default::default()
            },
            1,
        )
        .unwrap();
    store
        .add(
            &ExternalAccount {
                service_id: svc,
                login: s("a"),
                ..Default::default()
            },
            1,
        )
        .unwrap();
    assert_eq!(store.accounts_of_service(svc).unwrap().len(), 1);
    store.delete::<ExternalService>(svc).unwrap();
    assert_eq!(
        store.count::<ExternalAccount>().unwrap(),
        0,
        "accounts go with their service"
    );
}

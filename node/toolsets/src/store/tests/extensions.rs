//! `scripts`, `tables`, `services`, `accounts`, `strategies`, `methods`,
//! `ratings`: metadata rows added, listed and deleted; nothing is run and
//! no secret is stored or shown.

use porfiry_skills::Language;
use porfiry_storage::{
    AgentScript, AgentTable, ExternalAccount, ExternalService, Rating, StagnationStrategy,
    ThinkingMethod,
};

use crate::store::testkit::Kit;

#[tokio::test]
async fn scripts_and_tables_are_kept_never_run() {
    let kit = Kit::new(Language::En);
    kit.main_model("qwen").await;
    let code = "echo hi | tr a-z A-Z";
    assert_eq!(
        kit.ok("scripts_add", &format!("shout|bash|prints HI|{code}"))
            .await,
        "added: script #1"
    );
    let script = kit.read(|s| s.get::<AgentScript>(1).unwrap()).await.row;
    assert_eq!((script.code.as_str(), script.version.as_str()), (code, "1"));
    assert_eq!(script.llm_id.as_deref(), Some("qwen"));
    assert_eq!(
        kit.ok("scripts_list", "").await,
        "#1 shout v1 (bash) — prints HI"
    );
    assert!(
        kit.fails("scripts_add", "shout|bash|again|echo")
            .await
            .contains("duplicate")
    );

    let schema = "CREATE TABLE people (id INTEGER)";
    assert_eq!(
        kit.ok("tables_add", &format!("people|who I know|{schema}"))
            .await,
        "added: table definition #1"
    );
    assert_eq!(
        kit.read(|s| s.get::<AgentTable>(1).unwrap())
            .await
            .row
            .schema,
        schema
    );
    let path = kit.dir.path().join(porfiry_storage::DB_FILE_NAME);
    let conn = rusqlite::Connection::open(path).unwrap();
    let created: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name = 'people'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(created, 0, "the schema is only recorded");
    kit.ok("tables_delete", "1").await;
    kit.ok("scripts_delete", "1").await;
    assert_eq!(
        kit.read(|s| s.count::<AgentScript>().unwrap() + s.count::<AgentTable>().unwrap())
            .await,
        0
    );
}

#[tokio::test]
async fn accounts_name_their_secret_never_hold_it() {
    let kit = Kit::new(Language::En);
    assert_eq!(
        kit.ok("services_add", "mail|imap|imaps://mail.example|my mail")
            .await,
        "added: service #1"
    );
    assert_eq!(
        kit.ok("accounts_add", "1|bob|env:MAIL_PASSWORD|main box")
            .await,
        "added: account #1"
    );
    assert_eq!(
        kit.ok("accounts_list", "").await,
        "#1 bob @ service #1, secret_ref env:MAIL_PASSWORD — main box"
    );
    assert_eq!(
        kit.ok("services_list", "").await,
        "#1 mail (imap) imaps://mail.example — my mail"
    );
    assert!(
        kit.fails("accounts_add", "1|bob|hunter2 is my pass")
            .await
            .contains("secret_ref")
    );
    assert!(
        kit.fails("accounts_add", "9|carol")
            .await
            .contains("refused")
    );
    assert_eq!(kit.read(|s| s.count::<ExternalAccount>().unwrap()).await, 1);
    kit.ok("services_delete", "1").await;
    let left = kit
        .read(|s| {
            (
                s.count::<ExternalService>().unwrap(),
                s.count::<ExternalAccount>().unwrap(),
            )
        })
        .await;
    assert_eq!(left, (0, 0), "a service's accounts go with it");
}

#[tokio::test]
async fn know_how_rows_are_added_listed_and_deleted() {
    let kit = Kit::new(Language::Ru);
    assert_eq!(
        kit.ok(
            "strategies_add",
            "Флешбэк|internal_restructuring|1|вспомнить далёкую запись|Flashback|взять старую запись; сравнить"
        )
        .await,
        "добавлено: стратегия #1"
    );
    let s = kit
        .read(|s| s.get::<StagnationStrategy>(1).unwrap())
        .await
        .row;
    assert_eq!((s.class.as_str(), s.cost), ("internal_restructuring", 1));
    assert_eq!(s.steps, ["взять старую запись", "сравнить"]);
    assert_eq!(
        s.tags,
        ["mechanism:flashback"],
        "the core's choice can pick it"
    );
    let bad = kit
        .fails("strategies_add", "X|radical_pause|9|y|long pause")
        .await;
    assert!(bad.contains("mechanism"), "{bad}");
    assert!(
        kit.ok("strategies_list", "")
            .await
            .contains("1) взять старую запись 2) сравнить")
    );
    assert!(
        kit.fails("strategies_add", "X|sleeping|1|y")
            .await
            .contains("must be one of")
    );
    kit.ok(
        "methods_add",
        "Аналогия|начни с аналогии|найди похожее; перенеси",
    )
    .await;
    assert_eq!(
        kit.read(|s| s.get::<ThinkingMethod>(1).unwrap())
            .await
            .row
            .steps
            .len(),
        2
    );
    assert_eq!(
        kit.ok("ratings_add", "stagnation_strategies:1|2|помогло")
            .await,
        "добавлено: оценка #1"
    );
    assert_eq!(
        kit.ok("ratings_list", "").await,
        "#1 stagnation_strategies:1: 2 — помогло"
    );
    assert!(
        kit.fails("ratings_add", "x|много")
            .await
            .contains("whole number")
    );
    for (tool, id) in [
        ("strategies_delete", "1"),
        ("methods_delete", "1"),
        ("ratings_delete", "1"),
    ] {
        kit.ok(tool, id).await;
    }
    let left = kit
        .read(|s| {
            s.count::<StagnationStrategy>().unwrap()
                + s.count::<ThinkingMethod>().unwrap()
                + s.count::<Rating>().unwrap()
        })
        .await;
    assert_eq!(left, 0);
    assert!(
        kit.fails("ratings_delete", "1")
            .await
            .contains("не найдено")
    );
}

#[tokio::test]
async fn strategies_and_methods_said_shared_are_published_and_the_rest_stay_home() {
    let kit = Kit::new(Language::En);
    kit.ok(
        "strategies_add",
        "Walk away|radical_pause|8|sleep on it|long_pause||shared",
    )
    .await;
    kit.ok(
        "strategies_add",
        "Mine|radical_pause|8|just mine|long_pause",
    )
    .await;
    kit.ok("methods_add", "Invert|state the opposite||shared")
        .await;
    kit.ok("methods_add", "Private|think alone").await;
    let (strategies, methods) = kit
        .read(|s| {
            (
                s.to_publish::<StagnationStrategy>(None).unwrap(),
                s.to_publish::<ThinkingMethod>(None).unwrap(),
            )
        })
        .await;
    let strategies: Vec<String> = strategies.into_iter().map(|r| r.row.name).collect();
    let methods: Vec<String> = methods.into_iter().map(|r| r.row.name).collect();
    assert_eq!(
        strategies,
        ["Walk away"],
        "only the shared one is for friends"
    );
    assert_eq!(methods, ["Invert"]);
    let bad = kit.fails("methods_add", "X|y||everyone").await;
    assert!(bad.contains("must be one of"), "{bad}");
}

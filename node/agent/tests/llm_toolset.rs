//! `llm_*` against real SQLite and a real HTTP model server, through the
//! agent's `RegistryModels` (the toolsets crate only asks for a row's model).

use std::sync::Arc;
use std::time::Duration;

use porfiry_skills::Language;
use porfiry_storage::{LlmConfig, LlmEntry, ProcessEntry, ProcessStatus, Stored};

use porfiry_agent::llm::RegistryModels;
use porfiry_toolsets::StoreTools;
use porfiry_toolsets::acting::llm_tools::MAX_ASK_VOICES;
use porfiry_toolsets::acting::test_support::{NOW, ScriptedServer, call, finished};
use porfiry_toolsets::acting::{Jobs, LlmJobLimits, LlmToolset, ProcessLimits, ProcessToolset};
use porfiry_toolsets::test_support::{ctx_at, id_in, process_row, store_tools};

fn set(tools: &StoreTools, limits: LlmJobLimits) -> LlmToolset {
    LlmToolset::new(
        tools.clone(),
        Jobs::new(),
        Arc::new(RegistryModels::new(None)),
        limits,
    )
}

async fn add(tools: &StoreTools, entry: LlmEntry) -> i64 {
    tools
        .db
        .write(move |s| s.add(&entry, 1))
        .await
        .unwrap()
        .unwrap()
}

async fn entry(tools: &StoreTools, id: i64) -> Stored<LlmEntry> {
    tools
        .db
        .read(move |s| s.get::<LlmEntry>(id))
        .await
        .unwrap()
        .unwrap()
}

fn en() -> porfiry_skills::CallContext {
    ctx_at(NOW, Language::En)
}

#[tokio::test]
async fn list_shows_models_and_marks_but_never_a_key() {
    let (_dir, tools) = store_tools(Language::En);
    let l = set(&tools, LlmJobLimits::default());
    assert!(
        call(&l, "llm_list", "", &en())
            .await
            .text
            .contains("porfiry llm add")
    );
    add(
        &tools,
        LlmEntry {
            name: "cloud".into(),
            endpoint: "https://user:sk-pass@api.example.com/v1?key=sk-query".into(),
            model: "big".into(),
            is_main: true,
            is_validator: true,
            config: LlmConfig {
                api_key_env: Some("MY_SECRET_KEY_VAR".into()),
                temperature: Some(0.4),
                ..LlmConfig::default()
            },
            ..LlmEntry::default()
        },
    )
    .await;
    let text = call(&l, "llm_list", "", &en()).await.text;
    assert_eq!(
        text,
        "cloud — big @ https://api.example.com/v1 [main, validator] temperature=0.4"
    );
}

#[tokio::test]
async fn select_makes_one_model_main() {
    let (_dir, tools) = store_tools(Language::En);
    let l = set(&tools, LlmJobLimits::default());
    let server = ScriptedServer::start().await;
    let a = add(
        &tools,
        LlmEntry {
            is_main: true,
            ..server.entry("a", "m")
        },
    )
    .await;
    let b = add(&tools, server.entry("b", "m")).await;
    let out = call(&l, "llm_select", "b", &en()).await;
    assert_eq!(out.text, "main model: b");
    assert!(entry(&tools, b).await.row.is_main);
    assert!(!entry(&tools, a).await.row.is_main);
    let missing = call(&l, "llm_select", "zz", &en()).await;
    assert!(
        !missing.ok && missing.text.contains("zz"),
        "{}",
        missing.text
    );
    assert!(
        entry(&tools, b).await.row.is_main,
        "a bad name changes nothing"
    );
}

#[tokio::test]
async fn update_sets_and_resets_sampling_within_its_range() {
    let (_dir, tools) = store_tools(Language::En);
    let l = set(&tools, LlmJobLimits::default());
    let server = ScriptedServer::start().await;
    let id = add(&tools, server.entry("a", "m")).await;
    assert!(call(&l, "llm_update", "a|temperature|0.9", &en()).await.ok);
    let out = call(&l, "llm_update", "a|presence_penalty|-1,5", &en()).await;
    assert_eq!(out.text, "a: presence_penalty is now -1.5");
    let config = entry(&tools, id).await.row.config;
    assert_eq!(
        (config.temperature, config.presence_penalty),
        (Some(0.9), Some(-1.5))
    );
    assert_eq!(config.max_retries, Some(0), "other settings kept");
    for bad in [
        "a|temperature|2.5",
        "a|temperature|-0.1",
        "a|presence_penalty|3",
        "a|temperature|hot",
    ] {
        let out = call(&l, "llm_update", bad, &en()).await;
        assert!(
            !out.ok && out.text.contains("nothing changed"),
            "{bad}: {}",
            out.text
        );
    }
    assert!(!call(&l, "llm_update", "zz|temperature|1", &en()).await.ok);
    assert_eq!(entry(&tools, id).await.row.config, config);
    assert!(
        call(&l, "llm_update", "a|temperature|default", &en())
            .await
            .ok
    );
    assert_eq!(entry(&tools, id).await.row.config.temperature, None);
}

#[tokio::test]
async fn a_task_runs_in_the_background_and_its_answer_lands_in_process_log() {
    let (_dir, tools) = store_tools(Language::En);
    let l = set(&tools, LlmJobLimits::default());
    let server = ScriptedServer::start().await;
    add(&tools, server.entry("helper", "helper")).await;
    let mut rx = tools.events.subscribe();
    let json = r#"{"target_llm":"helper","task_description":"plan the mesh"}"#;
    let out = call(&l, "llm_task", json, &en()).await;
    assert!(out.ok, "{}", out.text);
    let id = id_in(&out.text);
    assert_eq!(finished(&mut rx).await, id);
    let row = process_row(&tools, id).await;
    assert_eq!(row.row.name, "llm_task");
    assert_eq!(row.row.status, ProcessStatus::Ok);
    assert_eq!(
        row.row.result.as_deref(),
        Some("helper says: plan the mesh")
    );
    assert_eq!(row.row.llm_id.as_deref(), Some("helper"));
    assert_eq!(row.row.command["target_llm"], "helper");
    assert_eq!(row.created_ms, NOW as u64);
    let p = ProcessToolset::new(tools.clone(), Jobs::new(), ProcessLimits::default());
    let list = call(&p, "process_list", "", &en()).await.text;
    assert_eq!(
        list,
        format!("#{id} llm_task helper — ok: helper says: plan the mesh")
    );
}

#[tokio::test]
async fn a_failing_or_silent_model_ends_the_task_as_error_or_timeout() {
    let (_dir, tools) = store_tools(Language::En);
    let limits = LlmJobLimits {
        task_deadline: Duration::from_millis(300),
        ..LlmJobLimits::default()
    };
    let l = set(&tools, limits);
    let server = ScriptedServer::start().await;
    add(&tools, server.entry("broken", "broken")).await;
    add(&tools, server.entry("silent", "silent")).await;
    let mut rx = tools.events.subscribe();
    for (name, status, says) in [
        ("broken", ProcessStatus::Error, "model exploded"),
        ("silent", ProcessStatus::Timeout, "no answer within"),
    ] {
        let out = call(&l, "llm_task", &format!("{name}|do it"), &en()).await;
        let id = id_in(&out.text);
        assert_eq!(finished(&mut rx).await, id);
        let row = process_row(&tools, id).await.row;
        assert_eq!(row.status, status, "{name}");
        assert!(row.result.unwrap().contains(says), "{name}");
    }
}

#[tokio::test]
async fn a_task_whose_model_cannot_be_reached_ends_offline() {
    // Seed 003's `offline`: the host is down, not the model wrong.
    let (_dir, tools) = store_tools(Language::En);
    let l = set(&tools, LlmJobLimits::default());
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    add(
        &tools,
        LlmEntry {
            name: "gone".into(),
            endpoint: format!("http://127.0.0.1:{port}/v1"),
            model: "gone".into(),
            config: LlmConfig {
                max_retries: Some(0),
                ..LlmConfig::default()
            },
            ..LlmEntry::default()
        },
    )
    .await;
    let mut rx = tools.events.subscribe();
    let out = call(&l, "llm_task", "gone|do it", &en()).await;
    let id = id_in(&out.text);
    assert_eq!(finished(&mut rx).await, id);
    let row = process_row(&tools, id).await.row;
    assert_eq!(row.status, ProcessStatus::Offline, "{:?}", row.result);
}

#[tokio::test]
async fn a_task_is_refused_for_unknown_or_unreachable_models_and_when_busy() {
    let (_dir, tools) = store_tools(Language::En);
    let limits = LlmJobLimits {
        max_tasks: 1,
        ..LlmJobLimits::default()
    };
    let jobs = Jobs::new();
    let l = LlmToolset::new(
        tools.clone(),
        jobs.clone(),
        Arc::new(RegistryModels::new(None)),
        limits,
    );
    let p = ProcessToolset::new(tools.clone(), jobs, ProcessLimits::default());
    let unknown = call(&l, "llm_task", "nobody|x", &en()).await;
    assert!(
        !unknown.ok && unknown.text.contains("nobody"),
        "{}",
        unknown.text
    );
    add(
        &tools,
        LlmEntry {
            name: "friend".into(),
            endpoint: porfiry_mesh::PeerId::random().to_string(),
            ..LlmEntry::default()
        },
    )
    .await;
    let friend = call(&l, "llm_task", "friend|x", &en()).await;
    assert!(
        !friend.ok && friend.text.contains("porfiry run"),
        "{}",
        friend.text
    );

    let server = ScriptedServer::start().await;
    add(&tools, server.entry("silent", "silent")).await;
    let mut rx = tools.events.subscribe();
    let first = call(&l, "llm_task", "silent|x", &en()).await;
    let busy = call(&l, "llm_task", "silent|y", &en()).await;
    assert!(
        !busy.ok && busy.text.contains("1 model tasks"),
        "{}",
        busy.text
    );
    // The process set stops a model task like a program.
    let id = id_in(&first.text);
    assert!(call(&p, "process_stop", &id.to_string(), &en()).await.ok);
    assert_eq!(finished(&mut rx).await, id);
    assert_eq!(
        process_row(&tools, id).await.row.status,
        ProcessStatus::Close
    );
    let count = tools
        .db
        .read(|s| s.count::<ProcessEntry>())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(count, 1, "refused tasks are not stored");
}

#[tokio::test]
async fn ask_gathers_voices_concurrently_bounded_with_one_deadline() {
    let (_dir, tools) = store_tools(Language::En);
    let limits = LlmJobLimits {
        ask_deadline: Duration::from_millis(500),
        ..LlmJobLimits::default()
    };
    let l = set(&tools, limits);
    let server = ScriptedServer::start().await;
    for (name, model) in [
        ("alpha", "alpha"),
        ("beta", "beta"),
        ("broken", "broken"),
        ("silent", "silent"),
        ("zeta", "zeta"),
    ] {
        add(&tools, server.entry(name, model)).await;
    }
    let out = call(&l, "llm_ask", "all|why?", &en()).await;
    assert!(out.ok, "{}", out.text);
    let lines: Vec<&str> = out.text.lines().collect();
    assert_eq!(lines.len(), MAX_ASK_VOICES + 1, "{}", out.text);
    assert_eq!(lines[0], "alpha: alpha says: why?");
    assert_eq!(lines[1], "beta: beta says: why?");
    assert!(lines[2].starts_with("broken: (no answer:"), "{}", lines[2]);
    assert!(lines[3].starts_with("silent: (silent"), "{}", lines[3]);
    assert!(lines[4].contains("1 more not asked"), "{}", lines[4]);
    assert!(!out.text.contains("zeta"));

    let two = call(&l, "llm_ask", "beta, alpha|hi", &en()).await;
    assert_eq!(two.text, "beta: beta says: hi\nalpha: alpha says: hi");
    let unknown = call(&l, "llm_ask", "alpha, nobody|hi", &en()).await;
    assert!(
        !unknown.ok && unknown.text.contains("nobody"),
        "{}",
        unknown.text
    );
    let none = call(&l, "llm_ask", "broken|hi", &en()).await;
    assert!(!none.ok, "no voice answered: {}", none.text);
}

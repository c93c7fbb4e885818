//! End to end: the cognitive core as a user runs it — `porfiry init` seeds
//! it, `porfiry llm add|list|remove` edit the registry, `porfiry think`
//! ticks against the scripted OpenAI-compatible server over real HTTP and
//! writes the node's SQLite file, a dead endpoint is recorded tick after
//! tick, and `porfiry run` starts the core with a model unless
//! `--no-think`.

use porfiry_skills::Language;
use porfiry_skills::cognition::seeds::{seed_emotions, seed_methods, seed_strategies};
use porfiry_skills::cognition::texts::prompt::core_system_prompt;
use porfiry_skills::cognition::votes::Thresholds;
use porfiry_storage::{
    DiaryEntry, ListQuery, ProcessEntry, Record, StagnationStrategy, Stored, SystemPrompt,
    ThinkingMethod, TickRecord,
};
use porfiry_tests::mesh_node::{MeshNode, wait_for};
use porfiry_tests::{Reply, Rule, ScriptedLlm, When};

/// The first words of the core's system prompt: they mark the tick's main
/// call, as opposed to the reflexes' short questions.
fn main_call() -> When {
    let head: String = core_system_prompt(Language::En).chars().take(40).collect();
    When::system_contains(head)
}

/// A model that writes one diary entry per tick (numbered by the request)
/// and answers the reflexes with a usable evaluation.
fn diarist() -> ScriptedLlm {
    ScriptedLlm::start(vec![
        Rule::new(
            main_call(),
            Reply::func(|req| {
                Reply::text(format!(
                    "Thinking, step {}.\nTOOL_CALL: diary_add|observation {}|e2e",
                    req.number, req.number
                ))
            }),
        ),
        Rule::always(Reply::text(
            r#"{"novel": "yes", "novelty": 0.9, "new_ideas": ["observation"], "tags": ["e2e"]}"#,
        )),
    ])
    .unwrap()
}

fn all<T: Record>(node: &MeshNode) -> Vec<Stored<T>> {
    node.store()
        .list::<T>(&ListQuery {
            limit: Some(1_000),
            oldest_first: true,
            ..Default::default()
        })
        .unwrap()
}

#[test]
fn init_seeds_the_core_prompts_strategies_methods_and_settings() {
    let node = MeshNode::init("seeded");
    // The seeded text itself, not only row counts: context 0 in both
    // languages, the seed's strategies (name, class, mechanism, cost) and
    // thinking methods, the emotion list and the thresholds.
    let prompts: Vec<(String, String)> = all::<SystemPrompt>(&node)
        .into_iter()
        .map(|p| (p.row.language, p.row.content))
        .collect();
    assert_eq!(
        prompts,
        [
            ("en".to_owned(), core_system_prompt(Language::En).to_owned()),
            ("ru".to_owned(), core_system_prompt(Language::Ru).to_owned())
        ]
    );
    let strategies: Vec<(String, String, Vec<String>, i64)> = all::<StagnationStrategy>(&node)
        .into_iter()
        .map(|s| (s.row.name, s.row.class, s.row.tags, s.row.cost))
        .collect();
    let seeded: Vec<(String, String, Vec<String>, i64)> = seed_strategies(Language::En)
        .into_iter()
        .map(|s| {
            (
                s.name.to_owned(),
                s.class.as_str().to_owned(),
                vec![s.mechanism.tag()],
                s.cost,
            )
        })
        .collect();
    assert_eq!(strategies, seeded);
    let classes: std::collections::BTreeSet<&str> =
        strategies.iter().map(|s| s.1.as_str()).collect();
    assert_eq!(classes.len(), 4, "all four classes: {classes:?}");
    let methods: Vec<String> = all::<ThinkingMethod>(&node)
        .into_iter()
        .map(|m| m.row.name)
        .collect();
    let seed_method_names: Vec<String> = seed_methods(Language::En)
        .into_iter()
        .map(|m| m.name.to_owned())
        .collect();
    assert_eq!(methods, seed_method_names);
    let store = node.store();
    let emotions: Vec<String> = store.config_get("emotions").unwrap().unwrap();
    assert_eq!(emotions, seed_emotions(Language::En));
    let thresholds: Thresholds = store.config_get("validation.thresholds").unwrap().unwrap();
    assert_eq!(thresholds, Thresholds::default());
}

#[test]
fn llm_add_list_and_remove_edit_the_registry() {
    let node = MeshNode::init("registry");
    let out = node.cli_ok(&[
        "llm",
        "add",
        "main",
        "--url",
        "http://127.0.0.1:9/v1",
        "--model",
        "qwen",
        "--main",
    ]);
    assert_eq!(
        out.trim(),
        "added model main #1: qwen at http://127.0.0.1:9/v1 (main)"
    );
    node.cli_ok(&[
        "llm",
        "add",
        "judge",
        "--url",
        "http://127.0.0.1:9/v1",
        "--model",
        "gemma",
        "--validator",
    ]);
    let list = node.cli_ok(&["llm", "list"]);
    assert!(
        list.contains("registry judge  model: gemma  at: http://127.0.0.1:9/v1  [validator]"),
        "{list}"
    );
    assert_eq!(
        list.lines()
            .filter(|l| l.starts_with("warning: one validator, judge;")
                && l.contains("the seed recommends at least 2 validators"))
            .count(),
        1,
        "a lone validator is warned about once: {list}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&node.cli_ok(&["llm", "list", "--json"])).unwrap();
    assert_eq!(json["registry"][1]["name"], "main");
    assert_eq!(json["registry"][1]["main"], true);
    let dup = node.cli(&["llm", "add", "main", "--url", "http://x/v1", "--model", "m"]);
    assert!(!dup.status.success());
    assert_eq!(
        node.cli_ok(&["llm", "remove", "judge"]).trim(),
        "removed model judge"
    );
    let gone = node.cli(&["llm", "remove", "judge"]);
    assert!(!gone.status.success());
    assert!(String::from_utf8_lossy(&gone.stderr).contains("no model named \"judge\""));
}

#[test]
fn think_ticks_over_real_http_and_writes_the_database() {
    let llm = diarist();
    let node = MeshNode::init("thinker");
    let out = node
        .command()
        .args([
            "think",
            "--ticks",
            "2",
            "--trace",
            "--pause-secs",
            "0",
            "--llm-url",
            &llm.url(),
            "--llm-model",
            "scripted",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert!(
        lines[0].starts_with("tick 1: 1 commands, 1 ran"),
        "{stdout}"
    );
    assert!(
        lines[1].starts_with("tick 2: 1 commands, 1 ran"),
        "{stdout}"
    );
    assert!(stderr.contains("[trace] --- system ---"), "{stderr}");
    assert_eq!(
        stderr
            .matches("warning: no validators: every reply passes unvalidated (auto_pass); the seed recommends at least 2 validators")
            .count(),
        1,
        "said once, not per tick: {stderr}"
    );
    assert!(stderr.contains("[trace] command diary_add|"), "{stderr}");
    assert!(
        stderr.contains("pause 0 s between ticks"),
        "context 5 shows the pause this run keeps: {stderr}"
    );
    let diary = all::<DiaryEntry>(&node);
    assert_eq!(diary.len(), 2);
    assert!(diary[0].row.text.starts_with("observation "));
    let ticks = all::<TickRecord>(&node);
    assert_eq!(ticks.iter().map(|t| t.row.tick).collect::<Vec<_>>(), [1, 2]);
    assert!(ticks.iter().all(|t| t.row.error.is_none()));
    // No validators: the main call and the emotional evaluation, plus the
    // cognitive one once there is an earlier reply to compare with.
    let paths: Vec<String> = llm.recorded().into_iter().map(|r| r.path).collect();
    let chat = paths
        .iter()
        .filter(|p| *p == "/v1/chat/completions")
        .count();
    assert_eq!(chat, 5, "{paths:?}");
    // The server has no embeddings (404): asked once, not again each tick.
    let embeddings = paths.iter().filter(|p| *p == "/v1/embeddings").count();
    assert_eq!(embeddings, 1, "{paths:?}");
    assert_eq!(paths.len(), 6, "{paths:?}");
    assert_eq!(
        ticks.iter().map(|t| t.row.model_calls).collect::<Vec<_>>(),
        [2, 3]
    );
}

#[test]
fn think_in_russian_shows_the_command_sets_in_russian() {
    let llm = ScriptedLlm::start(vec![Rule::always(Reply::text("Думаю."))]).unwrap();
    let node = MeshNode::init("thinker");
    let out = node
        .command()
        .args([
            "think",
            "--ticks",
            "1",
            "--pause-secs",
            "0",
            "--language",
            "ru",
            "--llm-url",
            &llm.url(),
            "--llm-model",
            "scripted",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let head: String = core_system_prompt(Language::Ru).chars().take(40).collect();
    let prompt = llm
        .recorded()
        .iter()
        .map(|r| r.messages().iter().map(|(_, t)| *t).collect::<String>())
        .find(|p| p.contains(&head))
        .expect("a main call in Russian");
    assert!(
        prompt.contains("когнитивный дневник: наблюдения и размышления"),
        "{prompt}"
    );
    assert!(
        !prompt.contains("cognitive diary: observations"),
        "{prompt}"
    );
}

#[test]
fn think_with_pause_secs_never_sleeps_the_strategys_half_hour_and_says_it_cut_it() {
    // A model that says the same every tick: the stall escalates until the
    // radical-pause ("Sleep") strategy applies its 30 minutes.
    let llm = ScriptedLlm::start(vec![
        Rule::new(main_call(), Reply::text("Round and round.")),
        Rule::always(Reply::text(r#"{"novel": "no", "novelty": 0}"#)),
    ])
    .unwrap();
    let node = MeshNode::init("looping");
    let mut child = node
        .command()
        .args([
            "think",
            "--ticks",
            "12",
            "--pause-secs",
            "0",
            "--llm-url",
            &llm.url(),
            "--llm-model",
            "scripted",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > std::time::Duration::from_secs(120) {
            child.kill().unwrap();
            panic!("think slept past --pause-secs 0");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(status.success(), "{stdout}");
    assert_eq!(stdout.lines().count(), 12, "{stdout}");
    assert!(
        stdout.lines().any(|l| l
            .ends_with("; next: pause 0 s (long-pause strategy's +1800 s capped by --pause-secs)")),
        "the cut pause is said on its tick line: {stdout}"
    );
}

#[test]
fn think_without_any_model_says_how_to_get_one_and_writes_nothing() {
    let node = MeshNode::init("modelless");
    let out = node
        .command()
        .args(["think", "--ticks", "1"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no model: give --llm-url"), "{stderr}");
    assert!(all::<TickRecord>(&node).is_empty());
}

#[test]
fn a_dead_endpoint_is_recorded_each_tick_and_think_goes_on() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/v1");
    let node = MeshNode::init("unlucky");
    let out = node
        .command()
        .args([
            "think",
            "--ticks",
            "2",
            "--pause-secs",
            "0",
            "--llm-retries",
            "0",
            "--llm-url",
            &url,
            "--llm-model",
            "gone",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert!(lines.iter().all(|l| l.contains(": error: ")), "{stdout}");
    let ticks = all::<TickRecord>(&node);
    assert_eq!(ticks.len(), 2);
    assert!(ticks.iter().all(|t| t.row.error.is_some()));
    assert!(all::<ProcessEntry>(&node).is_empty(), "nothing ran");
}

#[test]
fn run_starts_the_core_with_a_model_and_no_think_keeps_it_off() {
    let llm = diarist();
    // Two servers at once: each on a port of its own, not the default 4001.
    let args = [
        "--listen",
        "/ip4/127.0.0.1/tcp/0",
        "--llm-url",
        &llm.url(),
        "--llm-model",
        "scripted",
    ];
    let mut off = MeshNode::init("quiet");
    off.start(&args);
    let mut on = MeshNode::init("busy");
    on.start_thinking(&args);
    wait_for("the core's first tick", || {
        !all::<TickRecord>(&on).is_empty()
    });
    assert!(
        on.stdout_lines()
            .iter()
            .any(|l| l == "cognitive core on: scripted")
    );
    assert_eq!(all::<DiaryEntry>(&on).len(), 1);
    on.terminate();
    off.terminate();
    assert!(
        !off.stdout_lines()
            .iter()
            .any(|l| l.starts_with("cognitive core on"))
    );
    assert!(all::<TickRecord>(&off).is_empty());
}

//! `process_*` against real SQLite and real child processes (programs every
//! Debian has: echo, sleep, true, false, seq).

use std::time::Duration;

use porfiry_skills::Language;
use porfiry_storage::{ProcessEntry, ProcessStatus, Stored};

use crate::StoreTools;
use crate::acting::process::{MAX_PROCESS_LIST_LINES, PROCESS_ALLOW_KEY};
use crate::acting::test_support::{NOW, call, finished};
use crate::acting::{Jobs, ProcessLimits, ProcessToolset};
use crate::test_support::{ctx_at, id_in, process_row, store_tools};

fn set(tools: &StoreTools, limits: ProcessLimits) -> ProcessToolset {
    ProcessToolset::new(tools.clone(), Jobs::new(), limits)
}

async fn allow(tools: &StoreTools, programs: &[&str]) {
    let list: Vec<String> = programs.iter().map(|p| p.to_string()).collect();
    tools
        .db
        .write(move |s| s.config_set(PROCESS_ALLOW_KEY, &list, 1))
        .await
        .unwrap()
        .unwrap();
}

async fn rows(tools: &StoreTools) -> u64 {
    tools
        .db
        .read(|s| s.count::<ProcessEntry>())
        .await
        .unwrap()
        .unwrap()
}

/// Starts `command`, waits for its end event, returns the finished row.
async fn run_to_end(tools: &StoreTools, p: &ProcessToolset, command: &str) -> Stored<ProcessEntry> {
    let mut rx = tools.events.subscribe();
    let out = call(p, "process_start", command, &ctx_at(NOW, Language::En)).await;
    assert!(out.ok, "{}", out.text);
    let id = id_in(&out.text);
    assert_eq!(finished(&mut rx).await, id, "the event names the row");
    process_row(tools, id).await
}

#[tokio::test]
async fn start_is_refused_while_nothing_is_allowed_naming_the_key() {
    let (_dir, tools) = store_tools(Language::En);
    let p = set(&tools, ProcessLimits::default());
    let out = call(&p, "process_start", "echo hi", &ctx_at(NOW, Language::En)).await;
    assert!(!out.ok);
    assert!(out.text.contains(PROCESS_ALLOW_KEY), "{}", out.text);
    let ru = call(&p, "process_start", "echo hi", &ctx_at(NOW, Language::Ru)).await;
    assert!(ru.text.contains("отказано"), "{}", ru.text);
    assert_eq!(rows(&tools).await, 0, "nothing stored");
}

#[tokio::test]
async fn only_programs_on_the_list_run_and_a_shell_is_not_implied() {
    let (_dir, tools) = store_tools(Language::En);
    allow(&tools, &["echo"]).await;
    let p = set(&tools, ProcessLimits::default());
    let ctx = ctx_at(NOW, Language::En);
    for refused in ["rm -rf /tmp/x", "sh -c 'echo hi'", "/bin/echo hi"] {
        let out = call(&p, "process_start", refused, &ctx).await;
        assert!(!out.ok, "{refused}");
        assert!(out.text.contains("echo"), "names the allowed: {}", out.text);
    }
    let bad = call(&p, "process_start", "echo 'unclosed", &ctx).await;
    assert!(!bad.ok && bad.text.contains("quotes"), "{}", bad.text);
    assert_eq!(rows(&tools).await, 0);
}

#[tokio::test]
async fn an_allowed_program_runs_as_argv_and_its_output_lands_in_the_row() {
    let (_dir, tools) = store_tools(Language::En);
    allow(&tools, &["echo"]).await;
    let p = set(&tools, ProcessLimits::default());
    let done = run_to_end(&tools, &p, "echo hello 'big  world' $HOME").await;
    assert_eq!(done.row.status, ProcessStatus::Ok);
    let result = done.row.result.unwrap();
    assert!(result.starts_with("exit code 0"), "{result}");
    assert!(
        result.contains("hello big  world $HOME"),
        "quotes kept, no shell expansion: {result}"
    );
    assert_eq!(done.row.name, "echo");
    assert_eq!(done.row.command["argv"][2], "big  world");
    assert!(done.updated_ms >= done.created_ms);
    assert_eq!(done.created_ms, NOW as u64, "times come from the call");
}

#[tokio::test]
async fn a_failing_or_unstartable_program_is_an_error_row() {
    let (_dir, tools) = store_tools(Language::En);
    allow(&tools, &["false", "porfiry-no-such-program"]).await;
    let p = set(&tools, ProcessLimits::default());
    let done = run_to_end(&tools, &p, "false").await;
    assert_eq!(done.row.status, ProcessStatus::Error);
    assert!(done.row.result.unwrap().contains("exit code 1"));

    let mut rx = tools.events.subscribe();
    let out = call(
        &p,
        "process_start",
        "porfiry-no-such-program",
        &ctx_at(NOW, Language::En),
    )
    .await;
    assert!(!out.ok && out.text.contains("cannot start"), "{}", out.text);
    let id = finished(&mut rx).await;
    let failed = process_row(&tools, id).await;
    assert_eq!(failed.row.status, ProcessStatus::Error);
    assert!(failed.row.result.unwrap().contains("cannot start"));
}

#[tokio::test]
async fn a_program_past_its_timeout_is_killed_and_marked_timeout() {
    let (_dir, tools) = store_tools(Language::En);
    allow(&tools, &["sleep"]).await;
    let limits = ProcessLimits {
        timeout: Duration::from_millis(200),
        ..ProcessLimits::default()
    };
    let done = run_to_end(&tools, &set(&tools, limits), "sleep 30").await;
    assert_eq!(done.row.status, ProcessStatus::Timeout);
    assert!(done.row.result.unwrap().contains("killed"));
}

#[tokio::test]
async fn output_past_the_cap_is_cut_and_the_total_said() {
    let (_dir, tools) = store_tools(Language::En);
    allow(&tools, &["seq"]).await;
    let limits = ProcessLimits {
        output_bytes: 64,
        ..ProcessLimits::default()
    };
    let done = run_to_end(&tools, &set(&tools, limits), "seq 1 1000").await;
    let result = done.row.result.unwrap();
    // 1..=1000, one per line: 9×2 + 90×3 + 900×4 + 5 bytes.
    assert!(result.contains("first 64 of 3893 bytes"), "{result}");
    assert!(!result.contains("\n999\n"), "{result}");
    assert!(result.len() < 200, "{result}");
}

#[tokio::test]
async fn stop_kills_a_running_process_and_closes_its_row() {
    let (_dir, tools) = store_tools(Language::En);
    allow(&tools, &["sleep"]).await;
    let p = set(&tools, ProcessLimits::default());
    let ctx = ctx_at(NOW, Language::En);
    let mut rx = tools.events.subscribe();
    let out = call(&p, "process_start", "sleep 30", &ctx).await;
    let id = id_in(&out.text);
    let running = process_row(&tools, id).await;
    assert_eq!(
        (running.row.status, running.row.result),
        (ProcessStatus::Warning, None),
        "running = warning with no result"
    );
    let list = call(&p, "process_list", "", &ctx).await;
    assert!(
        list.text.contains(&format!("#{id} sleep 30 — running")),
        "{}",
        list.text
    );
    let mark = call(&p, "process_mark", &format!("{id}|close"), &ctx).await;
    assert!(
        !mark.ok && mark.text.contains("still running"),
        "{}",
        mark.text
    );

    let stop = call(&p, "process_stop", &id.to_string(), &ctx).await;
    assert!(stop.ok, "{}", stop.text);
    assert_eq!(finished(&mut rx).await, id);
    let stopped = process_row(&tools, id).await;
    assert_eq!(stopped.row.status, ProcessStatus::Close);
    assert!(stopped.row.result.unwrap().contains("process_stop"));
    let again = call(&p, "process_stop", &id.to_string(), &ctx).await;
    assert!(
        !again.ok && again.text.contains("not running"),
        "{}",
        again.text
    );
}

#[tokio::test]
async fn running_processes_are_bounded_and_a_slot_frees_when_one_ends() {
    let (_dir, tools) = store_tools(Language::En);
    allow(&tools, &["sleep"]).await;
    let limits = ProcessLimits {
        max_running: 1,
        ..ProcessLimits::default()
    };
    let p = set(&tools, limits);
    let ctx = ctx_at(NOW, Language::En);
    let mut rx = tools.events.subscribe();
    let first = call(&p, "process_start", "sleep 30", &ctx).await;
    let busy = call(&p, "process_start", "sleep 30", &ctx).await;
    assert!(
        !busy.ok && busy.text.contains("1 processes already run"),
        "{}",
        busy.text
    );
    assert_eq!(rows(&tools).await, 1, "the refused one is not stored");
    let id = id_in(&first.text);
    call(&p, "process_stop", &id.to_string(), &ctx).await;
    finished(&mut rx).await;
    let next = call(&p, "process_start", "sleep 30", &ctx).await;
    assert!(next.ok, "{}", next.text);
    call(&p, "process_stop", &id_in(&next.text).to_string(), &ctx).await;
    finished(&mut rx).await;
}

async fn add_row(tools: &StoreTools, status: ProcessStatus, at: u64) -> i64 {
    tools
        .db
        .write(move |s| {
            s.add(
                &ProcessEntry {
                    name: "job".into(),
                    status,
                    result: Some("done".into()),
                    ..ProcessEntry::default()
                },
                at,
            )
        })
        .await
        .unwrap()
        .unwrap()
}

#[tokio::test]
async fn mark_sets_a_status_and_cleanup_deletes_closed_rows_by_age() {
    let (_dir, tools) = store_tools(Language::En);
    let p = set(&tools, ProcessLimits::default());
    let old = add_row(&tools, ProcessStatus::Ok, 1_000).await;
    let fresh = add_row(&tools, ProcessStatus::Ok, 1_000).await;
    let ctx = ctx_at(9_000, Language::En);
    let mark = call(&p, "process_mark", &format!("{old}|close"), &ctx).await;
    assert!(mark.ok, "{}", mark.text);
    assert_eq!(
        process_row(&tools, old).await.row.status,
        ProcessStatus::Close
    );
    assert_eq!(process_row(&tools, old).await.updated_ms, 9_000);
    let missing = call(&p, "process_mark", "999|close", &ctx).await;
    assert!(
        !missing.ok && missing.text.contains("#999"),
        "{}",
        missing.text
    );
    call(
        &p,
        "process_mark",
        &format!("{fresh}|close"),
        &ctx_at(20_000, Language::En),
    )
    .await;

    let now = ctx_at(30_000, Language::En);
    let bad = call(&p, "process_cleanup", "-5", &now).await;
    assert!(!bad.ok);
    // Closed before 30 000 − 15 000 = 15 000: only `old` (closed at 9 000).
    let some = call(&p, "process_cleanup", "15", &now).await;
    assert!(some.text.starts_with('1'), "{}", some.text);
    assert_eq!(rows(&tools).await, 1);
    let all = call(&p, "process_cleanup", "", &now).await;
    assert!(all.text.starts_with('1'), "{}", all.text);
    assert_eq!(rows(&tools).await, 0);
}

#[tokio::test]
async fn the_list_is_bounded_and_hides_closed_rows_unless_asked() {
    let (_dir, tools) = store_tools(Language::En);
    let p = set(&tools, ProcessLimits::default());
    let ctx = ctx_at(NOW, Language::En);
    assert_eq!(
        call(&p, "process_list", "", &ctx).await.text,
        "no processes"
    );
    for i in 0..(MAX_PROCESS_LIST_LINES as u64 + 5) {
        add_row(&tools, ProcessStatus::Ok, 1_000 + i).await;
    }
    let closed = add_row(&tools, ProcessStatus::Close, 5_000).await;
    let open = call(&p, "process_list", "", &ctx).await.text;
    assert_eq!(open.lines().count(), MAX_PROCESS_LIST_LINES + 1, "{open}");
    assert!(open.ends_with("…and 5 more"), "{open}");
    assert!(!open.contains(&format!("#{closed} ")), "{open}");
    assert!(open.contains("— ok: done"), "{open}");
    let all = call(&p, "process_list", "all", &ctx).await.text;
    assert!(all.contains(&format!("#{closed} job — close")), "{all}");
    assert!(all.ends_with("…and 6 more"), "{all}");
}

#[tokio::test]
async fn rows_left_running_by_an_earlier_run_are_closed_as_errors_at_start() {
    let (_dir, tools) = store_tools(Language::En);
    let running = tools
        .db
        .write(|s| {
            s.add(
                &crate::acting::jobs::running_row("sleep", serde_json::json!({}), None),
                1,
            )
        })
        .await
        .unwrap()
        .unwrap();
    let done = add_row(&tools, ProcessStatus::Ok, 1).await;
    let closed = tools
        .db
        .write(|s| crate::acting::close_orphans(s, 50, Language::En))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(closed, [running]);
    let orphan = process_row(&tools, running).await;
    assert_eq!(orphan.row.status, ProcessStatus::Error);
    assert!(orphan.row.result.unwrap().contains("node stopped"));
    assert_eq!(orphan.updated_ms, 50);
    assert_eq!(
        process_row(&tools, done).await.row.status,
        ProcessStatus::Ok
    );
}

#[tokio::test]
async fn an_open_question_to_friends_outlives_a_restart_but_an_orphaned_job_does_not() {
    use porfiry_skills::cognition::tick::MESH_INTERACT_COMMAND;
    let (_dir, tools) = store_tools(Language::En);
    let (orphan, question, namesake) = tools
        .db
        .write(|s| {
            let orphan = s.add(
                &crate::acting::jobs::running_row("sleep", serde_json::json!({}), None),
                1,
            )?;
            // As the core writes it: its name, the question and the note it
            // was posted as, running without a result.
            let question = s.add(
                &crate::acting::jobs::running_row(
                    MESH_INTERACT_COMMAND,
                    serde_json::json!({ "question": "anyone?", "note": 7 }),
                    None,
                ),
                2,
            )?;
            // A program that happens to have that name is still a job.
            let namesake = s.add(
                &crate::acting::jobs::running_row(
                    MESH_INTERACT_COMMAND,
                    serde_json::json!({
                        "type": crate::acting::process::PROCESS_START,
                        "argv": [MESH_INTERACT_COMMAND],
                    }),
                    None,
                ),
                3,
            )?;
            Ok::<_, porfiry_storage::StorageError>((orphan, question, namesake))
        })
        .await
        .unwrap()
        .unwrap();
    let closed = tools
        .db
        .write(|s| crate::acting::close_orphans(s, 50, Language::En))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(closed, [orphan, namesake]);
    assert_eq!(
        process_row(&tools, orphan).await.row.status,
        ProcessStatus::Error
    );
    let open = process_row(&tools, question).await;
    assert_eq!(
        (open.row.status, open.row.result.as_deref()),
        (crate::acting::RUNNING_STATUS, None),
        "the question waits for its answers"
    );
}

#[tokio::test]
async fn a_fetch_from_a_host_that_refuses_is_offline_not_an_error() {
    let (_dir, tools) = store_tools(Language::En);
    // A port nobody listens on: bound, then let go.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let prefix = format!("http://127.0.0.1:{port}/");
    let list = vec![prefix.clone()];
    tools
        .db
        .write(move |s| s.config_set(crate::acting::fetch::PROCESS_ALLOW_URLS_KEY, &list, 1))
        .await
        .unwrap()
        .unwrap();
    let p = set(&tools, ProcessLimits::default());
    let mut rx = tools.events.subscribe();
    let out = call(
        &p,
        "process_fetch",
        &format!("{prefix}news"),
        &ctx_at(NOW, Language::En),
    )
    .await;
    assert!(out.ok, "{}", out.text);
    let id = id_in(&out.text);
    assert_eq!(finished(&mut rx).await, id);
    let row = process_row(&tools, id).await;
    assert_eq!(
        row.row.status,
        ProcessStatus::Offline,
        "{:?}",
        row.row.result
    );
}

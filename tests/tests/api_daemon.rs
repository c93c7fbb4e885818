//! The node's HTTP API on a real `porfiry run`: the token file, 401s,
//! `--api` refused off loopback without `--api-public`, chat without a model
//! and with the scripted model (plain, model down), notes posted through
//! the API reaching a friend, SIGTERM mid-request.

use std::process::Command;

use porfiry_tests::api_client::{call, chat_body, chat_until};
use porfiry_tests::mesh_node::{MeshNode, wait_for};
use porfiry_tests::porfiry_bin::porfiry_bin;
use porfiry_tests::{Reply, Rule, ScriptedLlm};

/// Posts a body one byte over the API's cap, written from another thread
/// (the node answers 413 without reading it all and may reset the link
/// while it is still being written), and reads what came back.
fn send_oversized(
    addr: std::net::SocketAddr,
    token: &str,
) -> porfiry_tests::api_client::ApiResponse {
    use std::io::{Read as _, Write as _};
    let body = "x".repeat(porfiry_api::limits::MAX_BODY_BYTES + 1);
    let head = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let mut stream = std::net::TcpStream::connect(addr).expect("connect to the API");
    let mut writer = stream.try_clone().expect("clone the socket");
    let sender = std::thread::spawn(move || {
        let _ = writer.write_all(head.as_bytes());
        let _ = writer.write_all(body.as_bytes());
    });
    let mut raw = Vec::new();
    // A reset after the response has arrived is expected; what was read stays in `raw`.
    let _ = stream.read_to_end(&mut raw);
    let _ = sender.join();
    porfiry_tests::api_client::parse(&raw)
}

#[test]
fn a_public_api_address_is_refused_without_api_public_before_a_node_is_made() {
    let tmp = tempfile::tempdir().unwrap();
    let fresh = tmp.path().join("fresh");
    let out = Command::new(porfiry_bin())
        .arg("--data-dir")
        .arg(&fresh)
        .args(["run", "--profile", "phone", "--api", "0.0.0.0:0"])
        .env_remove("PORFIRY_DATA_DIR")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--api-public"), "{err}");
    assert!(!fresh.exists(), "nothing was created");
}

#[test]
fn the_api_needs_the_token_and_says_when_no_model_is_configured() {
    let mut node = MeshNode::init("A");
    node.start(&["--profile", "phone", "--api", "127.0.0.1:0"]);
    let addr = node.api_address();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(node.dir().join("api-token"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let token = node.api_token();
    let denied = call(addr, "GET", "/v1/models", None, "");
    assert_eq!(denied.status, 401);
    assert_eq!(denied.json()["error"]["code"], "invalid_api_key");
    let wrong = call(addr, "GET", "/v1/models", Some(&"0".repeat(64)), "");
    assert_eq!(wrong.status, 401);
    let models = call(addr, "GET", "/v1/models", Some(&token), "");
    assert_eq!(models.status, 200);
    assert_eq!(models.json()["data"][0]["id"], "porfiry");
    let chat = call(
        addr,
        "POST",
        "/v1/chat/completions",
        Some(&token),
        &chat_body("ann", "hi", false),
    );
    assert_eq!(chat.status, 503, "{}", chat.body);
    assert!(chat.body.contains("--llm-url"), "{}", chat.body);
    assert_eq!(call(addr, "GET", "/nope", Some(&token), "").status, 404);
    let malformed = call(
        addr,
        "POST",
        "/v1/chat/completions",
        Some(&token),
        "{\"messages\":",
    );
    assert_eq!(malformed.status, 400, "{}", malformed.body);
    assert!(malformed.json()["error"]["message"].is_string());
    let oversized = send_oversized(addr, &token);
    assert_eq!(oversized.status, 413, "{}", oversized.body);
    assert!(oversized.json()["error"]["message"].is_string());
    let status = call(addr, "GET", "/api/status", Some(&token), "");
    assert_eq!(status.json()["peer_id"], node.peer_id);
    let exit = node.terminate();
    assert!(exit.status.success(), "{}", exit.stderr);
}

#[test]
fn chat_answers_through_the_scripted_model_and_a_dead_model_is_a_502_not_a_crash() {
    let llm = ScriptedLlm::start(vec![Rule::always(Reply::text("Hello from the model."))]).unwrap();
    let mut node = MeshNode::init("A");
    let url = llm.url();
    node.start(&[
        "--profile",
        "phone",
        "--api",
        "127.0.0.1:0",
        "--llm-url",
        &url,
        "--llm-model",
        "scripted",
        "--llm-retries",
        "0",
    ]);
    let addr = node.api_address();
    let token = node.api_token();
    let answer = call(
        addr,
        "POST",
        "/v1/chat/completions",
        Some(&token),
        &chat_body("ann", "hi", false),
    );
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(
        answer.json()["choices"][0]["message"]["content"],
        "Hello from the model."
    );
    let status = call(addr, "GET", "/api/status", Some(&token), "");
    assert_eq!(status.json()["model"], "scripted");
    let source = &status.json()["model_source"];
    assert_eq!(source["kind"], "server", "{source}");
    assert!(
        source["detail"]
            .as_str()
            .is_some_and(|d| d.starts_with("http://127.0.0.1:")),
        "{source}"
    );

    drop(llm); // the model server goes away
    let failed = call(
        addr,
        "POST",
        "/v1/chat/completions",
        Some(&token),
        &chat_body("ann", "again", false),
    );
    assert_eq!(failed.status, 502, "{}", failed.body);
    assert_eq!(failed.json()["error"]["code"], "upstream_model_error");
    assert!(node.is_running(), "the daemon keeps running");
    assert_eq!(
        call(addr, "GET", "/v1/models", Some(&token), "").status,
        200
    );
    let exit = node.terminate();
    assert!(exit.status.success(), "{}", exit.stderr);
}

#[test]
fn a_note_posted_through_the_api_reaches_a_friend() {
    let mut a = MeshNode::init("A");
    let mut b = MeshNode::init("B");
    a.befriend(&b, false, &[]);
    b.befriend(&a, false, &[]);
    b.start_server(0);
    let b_address = b.address.clone().expect("B listens");
    a.start(&["--listen", "/ip4/127.0.0.1/tcp/0"]);
    let addr = a.api_address();
    let token = a.api_token();
    // Tell A where B is, through the API.
    let body = serde_json::json!({"peer": b.peer_id, "addresses": [b_address]}).to_string();
    let added = call(addr, "POST", "/api/friends", Some(&token), &body);
    assert_eq!(added.status, 201, "{}", added.body);
    let posted = call(
        addr,
        "POST",
        "/api/notes",
        Some(&token),
        r#"{"text":"hello from the API","audience":"friends"}"#,
    );
    assert_eq!(posted.status, 201, "{}", posted.body);
    wait_for("B to get the note", || b.has_note(&a, "hello from the API"));
    for node in [&mut a, &mut b] {
        let exit = node.terminate();
        assert!(exit.status.success(), "{}", exit.stderr);
    }
}

#[test]
fn sigterm_during_a_chat_request_exits_cleanly_with_an_intact_database() {
    let slow = Reply::delayed(std::time::Duration::from_secs(120), Reply::text("too late"));
    let llm = ScriptedLlm::start(vec![Rule::always(slow)]).unwrap();
    let mut node = MeshNode::init("A");
    let url = llm.url();
    node.start(&[
        "--profile",
        "phone",
        "--api",
        "127.0.0.1:0",
        "--llm-url",
        &url,
        "--llm-model",
        "scripted",
    ]);
    let addr = node.api_address();
    let token = node.api_token();
    node.cli_ok(&["notes", "post", "kept"]);
    let client = std::thread::spawn(move || {
        let body = chat_body("ann", "hi", false);
        // The daemon ends the request when it stops; any ending is fine.
        std::panic::catch_unwind(|| call(addr, "POST", "/v1/chat/completions", Some(&token), &body))
            .ok()
    });
    wait_for("the request to reach the model", || {
        !llm.requests().is_empty()
    });
    let exit = node.terminate();
    assert!(exit.status.success(), "{}", exit.stderr);
    assert!(
        exit.stdout.iter().any(|l| l.starts_with("stopped:")),
        "{:?}",
        exit.stdout
    );
    node.store().check_integrity().unwrap();
    assert!(node.cli_ok(&["notes", "list"]).contains("kept"));
    if let Some(response) = client.join().unwrap() {
        assert_ne!(response.status, 200, "{}", response.body);
    }
}

/// Starts a phone node whose API talks to `llm`.
fn node_with_model(llm: &ScriptedLlm) -> (MeshNode, std::net::SocketAddr, String) {
    let mut node = MeshNode::init("A");
    let (addr, token) = node.start_with_model(llm, &[]);
    (node, addr, token)
}

#[test]
fn a_streamed_answer_is_the_models_pieces_as_sse_chunks_then_done() {
    let reply = Reply::streamed("")
        .pieces(["Hel", "lo ", "there."])
        .usage(11, 3);
    let llm = ScriptedLlm::start(vec![Rule::always(reply)]).unwrap();
    let (mut node, addr, token) = node_with_model(&llm);
    let response = call(
        addr,
        "POST",
        "/v1/chat/completions",
        Some(&token),
        &chat_body("ann", "hi", true),
    );
    assert_eq!(response.status, 200, "{}", response.body);
    assert!(
        response.head.contains("content-type: text/event-stream"),
        "{}",
        response.head
    );
    assert!(
        response.body.starts_with("data: {") && response.body.ends_with("\n\ndata: [DONE]\n\n"),
        "SSE framing: {:?}",
        response.body
    );
    let events: Vec<&str> = response.body.split_terminator("\n\n").collect();
    assert_eq!(events.last(), Some(&"data: [DONE]"), "{}", response.body);
    let chunks: Vec<serde_json::Value> = events[..events.len() - 1]
        .iter()
        .map(|e| serde_json::from_str(e.strip_prefix("data: ").expect("data line")).unwrap())
        .collect();
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    let text: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(text, "Hello there.");
    let pieces = chunks
        .iter()
        .filter(|c| {
            c["choices"][0]["delta"]["content"]
                .as_str()
                .is_some_and(|t| !t.is_empty())
        })
        .count();
    assert!(pieces >= 2, "the answer came in pieces: {}", response.body);
    let last_choice = &chunks[chunks.len() - 2]["choices"][0];
    assert_eq!(last_choice["finish_reason"], "stop");
    assert!(last_choice["delta"]["porfiry"].is_object());
    let usage = &chunks[chunks.len() - 1];
    assert_eq!(usage["choices"], serde_json::json!([]));
    assert_eq!(usage["usage"]["completion_tokens"], 3);
    let ids: std::collections::BTreeSet<_> = chunks.iter().map(|c| c["id"].to_string()).collect();
    assert_eq!(ids.len(), 1, "one id for the whole stream");
    let exit = node.terminate();
    assert!(exit.status.success(), "{}", exit.stderr);
}

#[test]
fn a_client_hanging_up_mid_stream_closes_the_upstream_request() {
    let reply = Reply::streamed("")
        .pieces(["partial ", "never sent"])
        .hang_after(1);
    let llm = ScriptedLlm::start(vec![
        Rule::always(reply).times(1),
        Rule::always(Reply::text("back again")),
    ])
    .unwrap();
    let (mut node, addr, token) = node_with_model(&llm);
    let stream = chat_until(addr, &token, &chat_body("ann", "hi", true), "partial");
    drop(stream);
    wait_for("the model server to see its stream closed", || {
        llm.disconnects() >= 1
    });
    // The session is free: the same user is answered again.
    let again = call(
        addr,
        "POST",
        "/v1/chat/completions",
        Some(&token),
        &chat_body("ann", "hi", false),
    );
    assert_eq!(again.status, 200, "{}", again.body);
    assert_eq!(
        again.json()["choices"][0]["message"]["content"],
        "back again"
    );
    assert!(node.is_running());
    let exit = node.terminate();
    assert!(exit.status.success(), "{}", exit.stderr);
}

#[test]
fn a_client_hanging_up_on_a_plain_request_closes_the_upstream_request() {
    // The model takes ten minutes; the client gives up after sending.
    let slow = Reply::delayed(std::time::Duration::from_secs(600), Reply::text("too late"));
    let llm = ScriptedLlm::start(vec![
        Rule::always(slow).times(1),
        Rule::always(Reply::text("back again")),
    ])
    .unwrap();
    let (mut node, addr, token) = node_with_model(&llm);
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    let request = porfiry_tests::api_client::request_text(
        "POST",
        "/v1/chat/completions",
        Some(&token),
        &chat_body("ann", "hi", false),
    );
    std::io::Write::write_all(&mut stream, request.as_bytes()).unwrap();
    wait_for("the model to get the request", || llm.request_count() >= 1);
    drop(stream);
    wait_for("the model server to see the request closed", || {
        llm.disconnects() >= 1
    });
    let again = call(
        addr,
        "POST",
        "/v1/chat/completions",
        Some(&token),
        &chat_body("ann", "hi", false),
    );
    assert_eq!(again.status, 200, "{}", again.body);
    assert_eq!(
        again.json()["choices"][0]["message"]["content"],
        "back again"
    );
    let exit = node.terminate();
    assert!(exit.status.success(), "{}", exit.stderr);
}

#[test]
fn two_users_keep_separate_toolset_activation() {
    use porfiry_tests::When;
    // ann asks for films: the model enables the media set, then answers;
    // bob's prompt must not list the media tools as active.
    let llm = ScriptedLlm::start(vec![
        Rule::new(
            When::last_user_contains("films"),
            Reply::text("TOOL_CALL: enable_toolset|media"),
        )
        .times(1),
        Rule::always(Reply::text("Done.")),
    ])
    .unwrap();
    let (mut node, addr, token) = node_with_model(&llm);
    let ann = call(
        addr,
        "POST",
        "/v1/chat/completions",
        Some(&token),
        &chat_body("ann", "films please", false),
    );
    assert_eq!(ann.status, 200, "{}", ann.body);
    let bob = call(
        addr,
        "POST",
        "/v1/chat/completions",
        Some(&token),
        &chat_body("bob", "hello", false),
    );
    assert_eq!(bob.status, 200, "{}", bob.body);
    let again = serde_json::json!({"user": "ann", "messages": [
        {"role": "user", "content": "films please"},
        {"role": "assistant", "content": "Done."},
        {"role": "user", "content": "more"}]})
    .to_string();
    assert_eq!(
        call(addr, "POST", "/v1/chat/completions", Some(&token), &again).status,
        200
    );
    let recorded = llm.recorded();
    let system_of = |needle: &str| {
        recorded
            .iter()
            .rev()
            .find(|r| r.last_user().is_some_and(|u| u.contains(needle)))
            .and_then(|r| r.system_prompt().map(str::to_owned))
            .unwrap_or_else(|| panic!("no request for {needle}"))
    };
    assert!(
        system_of("more").contains("Active toolsets: media"),
        "ann's media set is active"
    );
    assert!(
        !system_of("hello").contains("Active toolsets"),
        "bob's is not"
    );
    let exit = node.terminate();
    assert!(exit.status.success(), "{}", exit.stderr);
}

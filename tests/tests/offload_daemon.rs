//! Offload with real processes: a home server runs `porfiry run --offload` with
//! the scripted model; a phone with no model of its own answers on its own
//! `/v1/chat/completions` through the server's model over the mesh — named with
//! `--llm-peer`, or learned from the server's advertisement — plain and
//! streamed; a friend the server does not allow is refused before the model
//! sees anything; and the same through a server running the real test model
//! in its embedded engine (`--model-file`), within the client's `max_tokens`.

use porfiry_tests::api_client::{call, chat_body, chat_until};
use porfiry_tests::mesh_node::{MeshNode, wait_for};
use porfiry_tests::{Reply, Rule, ScriptedLlm};

/// Starts the server on a loopback port offering `llm`; returns its address.
fn start_server(server: &mut MeshNode, llm: &ScriptedLlm) -> String {
    let url = llm.url();
    server.start_server_with(
        0,
        &["--llm-url", &url, "--llm-model", "scripted", "--offload"],
    )
}

/// Waits until `phone` is connected to `server` (its status says so).
/// Names `server` "home" on `phone` (at `address`), starts the phone with
/// `--llm-peer llm_peer`, waits for the link; returns the phone's API
/// address and token.
fn start_phone_through(
    phone: &mut MeshNode,
    server: &MeshNode,
    address: &str,
    llm_peer: &str,
) -> (std::net::SocketAddr, String) {
    phone.cli_ok(&["friends", "add", &server.peer_id, address, "--name", "home"]);
    phone.start(&["--profile", "phone", "--llm-peer", llm_peer]);
    wait_connected(phone, server);
    (phone.api_address(), phone.api_token())
}

fn wait_connected(phone: &mut MeshNode, server: &MeshNode) {
    let addr = phone.api_address();
    let token = phone.api_token();
    wait_for("the phone to connect to the server", || {
        let status = call(addr, "GET", "/api/status", Some(&token), "").json();
        status["friends"].as_array().is_some_and(|friends| {
            friends
                .iter()
                .any(|f| f["peer_id"] == server.peer_id.as_str() && f["connected"] == true)
        })
    });
}

#[test]
fn a_phone_without_a_model_answers_through_its_servers_model() {
    let llm = ScriptedLlm::start(vec![Rule::always(
        Reply::streamed("Hello from home.").pieces(["Hello ", "from ", "home."]),
    )])
    .unwrap();
    let mut server = MeshNode::init("server");
    let mut phone = MeshNode::init("phone");
    server.cli_ok(&["friends", "add", &phone.peer_id, "--allow-offload"]);
    let address = start_server(&mut server, &llm);
    // --llm-peer takes the friend's name (issue 12).
    let (addr, token) = start_phone_through(&mut phone, &server, &address, "Home");

    let plain = call(
        addr,
        "POST",
        "/v1/chat/completions",
        Some(&token),
        &chat_body("ann", "hi", false),
    );
    assert_eq!(plain.status, 200, "{}", plain.body);
    assert_eq!(
        plain.json()["choices"][0]["message"]["content"],
        "Hello from home."
    );
    // The answer says whose model wrote it, by the name the phone gave it.
    let home = serde_json::json!({"peer": server.peer_id, "name": "home"});
    assert_eq!(
        plain.json()["choices"][0]["message"]["porfiry"]["via"],
        home,
        "{}",
        plain.body
    );
    assert!(
        llm.recorded().iter().any(|r| r.last_user() == Some("hi")),
        "the server's model saw the phone's request"
    );

    let streamed = call(
        addr,
        "POST",
        "/v1/chat/completions",
        Some(&token),
        &chat_body("ann", "again", true),
    );
    assert_eq!(streamed.status, 200, "{}", streamed.body);
    assert!(
        streamed.body.ends_with("data: [DONE]\n\n"),
        "{}",
        streamed.body
    );
    let chunks: Vec<serde_json::Value> = streamed
        .body
        .split_terminator("\n\n")
        .filter_map(|e| e.strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .filter_map(|d| serde_json::from_str::<serde_json::Value>(d).ok())
        .collect();
    let last = chunks
        .iter()
        .find(|c| c["choices"][0]["finish_reason"].is_string())
        .expect("a final chunk");
    assert_eq!(
        last["choices"][0]["delta"]["porfiry"]["via"], home,
        "{last}"
    );
    let text: String = chunks
        .iter()
        .filter_map(|c| {
            c["choices"][0]["delta"]["content"]
                .as_str()
                .map(str::to_owned)
        })
        .collect();
    assert_eq!(text, "Hello from home.");

    // The server's model goes away: the phone's client gets an error that
    // names the friend, not an answer, and both nodes keep running.
    drop(llm);
    let down = call(
        addr,
        "POST",
        "/v1/chat/completions",
        Some(&token),
        &chat_body("ann", "still there?", false),
    );
    assert_eq!(down.status, 502, "{}", down.body);
    assert!(down.body.contains(&server.peer_id), "{}", down.body);
    assert!(phone.is_running() && server.is_running());

    assert!(phone.terminate().status.success());
    assert!(server.terminate().status.success());
}

#[test]
fn a_phone_learns_the_model_and_a_friend_not_allowed_is_refused() {
    let llm = ScriptedLlm::start(vec![Rule::always(Reply::text("Learned it."))]).unwrap();
    let mut server = MeshNode::init("server");
    let mut phone = MeshNode::init("phone");
    let mut other = MeshNode::init("other");
    server.cli_ok(&["friends", "add", &phone.peer_id, "--allow-offload"]);
    server.cli_ok(&["friends", "add", &other.peer_id]);
    let address = start_server(&mut server, &llm);
    for node in [&mut phone, &mut other] {
        node.cli_ok(&["friends", "add", &server.peer_id, &address]);
        node.start(&["--profile", "phone"]);
    }
    wait_connected(&mut phone, &server);
    wait_connected(&mut other, &server);

    // No --llm-peer: the phone uses the model the server advertises.
    let addr = phone.api_address();
    let token_p = phone.api_token();
    let mut answer = None;
    wait_for("the phone to learn the server's model", || {
        let r = call(
            addr,
            "POST",
            "/v1/chat/completions",
            Some(&token_p),
            &chat_body("ann", "hi", false),
        );
        let ok = r.status == 200;
        answer = Some(r);
        ok
    });
    let answer = answer.unwrap();
    assert_eq!(
        answer.json()["choices"][0]["message"]["content"],
        "Learned it."
    );
    // A friend this phone gave no name: its short peer id.
    let short: String = server.peer_id.chars().take(12).chain(['…']).collect();
    assert_eq!(
        answer.json()["choices"][0]["message"]["porfiry"]["via"],
        serde_json::json!({"peer": server.peer_id, "name": short}),
        "{}",
        answer.body
    );

    // `other` is a friend, but not allowed: refused, and the model never sees it.
    let seen = llm.request_count();
    let addr_o = other.api_address();
    let token_o = other.api_token();
    let mut refused = None;
    wait_for("the other phone to learn the model and be refused", || {
        let r = call(
            addr_o,
            "POST",
            "/v1/chat/completions",
            Some(&token_o),
            &chat_body("ann", "me too", false),
        );
        let done = r.status == 502;
        refused = Some(r);
        done
    });
    let refused = refused.unwrap();
    assert!(refused.body.contains("not permitted"), "{}", refused.body);
    assert_eq!(
        llm.request_count(),
        seen,
        "the model never saw the refused request"
    );

    for node in [&mut phone, &mut other, &mut server] {
        assert!(node.terminate().status.success());
    }
}

#[test]
fn a_chat_client_hanging_up_on_the_phone_closes_the_servers_model_request() {
    let partial = Reply::streamed("")
        .pieces(["partial ", "never sent"])
        .hang_after(1);
    let llm = ScriptedLlm::start(vec![Rule::always(partial)]).unwrap();
    let mut server = MeshNode::init("server");
    let mut phone = MeshNode::init("phone");
    server.cli_ok(&["friends", "add", &phone.peer_id, "--allow-offload"]);
    let address = start_server(&mut server, &llm);
    phone.cli_ok(&["friends", "add", &server.peer_id, &address]);
    phone.start(&["--profile", "phone", "--llm-peer", &server.peer_id]);
    wait_connected(&mut phone, &server);
    let addr = phone.api_address();
    let token = phone.api_token();
    let stream = chat_until(addr, &token, &chat_body("ann", "hi", true), "partial");
    // The chat client goes: the phone drops its offload stream, the server
    // drops its upstream request, and the model server sees it close.
    drop(stream);
    wait_for("the server's model to see its request closed", || {
        llm.disconnects() >= 1
    });
    assert!(phone.terminate().status.success());
    assert!(server.terminate().status.success());
}

/// Offload of the embedded engine (issue 30 §5): the server runs the real
/// test model in-process (`--model-file`, no HTTP server behind it), and a
/// phone with no model answers through it, plain and streamed, each model
/// call within the budget the phone's client asked for.
#[test]
fn real_model_a_phone_answers_through_its_servers_embedded_model() {
    let model = porfiry_engine::test_model::test_model_path().unwrap_or_else(|e| panic!("{e}"));
    let model = model.display().to_string();
    let mut server = MeshNode::init("server");
    let mut phone = MeshNode::init("phone");
    server.cli_ok(&["friends", "add", &phone.peer_id, "--allow-offload"]);
    let address = server.start_server_with(
        0,
        &["--model-file", &model, "--model-threads", "1", "--offload"],
    );
    let (addr, token) = start_phone_through(&mut phone, &server, &address, "home");
    let budget: u32 = 16;
    let with_budget = |stream: bool| {
        let mut body: serde_json::Value =
            serde_json::from_str(&chat_body("ann", "Say hello.", stream)).unwrap();
        body["max_tokens"] = budget.into();
        body.to_string()
    };

    let plain = call(
        addr,
        "POST",
        "/v1/chat/completions",
        Some(&token),
        &with_budget(false),
    );
    assert_eq!(plain.status, 200, "{}", plain.body);
    let answer = plain.json();
    let text = answer["choices"][0]["message"]["content"]
        .as_str()
        .unwrap_or_default();
    assert!(!text.trim().is_empty(), "{}", plain.body);
    // Each model call of the turn (a tool round, then the answer) stops at
    // the budget; a model that ignored it would run to hundreds of tokens.
    let most = u64::from(budget) * (u64::from(porfiry_skills::limits::MAX_TOOL_ROUNDS) + 1);
    let completion = answer["usage"]["completion_tokens"].as_u64().unwrap();
    assert!((1..=most).contains(&completion), "{}", plain.body);
    eprintln!("the server's embedded model said {text:?} ({completion} tokens)");

    let streamed = call(
        addr,
        "POST",
        "/v1/chat/completions",
        Some(&token),
        &with_budget(true),
    );
    assert_eq!(streamed.status, 200, "{}", streamed.body);
    assert!(
        streamed.body.ends_with("data: [DONE]\n\n"),
        "{}",
        streamed.body
    );
    let chunks: Vec<serde_json::Value> = streamed
        .body
        .split_terminator("\n\n")
        .filter_map(|e| e.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str(d).ok())
        .collect();
    assert!(
        chunks
            .iter()
            .any(|c| c["choices"][0]["delta"]["content"].is_string()),
        "{}",
        streamed.body
    );
    let completion = chunks
        .iter()
        .find_map(|c| c["usage"]["completion_tokens"].as_u64())
        .unwrap_or_else(|| panic!("no usage: {}", streamed.body));
    assert!((1..=most).contains(&completion), "{}", streamed.body);

    assert!(phone.terminate().status.success());
    assert!(server.terminate().status.success());
}

//! The family page in a real headless Chromium against real `porfiry run`
//! processes: sign in by the printed link; a friends-only note posted on
//! A's page shows on B's open page without a reload, B's reply to it shows
//! on both pages saying what it answers, and A's feed shows one club's
//! notes by the "Show" filter; an invitation made on
//! A's page and redeemed by `porfiry join` on another node's CLI shows that
//! node in A's friends list as connected, and B's page joins that node's
//! invitation; chat with the agent (scripted
//! model) streams and Stop closes the upstream request; the conversation
//! survives a reload; a phone's answer written by its server's model says
//! "via anna's server"; the Mind tab shows the core's ticks and diary and
//! its switch pauses and resumes thinking; the Node tab makes a backup for download (the
//! passphrase twice); a wrong Host, no cookie and a replayed link are
//! refused with a page that says what to do.
//!
//! Needs Debian's `chromium` and `chromium-driver` (`.ci/run` installs
//! them); set `PORFIRY_SCREENSHOT_DIR` to keep screenshots.

mod browser_common;

use std::time::{Duration, Instant};

use browser_common::Browser;
use porfiry_tests::api_client::call;
use porfiry_tests::mesh_node::{MeshNode, wait_for};
use porfiry_tests::{Reply, ScriptedLlm};

/// The one-time link `porfiry run` printed.
fn login_link(node: &MeshNode) -> String {
    let mut link = None;
    wait_for("the family page link", || {
        link = node
            .stdout_lines()
            .iter()
            .find_map(|l| l.strip_prefix("family page: "))
            .and_then(|rest| rest.split(' ').next())
            .map(str::to_owned);
        link.is_some()
    });
    link.expect("a link")
}

fn start_with_page(node: &mut MeshNode) {
    node.start_server_with(0, &["--api", "127.0.0.1:0"]);
    node.api_address();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_note_posted_on_one_page_shows_on_a_friends_page_and_an_invited_node_shows_connected() {
    let mut a = MeshNode::init("A");
    let mut b = MeshNode::init("B");
    start_with_page(&mut a);
    start_with_page(&mut b);
    a.cli_ok(&[
        "friends",
        "add",
        &b.peer_id,
        b.address.as_deref().unwrap(),
        "--name",
        "bob",
    ]);
    b.cli_ok(&[
        "friends",
        "add",
        &a.peer_id,
        a.address.as_deref().unwrap(),
        "--name",
        "anna",
    ]);

    a.cli_ok(&["club", "create", "chess"]);
    let browser = Browser::start(1280, 900).await;
    let c = &browser.client;
    // B's page stays open in the first window.
    c.goto(&login_link(&b)).await.unwrap();
    browser.labelled("New note").await;
    let b_window = c.window().await.unwrap();
    // A's page in a second one.
    let a_window = c.new_window(true).await.unwrap();
    c.switch_to_window(a_window.handle.clone()).await.unwrap();
    c.goto(&login_link(&a)).await.unwrap();
    // A's audiences: friends, groups, its club, each friend.
    browser
        .wait_for("//select[@id='note-audience']/option[normalize-space()='Club: chess']")
        .await;
    let text = "Dinner at seven, everyone";
    browser
        .labelled("New note")
        .await
        .send_keys(text)
        .await
        .unwrap();
    browser.select("Audience", "friends").await;
    browser.button("Post").await.click().await.unwrap();
    let posted = Instant::now();
    browser.wait_text("notes", text).await;
    c.switch_to_window(b_window.clone()).await.unwrap();
    let shown = browser.text_within("notes", text).await;
    let took = posted.elapsed();
    assert!(shown.contains(text));
    let line = browser.body_text().await;
    assert!(line.contains("anna"), "B's page names the author: {line}");
    println!("a friend's note showed on the open page {took:?} after Post");
    browser.screenshot("family-page-feed.png").await;
    // Filtered by its author, then to B's own notes (none).
    let filter = browser.labelled("Show").await;
    filter.select_by_label("anna").await.unwrap();
    browser.wait_text("notes", text).await;
    filter.select_by_value("own").await.unwrap();
    browser.wait_text("notes", "No notes yet.").await;
    filter.select_by_value("all").await.unwrap();

    // B answers A's note: "Reply", the New note box, Post. The reply says
    // what it answers on B's page and, once it has travelled, on A's.
    browser
        .wait_for(&format!(
            "//ol[@id='notes']/li[contains(., '{text}')]//button[normalize-space()='Reply']"
        ))
        .await
        .click()
        .await
        .unwrap();
    browser
        .labelled("New note")
        .await
        .send_keys("See you there")
        .await
        .unwrap();
    browser.button("Post").await.click().await.unwrap();
    let shown = browser
        .text_of("//ol[@id='notes']/li[@class='reply' and contains(., 'See you there')]")
        .await;
    assert!(shown.contains(&format!("reply to anna: {text}")), "{shown}");
    c.switch_to_window(a_window.handle.clone()).await.unwrap();
    let shown = browser
        .text_of("//ol[@id='notes']/li[@class='reply' and contains(., 'See you there')]")
        .await;
    assert!(shown.contains(&format!("reply to me: {text}")), "{shown}");
    assert!(shown.contains("bob"), "the reply's author: {shown}");
    // A's feed for one club shows that club's notes only.
    browser
        .labelled("New note")
        .await
        .send_keys("Blitz on Thursday")
        .await
        .unwrap();
    browser
        .labelled("Audience")
        .await
        .select_by_label("Club: chess")
        .await
        .unwrap();
    browser.button("Post").await.click().await.unwrap();
    browser.wait_text("notes", "Blitz on Thursday").await;
    let show = browser.labelled("Show").await;
    show.select_by_label("Club: chess").await.unwrap();
    let shown = browser
        .text_of("//ol[@id='notes' and starts-with(@data-shown, 'audience:club:chess@')]")
        .await;
    assert!(
        shown.contains("Blitz on Thursday") && !shown.contains(text),
        "{shown}"
    );
    // The filtered list redraws the controls: find the select again.
    browser
        .labelled("Show")
        .await
        .select_by_value("all")
        .await
        .unwrap();

    // Invite from A's page; a new node joins from its CLI.
    c.switch_to_window(a_window.handle.clone()).await.unwrap();
    browser.button("Friends").await.click().await.unwrap();
    browser
        .labelled("Their name")
        .await
        .send_keys("carol")
        .await
        .unwrap();
    browser.button("Invite").await.click().await.unwrap();
    let code_box = browser.labelled("Invitation code").await;
    let mut code = String::new();
    for _ in 0..100 {
        code = code_box.prop("value").await.unwrap().unwrap_or_default();
        if !code.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(code.starts_with("porfiry:"), "{code}");
    let qr = browser.wait_for("//img[@id='invitation-qr']").await;
    assert!(
        qr.attr("src")
            .await
            .unwrap()
            .unwrap()
            .starts_with("data:image/svg+xml")
    );
    let mut carol = MeshNode::init("C");
    let joined = carol.cli_ok(&["join", &code, "--name", "anna"]);
    assert!(!joined.is_empty());
    carol.start_server_with(0, &["--no-api"]);
    let row = browser
        .text_of("//li[@data-peer and .//strong[normalize-space()='carol'] and .//*[contains(., 'direct')]]")
        .await;
    assert!(row.contains(&carol.peer_id), "{row}");
    browser.screenshot("family-page-friends.png").await;

    // B joins an invitation of carol's from its page.
    let invitation = carol.cli_ok(&["invite", "--name", "bob", "--no-qr"]);
    let carol_code = invitation.lines().next().unwrap().trim().to_owned();
    c.switch_to_window(b_window.clone()).await.unwrap();
    browser.button("Friends").await.click().await.unwrap();
    browser
        .labelled("Code from another node")
        .await
        .send_keys(&carol_code)
        .await
        .unwrap();
    browser.button("Join").await.click().await.unwrap();
    browser
        .wait_for(&format!(
            "//li[@data-peer='{}' and .//*[contains(., 'direct')]]",
            carol.peer_id
        ))
        .await;
    c.switch_to_window(a_window.handle.clone()).await.unwrap();
    c.set_window_size(375, 800).await.unwrap();
    browser.button("Feed").await.click().await.unwrap();
    browser.screenshot("family-page-phone.png").await;

    browser.close().await;
    a.terminate();
    b.terminate();
    carol.terminate();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_streams_stop_closes_the_upstream_and_the_conversation_survives_a_reload() {
    let llm = ScriptedLlm::queue(vec![
        Reply::text("Tea is ready now, come and get it").hang_after(3),
        Reply::text("TOOL_CALL: get_current_time|"),
        Reply::text("It is tea time."),
    ])
    .unwrap();
    let mut node = MeshNode::init("A");
    node.start_with_model(&llm, &[]);
    let browser = Browser::start(1280, 900).await;
    let c = &browser.client;
    c.goto(&login_link(&node)).await.unwrap();
    browser.button("Chat").await.click().await.unwrap();
    browser
        .labelled("Message")
        .await
        .send_keys("Is tea ready?")
        .await
        .unwrap();
    browser.button("Send").await.click().await.unwrap();
    browser.wait_text("messages", "Tea is ready").await;
    assert_eq!(llm.disconnects(), 0, "the answer is still streaming");
    browser.button("Stop").await.click().await.unwrap();
    let closed = tokio::time::timeout(Duration::from_secs(30), llm.wait_for_disconnects(1))
        .await
        .expect("the scripted server sees the upstream close");
    assert_eq!(closed.len(), 1);
    browser.screenshot("family-page-chat.png").await;
    c.refresh().await.unwrap();
    browser.button("Chat").await.click().await.unwrap();
    browser.wait_text("messages", "Is tea ready?").await;
    browser.wait_text("messages", "Tea is ready").await;
    // A turn with a tool call: the call shows as a small line above the answer.
    browser
        .labelled("Message")
        .await
        .send_keys("What time is it?")
        .await
        .unwrap();
    browser.button("Send").await.click().await.unwrap();
    browser.wait_text("messages", "It is tea time.").await;
    browser
        .wait_for("//ol[@id='messages']/li[@class='tool' and contains(., 'get_current_time ✓')]")
        .await;
    browser.close().await;
    node.terminate();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_phones_answer_from_its_servers_model_says_whose_server_wrote_it() {
    let llm = ScriptedLlm::queue(vec![Reply::text("Hello from home.")]).unwrap();
    let mut server = MeshNode::init("server");
    let mut phone = MeshNode::init("phone");
    server.cli_ok(&["friends", "add", &phone.peer_id, "--allow-offload"]);
    let url = llm.url();
    let address = server.start_server_with(
        0,
        &["--llm-url", &url, "--llm-model", "scripted", "--offload"],
    );
    phone.cli_ok(&[
        "friends",
        "add",
        &server.peer_id,
        &address,
        "--name",
        "anna",
    ]);
    phone.start(&["--profile", "phone", "--llm-peer", "anna"]);
    let (addr, token) = (phone.api_address(), phone.api_token());
    wait_for("the phone to connect to its server", || {
        let status = call(addr, "GET", "/api/status", Some(&token), "").json();
        status["friends"]
            .as_array()
            .is_some_and(|f| f.iter().any(|f| f["connected"] == true))
    });
    let browser = Browser::start(375, 800).await;
    browser.client.goto(&login_link(&phone)).await.unwrap();
    browser.button("Chat").await.click().await.unwrap();
    browser
        .labelled("Message")
        .await
        .send_keys("hi")
        .await
        .unwrap();
    browser.button("Send").await.click().await.unwrap();
    browser.wait_text("messages", "Hello from home.").await;
    let via = r#"//ol[@id='messages']/li[contains(@class, 'via') and normalize-space()="via anna's server"]"#;
    browser.wait_for(via).await;
    // Kept with the conversation.
    browser.client.refresh().await.unwrap();
    browser.button("Chat").await.click().await.unwrap();
    browser.wait_for(via).await;
    browser.close().await;
    phone.terminate();
    server.terminate();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_host_no_cookie_and_a_replayed_link_are_refused_saying_what_to_do() {
    let mut node = MeshNode::init("A");
    node.start(&["--profile", "phone", "--api", "127.0.0.1:0"]);
    let addr = node.api_address();
    let browser = Browser::start(1024, 768).await;
    let c = &browser.client;
    c.goto(&format!("http://{addr}/")).await.unwrap();
    let text = browser.body_text().await;
    assert!(
        text.contains("Sign in to this node") && text.contains("porfiry web"),
        "{text}"
    );

    let link = login_link(&node);
    c.goto(&link).await.unwrap();
    browser.labelled("New note").await;
    c.goto(&link).await.unwrap();
    let text = browser.body_text().await;
    assert!(text.contains("already used"), "{text}");

    // Chromium resolves any *.localhost name to loopback: a rebinding page's view.
    c.goto(&format!("http://rebound.localhost:{}/", addr.port()))
        .await
        .unwrap();
    let text = browser.body_text().await;
    assert!(text.contains("Open the node by its address"), "{text}");
    c.goto(&format!("http://{addr}/")).await.unwrap();
    browser.button("Friends").await.click().await.unwrap();
    browser
        .labelled("Code from another node")
        .await
        .send_keys("porfiry:nonsense")
        .await
        .unwrap();
    browser.button("Join").await.click().await.unwrap();
    let error = browser.text_within("friends", "That did not work").await;
    assert!(error.contains("code"), "says what was wrong");

    // `porfiry web` prints a fresh link that works.
    let out = node.cli_ok(&["web"]);
    let fresh = out.lines().next().unwrap().to_owned();
    assert!(
        fresh.starts_with(&format!("http://{addr}/login?code=")),
        "{out}"
    );
    c.goto(&fresh).await.unwrap();
    browser.labelled("New note").await;
    browser.close().await;
    node.terminate();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mind_tab_shows_the_cores_ticks_and_diary_as_it_thinks() {
    use porfiry_skills::cognition::texts::prompt::core_system_prompt;
    use porfiry_tests::{Rule, When};
    let head: String = core_system_prompt(porfiry_skills::Language::En)
        .chars()
        .take(40)
        .collect();
    let llm = ScriptedLlm::start(vec![
        Rule::new(
            When::system_contains(head),
            Reply::text("The garden.\nTOOL_CALL: diary_add|the garden needs water|e2e"),
        ),
        Rule::always(Reply::text(
            r#"{"novel": "yes", "novelty": 0.9, "new_ideas": ["garden"], "tags": ["e2e"]}"#,
        )),
    ])
    .unwrap();
    let mut node = MeshNode::init("A");
    node.start_thinking_with_model(&llm);
    let browser = Browser::start(1280, 900).await;
    browser.client.goto(&login_link(&node)).await.unwrap();
    browser.button("Mind").await.click().await.unwrap();
    // The page updates itself as the core writes: no reload.
    browser.wait_text("diary", "the garden needs water").await;
    let line = browser.text_within("ticks", "#1").await;
    assert!(line.contains("commands run 1/1"), "{line}");
    browser.screenshot("family-page-mind.png").await;
    // The switch pauses thinking in the node's database (the core reads it
    // before each tick) and resumes it.
    let paused = |node: &MeshNode| {
        node.store()
            .config_get::<bool>(porfiry_skills::cognition::THINKING_PAUSED_KEY)
            .unwrap()
    };
    let switch = browser
        .labelled("Thinking (off: the agent starts no new tick)")
        .await;
    assert_eq!(
        switch.prop("checked").await.unwrap().as_deref(),
        Some("true")
    );
    switch.click().await.unwrap();
    wait_for("thinking paused", || paused(&node) == Some(true));
    switch.click().await.unwrap();
    wait_for("thinking resumed", || paused(&node) == Some(false));
    browser.close().await;
    node.terminate();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_node_tab_makes_a_backup_for_download() {
    let mut node = MeshNode::init("A");
    node.start(&["--profile", "phone", "--api", "127.0.0.1:0"]);
    let browser = Browser::start(1024, 768).await;
    browser.client.goto(&login_link(&node)).await.unwrap();
    browser.button("Node").await.click().await.unwrap();
    let pass = browser.labelled("Backup passphrase").await;
    let again = browser.labelled("The same again").await;
    pass.send_keys("a family passphrase").await.unwrap();
    again.send_keys("a family passphrase!").await.unwrap();
    browser
        .button("Download a backup")
        .await
        .click()
        .await
        .unwrap();
    browser
        .wait_text("node", "The two passphrases differ.")
        .await;
    again.clear().await.unwrap();
    again.send_keys("a family passphrase").await.unwrap();
    browser
        .button("Download a backup")
        .await
        .click()
        .await
        .unwrap();
    // The node sealed it and the page holds it behind a download link
    // named for the node.
    let saved = format!("Backup saved: porfiry-{}-", &node.peer_id[..12]);
    let link = browser.wait_text("backup-done", &saved).await;
    let name = link.text().await.unwrap();
    assert!(name.ends_with(".porfiry-backup"), "{name}");
    let href = link.attr("href").await.unwrap().unwrap_or_default();
    assert!(href.starts_with("blob:"), "{href}");
    browser.screenshot("family-page-backup.png").await;
    browser.close().await;
    node.terminate();
}

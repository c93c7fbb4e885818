//! The node's OpenAI-compatible client against the scripted server over real loopback
//! HTTP: success, every classified failure, retries, timeouts and the API key header.

use std::time::Duration;

use porfiry_node::llm::client::MAX_REPLY_BYTES;
use porfiry_node::llm::{ChatMessage, LlmConfig, LlmError, LlmTarget, OpenAiClient};
use porfiry_tests::{Reply, Rule, ScriptedLlm, When};
use serde_json::json;

const RETRIES: u32 = 2;

/// Fast settings: 1 ms backoff, two retries, a generous timeout for slow CI machines.
fn config(base: &str) -> LlmTarget {
    LlmTarget {
        config: LlmConfig {
            max_retries: Some(RETRIES),
            retry_base_delay_ms: Some(1),
            timeout_ms: Some(10_000),
            ..LlmConfig::default()
        },
        ..LlmTarget::new(base, "test-model")
    }
}

/// [`config`] with one call setting changed.
fn config_with(base: &str, change: impl FnOnce(&mut LlmConfig)) -> LlmTarget {
    let mut target = config(base);
    change(&mut target.config);
    target
}

fn client(llm: &ScriptedLlm) -> OpenAiClient {
    OpenAiClient::new(config(&llm.url())).unwrap()
}

fn history() -> Vec<ChatMessage> {
    vec![
        ChatMessage::user("hi"),
        ChatMessage::assistant("hello"),
        ChatMessage::user("films?"),
    ]
}

async fn ask(client: &OpenAiClient) -> Result<String, LlmError> {
    client.chat("SYSTEM PROMPT", &history()).await
}

#[tokio::test]
async fn success_returns_the_text_and_sends_the_openai_body() {
    let llm = ScriptedLlm::start(vec![Rule::always(Reply::text("  Here you are.\n"))]).unwrap();
    let answer = ask(&client(&llm)).await.unwrap();
    assert_eq!(answer, "Here you are.");
    let seen = llm.recorded();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].path, "/v1/chat/completions");
    assert_eq!(seen[0].method, "POST");
    assert_eq!(seen[0].header("content-type"), Some("application/json"));
    assert_eq!(
        seen[0].body,
        json!({
            "model": "test-model",
            "temperature": 0.2,
            "stream": false,
            "messages": [
                {"role": "system", "content": "SYSTEM PROMPT"},
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": "hello"},
                {"role": "user", "content": "films?"},
            ]
        })
    );
}

#[tokio::test]
async fn base_without_path_is_served_under_v1() {
    let llm = ScriptedLlm::queue(vec![Reply::text("ok")]).unwrap();
    let base = format!("http://{}", llm.addr());
    let client = OpenAiClient::new(config(&base)).unwrap();
    assert_eq!(ask(&client).await.unwrap(), "ok");
    assert_eq!(llm.recorded()[0].path, "/v1/chat/completions");
}

#[tokio::test]
async fn endpoint_down_is_unreachable_with_the_url_after_every_attempt() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let base = format!("http://127.0.0.1:{port}/v1");
    let err = ask(&OpenAiClient::new(config(&base)).unwrap())
        .await
        .unwrap_err();
    let LlmError::Unreachable {
        url,
        attempts,
        detail,
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(url, &format!("{base}/chat/completions"));
    assert_eq!(*attempts, RETRIES + 1);
    assert!(detail.to_lowercase().contains("refused"), "{detail}");
    let text = err.to_string();
    assert!(
        text.contains("unreachable") && text.contains(&base),
        "{text}"
    );
}

#[tokio::test]
async fn one_500_then_success_retries_once() {
    let llm =
        ScriptedLlm::queue(vec![Reply::status(500, "model loading"), Reply::text("ok")]).unwrap();
    assert_eq!(ask(&client(&llm)).await.unwrap(), "ok");
    let bodies = llm.requests();
    assert_eq!(bodies.len(), 2);
    assert_eq!(bodies[0], bodies[1], "the retry sends the same request");
}

#[tokio::test]
async fn a_429_then_success_retries_once() {
    let llm = ScriptedLlm::queue(vec![
        Reply::status(429, r#"{"error":"slow down"}"#),
        Reply::text("ok"),
    ])
    .unwrap();
    assert_eq!(ask(&client(&llm)).await.unwrap(), "ok");
    assert_eq!(llm.request_count(), 2);
}

#[tokio::test]
async fn persistent_5xx_gives_up_after_the_configured_attempts() {
    let llm = ScriptedLlm::start(vec![Rule::always(Reply::status(503, "overloaded"))]).unwrap();
    let err = ask(&client(&llm)).await.unwrap_err();
    assert_eq!(llm.request_count(), RETRIES as usize + 1);
    let LlmError::ServerError {
        status: 503,
        attempts,
        snippet,
        ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!((*attempts, snippet.as_str()), (RETRIES + 1, "overloaded"));
    assert!(err.to_string().contains("HTTP 503"), "{err}");
}

#[tokio::test]
async fn persistent_429_is_rate_limited() {
    let llm = ScriptedLlm::start(vec![Rule::always(Reply::status(429, "quota"))]).unwrap();
    let err = ask(&client(&llm)).await.unwrap_err();
    assert!(
        matches!(err, LlmError::RateLimited { attempts: 3, .. }),
        "{err:?}"
    );
    assert_eq!(llm.request_count(), 3);
}

#[tokio::test]
async fn zero_retries_means_one_attempt() {
    let llm = ScriptedLlm::start(vec![Rule::always(Reply::status(500, "x"))]).unwrap();
    let client = OpenAiClient::new(config_with(&llm.url(), |c| c.max_retries = Some(0))).unwrap();
    let err = ask(&client).await.unwrap_err();
    assert!(
        matches!(err, LlmError::ServerError { attempts: 1, .. }),
        "{err:?}"
    );
    assert_eq!(llm.request_count(), 1);
}

#[tokio::test]
async fn unauthorized_is_reported_as_an_api_key_problem_without_retry() {
    for status in [401, 403] {
        let llm =
            ScriptedLlm::start(vec![Rule::always(Reply::status(status, "invalid key"))]).unwrap();
        let err = ask(&client(&llm)).await.unwrap_err();
        assert!(
            matches!(&err, LlmError::Unauthorized { status: s, .. } if *s == status),
            "{err:?}"
        );
        assert!(err.to_string().contains("API key"), "{err}");
        assert_eq!(llm.request_count(), 1, "auth failures are not retried");
    }
}

#[tokio::test]
async fn wrong_base_path_is_not_found_naming_the_model() {
    let llm = ScriptedLlm::start(vec![Rule::always(Reply::text("never"))]).unwrap();
    let base = format!("http://{}/api", llm.addr());
    let err = ask(&OpenAiClient::new(config(&base)).unwrap())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, LlmError::NotFound { model, .. } if model == "test-model"),
        "{err:?}"
    );
    assert!(err.to_string().contains("wrong base URL"), "{err}");
    assert_eq!(llm.recorded()[0].path, "/api/chat/completions");
    assert_eq!(llm.request_count(), 1);
}

#[tokio::test]
async fn other_status_is_reported_with_the_body_and_not_retried() {
    let llm = ScriptedLlm::start(vec![Rule::always(Reply::status(
        400,
        "context length exceeded",
    ))])
    .unwrap();
    let err = ask(&client(&llm)).await.unwrap_err();
    assert!(
        matches!(&err, LlmError::Status { status: 400, snippet, .. } if snippet == "context length exceeded"),
        "{err:?}"
    );
    assert_eq!(llm.request_count(), 1);
}

#[tokio::test]
async fn unmatched_request_gets_the_scripted_servers_418() {
    let llm = ScriptedLlm::queue(vec![]).unwrap();
    let err = ask(&client(&llm)).await.unwrap_err();
    let LlmError::Status {
        status: 418,
        snippet,
        ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert!(
        snippet.contains("no rule matched request #1") && snippet.contains("films?"),
        "{snippet}"
    );
}

#[tokio::test]
async fn garbage_body_is_bad_json_and_not_retried() {
    let llm = ScriptedLlm::start(vec![Rule::always(Reply::garbage(
        &b"\x00\xffnot json{"[..],
    ))])
    .unwrap();
    let err = ask(&client(&llm)).await.unwrap_err();
    let LlmError::BadJson { detail, .. } = &err else {
        panic!("{err:?}")
    };
    assert!(detail.starts_with("not JSON"), "{detail}");
    assert_eq!(llm.request_count(), 1);
}

#[tokio::test]
async fn wrong_json_shape_is_bad_json() {
    let llm = ScriptedLlm::queue(vec![Reply::Json(json!({"choices": {"oops": 1}}))]).unwrap();
    let err = ask(&client(&llm)).await.unwrap_err();
    assert!(
        matches!(&err, LlmError::BadJson { detail, .. } if detail.contains("shape")),
        "{err:?}"
    );
}

#[tokio::test]
async fn empty_choices_is_reported() {
    let llm = ScriptedLlm::queue(vec![Reply::Json(json!({"id": "x", "choices": []}))]).unwrap();
    let err = ask(&client(&llm)).await.unwrap_err();
    assert!(matches!(err, LlmError::EmptyChoices { .. }), "{err:?}");
    assert!(err.to_string().contains("no choices"), "{err}");
}

#[tokio::test]
async fn error_object_with_status_200_is_reported() {
    let llm = ScriptedLlm::queue(vec![Reply::Json(
        json!({"error": {"message": "model not found"}}),
    )])
    .unwrap();
    let err = ask(&client(&llm)).await.unwrap_err();
    assert!(
        matches!(&err, LlmError::Status { status: 200, snippet, .. } if snippet == "model not found"),
        "{err:?}"
    );
}

#[tokio::test]
async fn missing_content_is_reported() {
    let llm = ScriptedLlm::queue(vec![Reply::Json(json!({"choices": [
        {"message": {"role": "assistant", "content": null, "tool_calls": [{"id": "1"}]}, "finish_reason": "tool_calls"}
    ]}))])
    .unwrap();
    let err = ask(&client(&llm)).await.unwrap_err();
    assert!(
        matches!(&err, LlmError::MissingContent { finish_reason: Some(f), .. } if f == "tool_calls"),
        "{err:?}"
    );
}

#[tokio::test]
async fn reasoning_is_kept_apart_from_the_answer() {
    let llm = ScriptedLlm::queue(vec![
        Reply::Json(json!({"choices": [{"message": {"content": "42", "reasoning_content": "6*7"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 9, "completion_tokens": 2, "total_tokens": 11}})),
        Reply::text("<think>maybe TOOL_CALL: x|y</think>\nfinal"),
        Reply::Json(json!({"choices": [{"message": {"content": "", "reasoning": "still thinking"}, "finish_reason": "length"}]})),
        Reply::Json(json!({"choices": [{"message": {"content": null, "reasoning_content": "TOOL_CALL: media_search|x"}, "finish_reason": "stop"}]})),
    ])
    .unwrap();
    let client = client(&llm);
    let c = client.complete("s", &history()).await.unwrap();
    assert_eq!(
        (c.text.as_str(), c.reasoning.as_deref()),
        ("42", Some("6*7"))
    );
    assert_eq!(c.usage.and_then(|u| u.total_tokens), Some(11));
    let c = client.complete("s", &history()).await.unwrap();
    assert_eq!(
        (c.text.as_str(), c.reasoning.as_deref()),
        ("final", Some("maybe TOOL_CALL: x|y"))
    );
    let err = client.chat("s", &history()).await.unwrap_err();
    assert!(matches!(err, LlmError::OnlyReasoning { .. }), "{err:?}");
    assert_eq!(
        client.chat("s", &history()).await.unwrap(),
        "TOOL_CALL: media_search|x"
    );
}

#[tokio::test]
async fn slow_reply_past_the_timeout_is_a_timeout_and_not_retried() {
    let llm = ScriptedLlm::start(vec![Rule::always(Reply::delayed(
        Duration::from_secs(2),
        Reply::text("late"),
    ))])
    .unwrap();
    let timeout = Duration::from_millis(300);
    let client = OpenAiClient::new(config_with(&llm.url(), |c| {
        c.timeout_ms = Some(u64::try_from(timeout.as_millis()).unwrap());
    }))
    .unwrap();
    let err = ask(&client).await.unwrap_err();
    assert!(
        matches!(&err, LlmError::Timeout { timeout: t, .. } if *t == timeout),
        "{err:?}"
    );
    assert!(err.to_string().contains("timeout"), "{err}");
    assert_eq!(llm.request_count(), 1);
}

#[tokio::test]
async fn oversized_reply_is_refused() {
    let llm = ScriptedLlm::queue(vec![Reply::garbage(vec![b' '; MAX_REPLY_BYTES + 1])]).unwrap();
    let err = ask(&client(&llm)).await.unwrap_err();
    assert!(
        matches!(
            err,
            LlmError::TooLarge {
                limit: MAX_REPLY_BYTES,
                ..
            }
        ),
        "{err:?}"
    );
}

#[tokio::test]
async fn api_key_is_sent_as_bearer_only_when_set() {
    let llm = ScriptedLlm::start(vec![Rule::always(Reply::text("ok"))]).unwrap();
    let with_key = config(&llm.url()).with_api_key(Some("sk-test-123".into()));
    OpenAiClient::new(with_key)
        .unwrap()
        .chat("s", &[])
        .await
        .unwrap();
    OpenAiClient::new(config(&llm.url()))
        .unwrap()
        .chat("s", &[])
        .await
        .unwrap();
    let seen = llm.recorded();
    assert_eq!(seen[0].header("authorization"), Some("Bearer sk-test-123"));
    assert_eq!(seen[1].header("authorization"), None);
}

#[tokio::test]
async fn replies_can_depend_on_the_last_message() {
    let llm = ScriptedLlm::start(vec![
        Rule::new(
            When::last_user_contains("films"),
            Reply::text("TOOL_CALL: read_skill|media"),
        ),
        Rule::new(
            When::last_message_contains("# media"),
            Reply::text("TOOL_CALL: media_search|space"),
        ),
        Rule::always(Reply::text("done")),
    ])
    .unwrap();
    let client = client(&llm);
    let mut history = vec![ChatMessage::user("any films?")];
    let mut replies = Vec::new();
    for tool_reply in ["# media skill", "1 result"] {
        let reply = client.chat("s", &history).await.unwrap();
        history.push(ChatMessage::assistant(reply.clone()));
        history.push(ChatMessage::user(tool_reply));
        replies.push(reply);
    }
    replies.push(client.chat("s", &history).await.unwrap());
    assert_eq!(
        replies,
        [
            "TOOL_CALL: read_skill|media",
            "TOOL_CALL: media_search|space",
            "done"
        ]
    );
    assert_eq!(llm.requests()[2]["messages"].as_array().unwrap().len(), 6);
}

#[tokio::test]
async fn bad_settings_are_refused_before_any_request() {
    let err = OpenAiClient::new(config("localhost:8080/v1")).unwrap_err();
    assert!(matches!(err, LlmError::InvalidBaseUrl { .. }), "{err:?}");
    let err = OpenAiClient::new(config_with("http://h/v1", |c| {
        c.temperature = Some(f64::NAN)
    }))
    .unwrap_err();
    assert!(
        matches!(err, LlmError::InvalidTemperature { .. }),
        "{err:?}"
    );
    let err =
        OpenAiClient::new(config_with("http://h/v1", |c| c.temperature = Some(-1.0))).unwrap_err();
    assert!(
        matches!(err, LlmError::InvalidTemperature { .. }),
        "{err:?}"
    );
}

#[tokio::test]
async fn connection_broken_mid_body_is_retried_then_reported() {
    let llm = ScriptedLlm::start(vec![
        Rule::once(Reply::BrokenBody(br#"{"choices": ["#.to_vec())),
        Rule::always(Reply::text("ok")),
    ])
    .unwrap();
    assert_eq!(ask(&client(&llm)).await.unwrap(), "ok");
    assert_eq!(llm.request_count(), 2);

    let llm = ScriptedLlm::start(vec![Rule::always(Reply::BrokenBody(b"{".to_vec()))]).unwrap();
    let err = ask(&client(&llm)).await.unwrap_err();
    assert!(
        matches!(err, LlmError::Transport { attempts: 3, .. }),
        "{err:?}"
    );
    assert_eq!(llm.request_count(), 3);
}

// ---- Streamed answers (`"stream": true`, server-sent events) ----

use futures::StreamExt;
use porfiry_node::llm::{PieceStream, StreamPiece};

/// Every piece of a stream until its end, and the error it ended with, if any.
async fn drain(mut stream: PieceStream) -> (Vec<StreamPiece>, Option<LlmError>) {
    let mut pieces = Vec::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(piece) => pieces.push(piece),
            Err(e) => {
                assert!(stream.next().await.is_none(), "nothing follows an error");
                return (pieces, Some(e));
            }
        }
    }
    (pieces, None)
}

/// The answer text of the pieces, joined.
fn answer(pieces: &[StreamPiece]) -> String {
    pieces
        .iter()
        .filter_map(|p| match p {
            StreamPiece::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

fn texts(pieces: &[StreamPiece]) -> usize {
    pieces
        .iter()
        .filter(|p| matches!(p, StreamPiece::Text(_)))
        .count()
}

async fn stream(client: &OpenAiClient) -> Result<PieceStream, LlmError> {
    client.stream_chat("SYSTEM PROMPT", &history()).await
}

#[tokio::test]
async fn streamed_text_arrives_in_pieces_and_reassembles_exactly() {
    let text = "Здравствуй, мир! A streamed answer, 🦀 and all.";
    let llm = ScriptedLlm::queue(vec![Reply::text(text).chunks_of(3)]).unwrap();
    let (pieces, error) = drain(stream(&client(&llm)).await.unwrap()).await;
    assert_eq!(error, None);
    assert_eq!(answer(&pieces), text);
    assert_eq!(texts(&pieces), text.chars().count().div_ceil(3));
    let Some(StreamPiece::Done {
        finish_reason,
        usage,
    }) = pieces.last()
    else {
        panic!("{pieces:?}")
    };
    assert_eq!(finish_reason.as_deref(), Some("stop"));
    assert!(usage.is_some(), "asked for and sent: {pieces:?}");
    let body = &llm.requests()[0];
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(
        llm.recorded()[0].header("accept"),
        Some("text/event-stream")
    );
    assert_eq!(
        llm.disconnects(),
        0,
        "a stream read to its end is not a hang-up"
    );
}

#[tokio::test]
async fn usage_and_finish_reason_arrive_with_done() {
    let llm = ScriptedLlm::queue(vec![
        Reply::text("cut short")
            .usage(11, 7)
            .finish_reason("length"),
    ])
    .unwrap();
    let (pieces, error) = drain(stream(&client(&llm)).await.unwrap()).await;
    assert_eq!(error, None);
    let usage = porfiry_node::llm::wire::Usage {
        prompt_tokens: Some(11),
        completion_tokens: Some(7),
        total_tokens: Some(18),
    };
    assert_eq!(
        pieces.last(),
        Some(&StreamPiece::Done {
            finish_reason: Some("length".into()),
            usage: Some(usage),
        })
    );
}

#[tokio::test]
async fn the_thought_is_kept_apart_from_the_answer() {
    let llm = ScriptedLlm::queue(vec![
        Reply::text("The answer is 42.").with_reasoning("Six times seven."),
    ])
    .unwrap();
    let (pieces, _) = drain(stream(&client(&llm)).await.unwrap()).await;
    let thought: String = pieces
        .iter()
        .filter_map(|p| match p {
            StreamPiece::Reasoning(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(thought, "Six times seven.");
    assert_eq!(answer(&pieces), "The answer is 42.");
    assert!(matches!(pieces[0], StreamPiece::Reasoning(_)), "{pieces:?}");
}

#[tokio::test]
async fn an_error_object_mid_stream_ends_it_with_the_servers_message() {
    let llm = ScriptedLlm::queue(vec![
        Reply::text("one two three four").error_after(2, "model crashed"),
    ])
    .unwrap();
    let (pieces, error) = drain(stream(&client(&llm)).await.unwrap()).await;
    assert_eq!(answer(&pieces), "one two ");
    let error = error.expect("an error, not a silent end");
    assert!(
        matches!(&error, LlmError::Status { status: 200, snippet, .. } if snippet == "model crashed"),
        "{error:?}"
    );
    assert!(error.to_string().contains("model crashed"), "{error}");
    assert_eq!(llm.request_count(), 1, "no retry after the first byte");
}

#[tokio::test]
async fn a_server_that_stops_sending_trips_the_idle_deadline() {
    // The deadline is the behaviour under test, so it is short; nothing asserts on time.
    let idle = Duration::from_millis(500);
    let llm = ScriptedLlm::queue(vec![Reply::text("first then silence").hang_after(1)]).unwrap();
    let client = OpenAiClient::new(config_with(&llm.url(), |c| {
        c.idle_timeout_ms = Some(500);
    }))
    .unwrap();
    let (pieces, error) = drain(stream(&client).await.unwrap()).await;
    assert_eq!(answer(&pieces), "first ");
    let error = error.expect("the idle deadline fires");
    assert!(
        matches!(&error, LlmError::Timeout { timeout, .. } if *timeout == idle),
        "{error:?}"
    );
    // The client let go of the hung connection, and the server saw it.
    let closed = tokio::time::timeout(Duration::from_secs(10), llm.wait_for_disconnects(1))
        .await
        .expect("the server sees the connection close");
    assert_eq!(closed, vec![1]);
}

#[tokio::test]
async fn a_model_that_never_starts_trips_the_first_token_deadline_without_retry() {
    let llm = ScriptedLlm::queue(vec![Reply::delayed(
        Duration::from_secs(600),
        Reply::text("never"),
    )])
    .unwrap();
    let client = OpenAiClient::new(config_with(&llm.url(), |c| {
        c.first_token_timeout_ms = Some(300);
    }))
    .unwrap();
    let error = stream(&client).await.err().expect("a deadline error");
    assert!(
        matches!(&error, LlmError::Timeout { timeout, .. } if *timeout == Duration::from_millis(300)),
        "{error:?}"
    );
    assert_eq!(llm.request_count(), 1);
}

#[tokio::test]
async fn keep_alive_comments_are_not_a_first_token() {
    // The server answers at once but only with comments: the first-token deadline (not
    // the much longer idle one) still applies.
    let llm = ScriptedLlm::queue(vec![Reply::sse_then_hang(vec![
        b": ping\n\n".to_vec(),
        b": still loading\n\n".to_vec(),
    ])])
    .unwrap();
    let client = OpenAiClient::new(config_with(&llm.url(), |c| {
        c.first_token_timeout_ms = Some(500);
        c.idle_timeout_ms = Some(60_000);
    }))
    .unwrap();
    let (pieces, error) = drain(stream(&client).await.unwrap()).await;
    assert_eq!(pieces, vec![]);
    assert!(
        matches!(&error, Some(LlmError::Timeout { timeout, .. }) if *timeout == Duration::from_millis(500)),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_long_stream_outlives_the_whole_reply_timeout() {
    // 30 pieces 20 ms apart take well over the 100 ms whole-reply timeout, which
    // applies to `complete` only; the stream's own deadlines are generous here.
    let llm = ScriptedLlm::queue(vec![
        Reply::text("x".repeat(30))
            .chunks_of(1)
            .every(Duration::from_millis(20)),
    ])
    .unwrap();
    let client = OpenAiClient::new(config_with(&llm.url(), |c| c.timeout_ms = Some(100))).unwrap();
    let (pieces, error) = drain(stream(&client).await.unwrap()).await;
    assert_eq!(error, None);
    assert_eq!(answer(&pieces), "x".repeat(30));
}

#[tokio::test]
async fn a_stream_that_never_ends_trips_the_total_deadline() {
    // Pieces keep coming (so the idle deadline never fires) for far longer than the
    // total deadline under test.
    let llm = ScriptedLlm::queue(vec![
        Reply::text("tick ".repeat(10_000)).every(Duration::from_millis(20)),
    ])
    .unwrap();
    let client = OpenAiClient::new(config_with(&llm.url(), |c| {
        c.stream_timeout_ms = Some(500);
    }))
    .unwrap();
    let (pieces, error) = drain(stream(&client).await.unwrap()).await;
    assert!(texts(&pieces) < 10_000);
    assert!(
        matches!(&error, Some(LlmError::Timeout { timeout, .. }) if *timeout == Duration::from_millis(500)),
        "{error:?}"
    );
    let closed = tokio::time::timeout(Duration::from_secs(10), llm.wait_for_disconnects(1))
        .await
        .expect("the server sees the connection close");
    assert_eq!(closed, vec![1]);
}

#[tokio::test]
async fn dropping_the_stream_closes_the_upstream_connection() {
    let llm = ScriptedLlm::queue(vec![Reply::text("a b c d e f").hang_after(2)]).unwrap();
    let mut pieces = stream(&client(&llm)).await.unwrap();
    assert_eq!(
        pieces.next().await.unwrap().unwrap(),
        StreamPiece::Text("a ".into())
    );
    assert_eq!(llm.disconnects(), 0);
    drop(pieces);
    let closed = tokio::time::timeout(Duration::from_secs(10), llm.wait_for_disconnects(1))
        .await
        .expect("the server sees the connection close");
    assert_eq!(closed, vec![1]);
    assert_eq!(llm.closed_streams(), vec![1]);
}

#[tokio::test]
async fn dropping_a_paced_stream_mid_way_closes_it_too() {
    let llm = ScriptedLlm::queue(vec![
        Reply::text("word ".repeat(1_000)).every(Duration::from_millis(5)),
    ])
    .unwrap();
    let mut pieces = stream(&client(&llm)).await.unwrap();
    pieces.next().await.unwrap().unwrap();
    drop(pieces);
    let closed = tokio::time::timeout(Duration::from_secs(10), llm.wait_for_disconnects(1))
        .await
        .expect("the server sees the connection close");
    assert_eq!(closed, vec![1]);
}

#[tokio::test]
async fn failures_before_the_first_byte_are_retried() {
    let llm = ScriptedLlm::queue(vec![
        Reply::status(503, "loading model"),
        Reply::BrokenBody(vec![]),
        Reply::text("finally"),
    ])
    .unwrap();
    let (pieces, error) = drain(stream(&client(&llm)).await.unwrap()).await;
    assert_eq!(error, None);
    assert_eq!(answer(&pieces), "finally");
    assert_eq!(llm.request_count(), 3);
    let bodies = llm.requests();
    assert!(
        bodies.iter().all(|b| *b == bodies[0]),
        "retries resend the same request"
    );
}

#[tokio::test]
async fn a_break_after_the_first_byte_is_reported_not_retried() {
    let llm = ScriptedLlm::queue(vec![
        Reply::text("one two three").cut_after(2),
        Reply::text("a retry would see this"),
    ])
    .unwrap();
    let (pieces, error) = drain(stream(&client(&llm)).await.unwrap()).await;
    assert_eq!(answer(&pieces), "one two ");
    let error = error.expect("the break is reported");
    assert!(
        matches!(&error, LlmError::Transport { attempts: 1, detail, .. } if detail.contains("broke")),
        "{error:?}"
    );
    assert_eq!(llm.request_count(), 1);
    assert_eq!(llm.disconnects(), 0, "the server cut it, not the client");
}

#[tokio::test]
async fn errors_before_the_stream_are_classified_like_whole_replies() {
    let llm = ScriptedLlm::queue(vec![Reply::status(401, "bad key")]).unwrap();
    let error = stream(&client(&llm)).await.err().unwrap();
    assert!(
        matches!(error, LlmError::Unauthorized { status: 401, .. }),
        "{error:?}"
    );
    let llm = ScriptedLlm::start(vec![Rule::always(Reply::status(500, "down"))]).unwrap();
    let error = stream(&client(&llm)).await.err().unwrap();
    assert!(
        matches!(error, LlmError::ServerError { attempts: 3, .. }),
        "{error:?}"
    );
}

#[tokio::test]
async fn raw_events_with_crlf_comments_and_split_writes_are_read() {
    let chunk = |content: &str| {
        format!(
            "data: {}\r\n\r\n",
            json!({"choices": [{"index": 0, "delta": {"content": content}}]})
        )
    };
    let whole = [
        ": keep-alive\r\n\r\n".to_owned(),
        chunk("Hel"),
        chunk("lo"),
        format!(
            "data: {}\r\n\r\n",
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        ),
        "data: [DONE]\r\n\r\n".to_owned(),
    ]
    .concat()
    .into_bytes();
    // Written in 7-byte pieces: events and a CRLF straddle the writes.
    let llm = ScriptedLlm::queue(vec![Reply::sse(
        whole.chunks(7).map(<[u8]>::to_vec).collect(),
    )])
    .unwrap();
    let (pieces, error) = drain(stream(&client(&llm)).await.unwrap()).await;
    assert_eq!(error, None);
    assert_eq!(answer(&pieces), "Hello");
    assert_eq!(
        pieces.last(),
        Some(&StreamPiece::Done {
            finish_reason: Some("stop".into()),
            usage: None
        })
    );
}

#[tokio::test]
async fn a_stream_that_ends_before_the_model_finished_is_an_error() {
    let event = format!(
        "data: {}\n\n",
        json!({"choices": [{"delta": {"content": "half"}}]})
    );
    let llm = ScriptedLlm::queue(vec![Reply::sse(vec![event.into_bytes()])]).unwrap();
    let (pieces, error) = drain(stream(&client(&llm)).await.unwrap()).await;
    assert_eq!(answer(&pieces), "half");
    assert!(
        matches!(&error, Some(LlmError::Transport { detail, .. }) if detail.contains("before the model finished")),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_server_that_does_not_stream_still_answers() {
    let llm = ScriptedLlm::queue(vec![Reply::Json(json!({"choices": [
        {"message": {"content": " whole ", "reasoning_content": "t"}, "finish_reason": "stop"}]}))])
    .unwrap();
    let (pieces, error) = drain(stream(&client(&llm)).await.unwrap()).await;
    assert_eq!(error, None);
    assert_eq!(
        pieces,
        vec![
            StreamPiece::Reasoning("t".into()),
            StreamPiece::Text("whole".into()),
            StreamPiece::Done {
                finish_reason: Some("stop".into()),
                usage: None
            },
        ]
    );
}

#[tokio::test]
async fn a_streamed_answer_past_the_reply_cap_is_refused() {
    // Half a mebibyte a piece: under the one-event limit, so the answer cap is what trips.
    let piece = "x".repeat(512 * 1024);
    let count = MAX_REPLY_BYTES / piece.len() + 1;
    let llm = ScriptedLlm::queue(vec![Reply::text("").pieces(vec![piece; count])]).unwrap();
    let (pieces, error) = drain(stream(&client(&llm)).await.unwrap()).await;
    assert_eq!(texts(&pieces), count - 1);
    assert!(
        matches!(
            error,
            Some(LlmError::TooLarge {
                limit: MAX_REPLY_BYTES,
                ..
            })
        ),
        "{error:?}"
    );
}

#[tokio::test]
async fn the_llm_trait_streams_deltas_and_names_the_model() {
    use porfiry_node::llm::{Delta, Llm, ModelRequest, Usage};
    let llm = ScriptedLlm::queue(vec![
        Reply::text("Hi there.").usage(5, 2).with_reasoning("greet"),
        Reply::text("whole"),
    ])
    .unwrap();
    let model: std::sync::Arc<dyn Llm> = std::sync::Arc::new(client(&llm));
    let request = ModelRequest {
        system: "s".into(),
        messages: vec![ChatMessage::user("hello")],
    };
    let deltas: Vec<_> = model.stream(&request).await.unwrap().collect().await;
    assert_eq!(
        deltas,
        vec![
            Ok(Delta::Text("Hi ".into())),
            Ok(Delta::Text("there.".into())),
            Ok(Delta::Done {
                finish_reason: Some("stop".into()),
                usage: Some(Usage::new(5, 2)),
            }),
        ]
    );
    assert_eq!(llm.requests()[0]["stream"], true);
    let completion = model.complete(&request).await.unwrap();
    assert_eq!(completion.text, "whole");
    assert_eq!(llm.requests()[1]["stream"], false);
    assert_eq!(model.model_name(), "test-model");
}

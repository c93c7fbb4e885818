//! The node's OpenAI-compatible client against the scripted server over real loopback
//! HTTP: success, every classified failure, retries, timeouts and the API key header.

use std::time::Duration;

use porfiry_agent::llm::client::MAX_REPLY_BYTES;
use porfiry_agent::llm::{ChatMessage, LlmError, OpenAiClient};
use porfiry_tests::{Reply, Rule, ScriptedLlm, When};

mod llm_common;
use llm_common::{RETRIES, client, config, config_with, history};
use serde_json::json;

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
async fn the_answer_budget_sent_is_the_smaller_of_the_calls_and_the_models() {
    let llm = ScriptedLlm::start(vec![Rule::always(Reply::text("ok"))]).unwrap();
    let uncapped = client(&llm);
    uncapped
        .complete_within("s", &history(), Some(64))
        .await
        .unwrap();
    uncapped.complete("s", &history()).await.unwrap();
    let capped = OpenAiClient::new(config_with(&llm.url(), |c| c.max_tokens = Some(32))).unwrap();
    capped
        .complete_within("s", &history(), Some(64))
        .await
        .unwrap();
    capped.complete("s", &history()).await.unwrap();
    capped
        .complete_within("s", &history(), Some(8))
        .await
        .unwrap();
    let sent: Vec<_> = llm
        .recorded()
        .iter()
        .map(|r| r.body.get("max_tokens").cloned())
        .collect();
    assert_eq!(
        sent,
        [
            Some(json!(64)),
            None,
            Some(json!(32)),
            Some(json!(32)),
            Some(json!(8))
        ]
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

#[tokio::test]
async fn embeddings_come_from_the_route_beside_chat_in_input_order() {
    let llm = ScriptedLlm::start(vec![]).unwrap();
    llm.serve_embeddings(|t| vec![t.len() as f32, 1.0]);
    let texts = vec!["a".to_owned(), "abc".to_owned()];
    let vectors = client(&llm).embeddings(&texts).await.unwrap();
    assert_eq!(vectors, vec![vec![1.0, 1.0], vec![3.0, 1.0]]);
    let seen = llm.recorded();
    assert_eq!(seen[0].path, "/v1/embeddings");
    assert_eq!(
        seen[0].body,
        json!({"model": "test-model", "input": ["a", "abc"]})
    );
    // Through the Llm trait, as the cognitive core asks.
    let llm_trait: &dyn porfiry_agent::llm::Llm = &client(&llm);
    assert_eq!(llm_trait.embed(&texts).await.unwrap().len(), 2);
}

#[tokio::test]
async fn a_server_without_embeddings_is_unsupported_and_bad_replies_say_why() {
    // The scripted server, like a chat-only one, answers 404 off its chat route.
    let llm = ScriptedLlm::start(vec![]).unwrap();
    let e = client(&llm)
        .embeddings(&["x".to_owned()])
        .await
        .unwrap_err();
    assert!(
        matches!(&e, LlmError::Unsupported { what, .. } if what == "embeddings"),
        "{e}"
    );
    assert!(e.to_string().contains("does not offer embeddings"), "{e}");
    // Too many texts for one request: refused before anything is sent.
    let many = vec!["x".to_owned(); porfiry_agent::llm::embeddings::MAX_EMBED_INPUTS + 1];
    let before = llm.request_count();
    let e = client(&llm).embeddings(&many).await.unwrap_err();
    assert!(e.to_string().contains("more than the 64"), "{e}");
    assert_eq!(llm.request_count(), before);
    // A server that does not answer at all.
    let dead = OpenAiClient::new(config("http://127.0.0.1:9/v1")).unwrap();
    let e = dead.embeddings(&["x".to_owned()]).await.unwrap_err();
    assert!(matches!(e, LlmError::Unreachable { .. }), "{e}");
}

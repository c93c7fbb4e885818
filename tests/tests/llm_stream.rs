//! The node's OpenAI-compatible client streaming (`"stream": true`, server-sent
//! events) from the scripted server over real loopback HTTP: pieces, usage,
//! thought kept apart, errors mid-stream, each deadline, hang-ups seen by the
//! server, retries only before the first byte, the reply cap, the `Llm` trait.

use std::time::Duration;

use porfiry_agent::llm::client::MAX_REPLY_BYTES;
use porfiry_agent::llm::{ChatMessage, LlmError, OpenAiClient};
use porfiry_tests::{Reply, Rule, ScriptedLlm};
use serde_json::json;

mod llm_common;
use llm_common::{client, config_with, history};

use futures::StreamExt;
use porfiry_agent::llm::{PieceStream, StreamPiece};

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
    let usage = porfiry_agent::llm::wire::Usage {
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
    use porfiry_agent::llm::{Delta, Llm, ModelRequest, Usage};
    let llm = ScriptedLlm::queue(vec![
        Reply::text("Hi there.").usage(5, 2).with_reasoning("greet"),
        Reply::text("whole"),
    ])
    .unwrap();
    let model: std::sync::Arc<dyn Llm> = std::sync::Arc::new(client(&llm));
    let request = ModelRequest {
        system: "s".into(),
        messages: vec![ChatMessage::user("hello")],
        max_tokens: Some(24),
        grammar: None,
        stop: Vec::new(),
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
                served_by: None,
            }),
        ]
    );
    assert_eq!(llm.requests()[0]["stream"], true);
    assert_eq!(llm.requests()[0]["max_tokens"], 24);
    let completion = model.complete(&request).await.unwrap();
    assert_eq!(completion.text, "whole");
    assert_eq!(llm.requests()[1]["stream"], false);
    assert_eq!(llm.requests()[1]["max_tokens"], 24);
    assert_eq!(model.model_name(), "test-model");
}

//! Cost of the LLM client's own work per call, apart from the model: encoding a request,
//! reading a reply, reading a streamed answer's events, and a whole `chat()` round trip
//! against an instant loopback server.

// `criterion_group!` generates an undocumented `pub fn`; a bench has no API to document.
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use porfiry_agent::llm::chunk::{ChunkEvent, parse_event};
use porfiry_agent::llm::reasoning::answer;
use porfiry_agent::llm::sse::SseParser;
use porfiry_agent::llm::wire::{ChatRequest, parse_reply};
use porfiry_agent::llm::{ChatMessage, LlmConfig, LlmTarget, OpenAiClient};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A prompt of about 2 KB (core tools + catalogue + index) and a 20-message history.
fn workload() -> (String, Vec<ChatMessage>) {
    let system =
        "TOOL_CALL: name|args — core tool line, catalogue line, skill index line.\n".repeat(28);
    let history = (0..20)
        .map(|i| {
            if i % 2 == 0 {
                ChatMessage::user(format!("user message {i}: find a film about space"))
            } else {
                ChatMessage::assistant(format!("TOOL_CALL: media_search|space {i}"))
            }
        })
        .collect();
    (system, history)
}

const REPLY: &str = r#"{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"TOOL_CALL: media_search|space opera","reasoning_content":"The user wants films."},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":412,"completion_tokens":9,"total_tokens":421}}"#;

/// Serves `REPLY` to every request on kept-alive connections.
async fn instant_server(listener: TcpListener) {
    loop {
        let Ok((mut socket, _)) = listener.accept().await else {
            return;
        };
        tokio::spawn(async move {
            let mut buf = Vec::new();
            let mut chunk = [0u8; 16 * 1024];
            loop {
                let Some(head_end) = find(&buf, b"\r\n\r\n") else {
                    match socket.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                    continue;
                };
                let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
                let length: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or(0);
                let total = head_end + 4 + length;
                while buf.len() < total {
                    match socket.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
                buf.drain(..total);
                let response = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{REPLY}",
                    REPLY.len()
                );
                if socket.write_all(response.as_bytes()).await.is_err() {
                    return;
                }
            }
        });
    }
}

/// The SSE body of an answer of `tokens` tokens, one chunk per token, as vLLM sends it.
fn streamed_answer(tokens: usize) -> Vec<u8> {
    let mut body = String::new();
    for i in 0..tokens {
        body.push_str(&format!(
            "data: {{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\" word{i}\"}},\"logprobs\":null,\"finish_reason\":null}}],\"usage\":null}}\n\n"
        ));
    }
    body.push_str("data: [DONE]\n\n");
    body.into_bytes()
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn bench(c: &mut Criterion) {
    let (system, history) = workload();

    c.bench_function("llm/encode_request_20_messages", |b| {
        b.iter(|| {
            let request = ChatRequest::new("model", 0.2, black_box(&system), black_box(&history));
            serde_json::to_vec(&request).map(|v| v.len()).unwrap_or(0)
        })
    });

    c.bench_function("llm/parse_reply", |b| {
        b.iter(|| {
            let raw = parse_reply("http://h/v1/chat/completions", black_box(REPLY.as_bytes()));
            raw.map(|r| {
                answer(
                    r.content.as_deref(),
                    r.reasoning.as_deref(),
                    r.finish_reason.as_deref(),
                )
            })
        })
    });

    // A 500-token answer as an OpenAI-compatible server streams it, fed in 1460-byte
    // reads (one TCP segment each), as the client parses it.
    let stream_body = streamed_answer(500);
    c.bench_function("llm/parse_stream_500_tokens", |b| {
        b.iter(|| {
            let mut parser = SseParser::new();
            let mut text = 0usize;
            for read in black_box(&stream_body).chunks(1460) {
                for event in parser.push(read).unwrap_or_default() {
                    if let Ok(ChunkEvent::Chunk(c)) = parse_event("http://h/v1", &event) {
                        text += c.content.map_or(0, |t| t.len());
                    }
                }
            }
            text
        })
    });

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let listener = runtime
        .block_on(TcpListener::bind("127.0.0.1:0"))
        .expect("bind loopback");
    let addr = listener.local_addr().expect("local addr");
    runtime.spawn(instant_server(listener));
    let config = LlmTarget {
        config: LlmConfig {
            timeout_ms: Some(5_000),
            ..LlmConfig::default()
        },
        ..LlmTarget::new(format!("http://{addr}/v1"), "model")
    };
    let client = OpenAiClient::new(config).expect("client");
    let first = runtime.block_on(client.chat(&system, &history));
    assert_eq!(
        first.as_deref().ok(),
        Some("TOOL_CALL: media_search|space opera"),
        "{first:?}"
    );
    c.bench_function("llm/chat_round_trip_loopback", |b| {
        b.iter(|| {
            runtime
                .block_on(client.chat(black_box(&system), black_box(&history)))
                .map(|t| t.len())
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);

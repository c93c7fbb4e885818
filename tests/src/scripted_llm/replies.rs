//! Turns a scripted [`Reply`] into the HTTP response an OpenAI-compatible server would send.

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::recorded::{RecordedRequest, last_message};
use super::rules::Reply;
use super::streamed::{self, Watch};

/// Status sent when no rule matches: not retried by the client and unmistakable in a
/// failing test's output.
pub const NO_RULE_STATUS: u16 = 418;

/// The response for a reply, after its delays and with computed replies resolved. A
/// streamed body is watched by the [`Watch`] `watch` makes.
pub async fn respond(
    mut reply: Reply,
    req: &RecordedRequest,
    watch: &(dyn Fn() -> Watch + Send + Sync),
) -> Response {
    let streaming = req.body.get("stream") == Some(&Value::Bool(true));
    loop {
        reply = match reply {
            Reply::Delay(by, then) => {
                // A client that goes away during the delay counts as a closed
                // request, as a stream cut short does.
                let mut guard = watch();
                tokio::time::sleep(by).await;
                guard.finish();
                *then
            }
            Reply::Func(f) => f(req),
            Reply::Text(text) if streaming => Reply::streamed(text),
            Reply::Stream(s) if streaming => return streamed::respond(&s, req, watch()),
            Reply::Stream(s) => return json_response(StatusCode::OK, completion(&s.text, req)),
            Reply::Sse { pieces, then_hang } => {
                return streamed::raw(&pieces, then_hang, watch());
            }
            Reply::Text(text) => return json_response(StatusCode::OK, completion(&text, req)),
            Reply::Json(value) => return json_response(StatusCode::OK, value),
            Reply::Garbage(bytes) => return with_type(StatusCode::OK, bytes, "application/json"),
            Reply::Status(code, body) => return status_response(code, body),
            Reply::BrokenBody(bytes) => return broken_body(bytes),
        }
    }
}

/// A chat completion with one choice whose content is `text`, echoing the request's model.
pub fn completion(text: &str, req: &RecordedRequest) -> Value {
    let model = req.body.get("model").cloned().unwrap_or(Value::Null);
    json!({
        "id": format!("chatcmpl-scripted-{}", req.number),
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": text},
            "logprobs": null,
            "finish_reason": "stop"
        }]
    })
}

/// The 418 sent when the script has no reply, naming the request.
pub fn no_rule(req: &RecordedRequest) -> Response {
    let last = last_message(&req.body).unwrap_or("(no messages)");
    let message = format!(
        "scripted LLM: no rule matched request #{}; last message: {last}",
        req.number
    );
    status_response(
        NO_RULE_STATUS,
        json!({"error": {"message": message}}).to_string(),
    )
}

/// An embeddings reply: one vector per `input` (a string or an array of
/// them), by `embed`.
pub fn embeddings(req: &RecordedRequest, embed: &dyn Fn(&str) -> Vec<f32>) -> Response {
    let inputs: Vec<String> = match &req.body["input"] {
        Value::String(s) => vec![s.clone()],
        Value::Array(items) => items
            .iter()
            .map(|v| v.as_str().unwrap_or_default().to_owned())
            .collect(),
        _ => Vec::new(),
    };
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(i, t)| serde_json::json!({"object": "embedding", "index": i, "embedding": embed(t)}))
        .collect();
    axum::Json(serde_json::json!({"object": "list", "data": data, "model": req.body["model"]}))
        .into_response()
}

/// The 404 for a path other than `/v1/chat/completions`, shaped like the servers' own.
pub fn no_route(req: &RecordedRequest) -> Response {
    let message = format!("scripted LLM: no route {} {}", req.method, req.path);
    status_response(
        404,
        json!({"error": {"message": message, "type": "not_found_error"}}).to_string(),
    )
}

/// A 200 whose chunked body stops with an error after `bytes`: hyper then drops the
/// connection without the final chunk, as a crashing server would. The error comes one
/// scheduler turn after the bytes, so the status line and bytes are flushed first.
fn broken_body(bytes: Vec<u8>) -> Response {
    use futures::StreamExt;
    let first = futures::stream::once(async move { Ok(Bytes::from(bytes)) });
    let broken = futures::stream::once(async {
        tokio::task::yield_now().await;
        Err(std::io::Error::other(
            "scripted LLM: body broken on purpose",
        ))
    });
    let mut response = Response::new(Body::from_stream(first.chain(broken)));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

fn json_response(status: StatusCode, value: Value) -> Response {
    with_type(status, value.to_string().into_bytes(), "application/json")
}

fn status_response(code: u16, body: String) -> Response {
    let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let kind = if serde_json::from_str::<Value>(&body).is_ok() {
        "application/json"
    } else {
        "text/plain; charset=utf-8"
    };
    with_type(status, body.into_bytes(), kind)
}

fn with_type(status: StatusCode, body: Vec<u8>, kind: &'static str) -> Response {
    let mut response = (status, body).into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    response
}

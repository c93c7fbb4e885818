//! `POST /v1/chat/completions`: the agent answers the last user message
//! after its tool rounds, in the session the request names (`X-Porfiry-Session`
//! header, else the `user` field, else the session the conversation itself
//! leads to: [`crate::conversations`]). Plain requests get one
//! `chat.completion`; `stream: true` gets SSE ([`crate::stream`]).

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};

use crate::body::JsonBody;
use crate::conversations::state_key;
use crate::errors::ApiError;
use crate::history::client_history;
use crate::limits::MAX_SESSION_KEY_BYTES;
use crate::prepared::{DEFAULT_FINISH_REASON, PreparedTurn, extension, turn_error, via};
use crate::state::ApiState;
use crate::stream;
use crate::wire::{AssistantMessage, ChatCompletion, ChatRequest, Choice, MODEL_ID};
use porfiry_agent::chat::session::check_message;

/// The header that names a session (wins over the `user` field).
pub const SESSION_HEADER: &str = "x-porfiry-session";

/// How the key of a session the node derives from a conversation starts.
pub const DERIVED_SESSION_PREFIX: &str = "conv-";

/// Answers a chat completion request.
pub async fn completions(
    State(state): State<ApiState>,
    headers: HeaderMap,
    JsonBody(request): JsonBody<ChatRequest>,
) -> Response {
    let include_usage = request
        .stream_options
        .as_ref()
        .is_some_and(|o| o.include_usage);
    let streaming = request.stream;
    let prepared = match prepare(&state, &headers, request) {
        Ok(p) => p,
        Err(e) => return e.into_response(),
    };
    if streaming {
        stream::respond(&state, prepared, include_usage).await
    } else {
        match answer(prepared).await {
            Ok(completion) => Json(completion).into_response(),
            Err(e) => e.into_response(),
        }
    }
}

/// Checks the request and finds its session.
pub fn prepare(
    state: &ApiState,
    headers: &HeaderMap,
    request: ChatRequest,
) -> Result<PreparedTurn, ApiError> {
    let agent = state.agent().ok_or(ApiError::NoModel)?.clone();
    if request.n.is_some_and(|n| n != 1) {
        return Err(ApiError::BadRequest("only n = 1 is served".to_owned()));
    }
    let history = client_history(&request.messages).map_err(ApiError::BadRequest)?;
    check_message(&history.new_message).map_err(|e| ApiError::BadRequest(e.to_string()))?;
    if history.ignored_system > 0 {
        tracing::debug!(
            count = history.ignored_system,
            "client system messages ignored"
        );
    }
    let id = state.completion_id();
    let reply_budget = request.reply_budget();
    let (session, scope, derived) = match session_key(headers, request.user.as_deref())? {
        Some(key) => (key.clone(), key, false),
        None => {
            let scope = format!("model:{}", request.model.as_deref().unwrap_or_default());
            let found = state
                .conversations()
                .find(&state_key(&scope, &history.earlier))
                .map(str::to_owned);
            let session = found.unwrap_or_else(|| {
                let serial = id.strip_prefix("chatcmpl-").unwrap_or(&id);
                format!("{DERIVED_SESSION_PREFIX}{serial}")
            });
            (session, scope, true)
        }
    };
    Ok(PreparedTurn {
        state: state.clone(),
        slot: state.session(&session, agent.as_ref()),
        session,
        scope,
        derived,
        history,
        reply_budget,
        id,
        created: state.now_ms() / 1_000,
    })
}

/// The session key: the header, else `user`; none → an ephemeral session.
pub fn session_key(headers: &HeaderMap, user: Option<&str>) -> Result<Option<String>, ApiError> {
    let key = match headers.get(SESSION_HEADER) {
        Some(value) => Some(value.to_str().map_err(|_| {
            ApiError::BadRequest(format!("the {SESSION_HEADER} header must be visible ASCII"))
        })?),
        None => user,
    };
    match key.map(str::trim) {
        None | Some("") => Ok(None),
        Some(key) if key.len() > MAX_SESSION_KEY_BYTES => Err(ApiError::BadRequest(format!(
            "the session key (user or {SESSION_HEADER}) is over {MAX_SESSION_KEY_BYTES} bytes"
        ))),
        Some(key) => Ok(Some(key.to_owned())),
    }
}

async fn answer(turn: PreparedTurn) -> Result<ChatCompletion, ApiError> {
    let mut slot = turn.slot.lock().await;
    turn.begin(&mut slot);
    let reply = slot
        .agent
        .send(&turn.history.new_message, None)
        .await
        .map_err(turn_error)?;
    let change = turn.finish(&mut slot, &reply.text, &reply);
    drop(slot);
    turn.state.keep_turn_record(change).await;
    let via = via(&turn.state, &reply).await;
    Ok(ChatCompletion {
        id: turn.id,
        object: "chat.completion",
        created: turn.created,
        model: MODEL_ID,
        choices: vec![Choice {
            index: 0,
            message: AssistantMessage {
                role: "assistant",
                content: reply.text.clone(),
                porfiry: extension(&reply, via),
            },
            finish_reason: reply
                .finish_reason
                .clone()
                .unwrap_or_else(|| DEFAULT_FINISH_REASON.to_owned()),
        }],
        usage: reply.usage,
    })
}

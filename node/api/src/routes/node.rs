//! The node's own endpoints: `GET/POST /api/notes`, `GET/POST /api/friends`,
//! `DELETE /api/friends/{peer}`, `GET /api/status` (the node's status plus
//! `"model"`: the upstream model's name, or null without one; `"version"`).

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::Deserialize;

use crate::backend::{FriendSettings, NodeApiError, NoteRequest, NotesRequest};
use crate::body::{JsonBody, QueryParams};
use crate::errors::ApiError;
use crate::limits::{DEFAULT_NOTES_LIMIT, MAX_NOTES_LIMIT};
use crate::state::ApiState;
use porfiry_protocol::ItemId;

/// The audience of a note posted without one: friends only, as `porfiry notes post`.
pub const DEFAULT_AUDIENCE: &str = "friends";

impl From<NodeApiError> for ApiError {
    fn from(error: NodeApiError) -> Self {
        match error {
            NodeApiError::BadInput(m) => ApiError::BadRequest(m),
            NodeApiError::NotFound(m) => ApiError::NotFound(m),
            NodeApiError::Internal(m) => ApiError::Internal(m),
            NodeApiError::DiskFull(m) => ApiError::DiskFull(m),
        }
    }
}

/// `GET /api/notes?origin=own|friends|all&audience=…&limit=N&newest=true`.
#[derive(Debug, Deserialize)]
pub struct NotesParams {
    /// Whose notes.
    pub origin: Option<String>,
    /// Only notes for this audience (see [`check_audience_filter`]).
    pub audience: Option<String>,
    /// How many, at most [`MAX_NOTES_LIMIT`].
    pub limit: Option<usize>,
    /// `true`: the newest `limit` notes (still listed oldest first), not the oldest.
    pub newest: Option<bool>,
}

/// Refuses an audience filter that is none of the audiences a note can
/// have: `private`, `public`, `friends`, `group:NAME`, `club:NAME` or
/// `club:NAME@FOUNDER`, `peer:PEER_ID` or `peer:NAME` (names are the
/// node's to resolve; an unknown one is its 400).
pub fn check_audience_filter(given: &str) -> Result<(), ApiError> {
    let named = |prefix: &str| {
        given
            .strip_prefix(prefix)
            .is_some_and(|name| !name.trim().is_empty())
    };
    if given.parse::<porfiry_storage::Sharing>().is_ok() || named("club:") || named("peer:") {
        return Ok(());
    }
    Err(ApiError::BadRequest(format!(
        "unknown audience filter {given:?}: expected friends, public, private, group:NAME, \
         club:NAME[@FOUNDER] or peer:PEER"
    )))
}

/// Lists notes, oldest first.
pub async fn list_notes(
    State(state): State<ApiState>,
    QueryParams(params): QueryParams<NotesParams>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let limit = params.limit.unwrap_or(DEFAULT_NOTES_LIMIT);
    if limit == 0 || limit > MAX_NOTES_LIMIT {
        return Err(ApiError::BadRequest(format!(
            "limit must be 1 to {MAX_NOTES_LIMIT}"
        )));
    }
    if let Some(audience) = &params.audience {
        check_audience_filter(audience)?;
    }
    let query = NotesRequest {
        origin: params.origin,
        audience: params.audience,
        limit,
        newest: params.newest.unwrap_or(false),
    };
    Ok(Json(state.node().notes(query).await?))
}

/// `POST /api/notes`.
#[derive(Debug, Deserialize)]
pub struct NoteBody {
    /// The note.
    pub text: String,
    /// `public`, `friends` (default), `group:NAME`, `peer:PEER_ID`, `club:…` or `private`.
    #[serde(default)]
    pub audience: Option<String>,
    /// The item id (64 hex digits) of the note this one answers.
    #[serde(default)]
    pub reply_to: Option<String>,
}

/// Publishes a note.
pub async fn post_note(
    State(state): State<ApiState>,
    JsonBody(body): JsonBody<NoteBody>,
) -> Result<(StatusCode, Json<serde_json::Value>), ApiError> {
    let audience = body.audience.unwrap_or_else(|| DEFAULT_AUDIENCE.to_owned());
    let reply_to = body
        .reply_to
        .map(|given| {
            given.trim().parse::<ItemId>().map_err(|_| {
                ApiError::BadRequest(format!(
                    "bad reply_to {given:?}: expected the item id (64 hex digits) of the note it answers"
                ))
            })
        })
        .transpose()?;
    let note = NoteRequest {
        text: body.text,
        audience,
        reply_to,
    };
    let posted = state.node().post_note(note).await?;
    Ok((StatusCode::CREATED, Json(posted)))
}

/// Lists friends.
pub async fn list_friends(
    State(state): State<ApiState>,
) -> Result<Json<serde_json::Value>, ApiError> {
    Ok(Json(state.node().friends().await?))
}

/// `POST /api/friends`.
#[derive(Debug, Deserialize)]
pub struct FriendBody {
    /// The friend's peer id.
    pub peer: String,
    /// Multiaddrs to dial.
    #[serde(default)]
    pub addresses: Vec<String>,
    /// Groups to tag them with.
    #[serde(default)]
    pub groups: Vec<String>,
    /// Allow (or with `false` refuse) its offload requests; absent keeps
    /// an existing friend's permission (a new one starts without).
    #[serde(default)]
    pub allow_offload: Option<bool>,
    /// Allow (or with `false` refuse) its pulls of this node's model files
    /// (`porfiry run --share-models`); absent keeps an existing friend's
    /// permission (a new one starts without).
    #[serde(default)]
    pub allow_models: Option<bool>,
    /// What this node calls it (local, never sent); absent keeps an
    /// existing friend's name.
    #[serde(default)]
    pub name: Option<String>,
}

/// Adds a friend.
pub async fn add_friend(
    State(state): State<ApiState>,
    JsonBody(body): JsonBody<FriendBody>,
) -> Result<(StatusCode, Json<serde_json::Value>), ApiError> {
    let friend = state
        .node()
        .add_friend(
            body.peer,
            body.addresses,
            body.groups,
            FriendSettings {
                name: body.name,
                allow_offload: body.allow_offload,
                allow_models: body.allow_models,
            },
        )
        .await?;
    Ok((StatusCode::CREATED, Json(friend)))
}

/// Removes a friend (by peer id or name); 204 when done, 404 for an
/// unknown one.
pub async fn remove_friend(
    State(state): State<ApiState>,
    Path(peer): Path<String>,
) -> Result<StatusCode, ApiError> {
    state.node().remove_friend(peer).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The node's status plus the model in use.
pub async fn status(State(state): State<ApiState>) -> Result<Json<serde_json::Value>, ApiError> {
    let mut status = state.node().status().await?;
    let model = state
        .agent()
        .map(|agent| serde_json::Value::String(agent.model_name()))
        .unwrap_or(serde_json::Value::Null);
    let source = state
        .agent()
        .and_then(|agent| agent.model_source())
        .and_then(|s| serde_json::to_value(s).ok())
        .unwrap_or(serde_json::Value::Null);
    match status.as_object_mut() {
        Some(object) => {
            object.insert("model".to_owned(), model);
            object.insert("model_source".to_owned(), source);
            object.insert("version".to_owned(), env!("CARGO_PKG_VERSION").into());
        }
        None => status = serde_json::json!({ "node": status, "model": model }),
    }
    Ok(Json(status))
}

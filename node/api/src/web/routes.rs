//! The page's own routes: `/` (the page), `/page/app.js`, `/page/app.css`,
//! `/login?code=` (spends a one-time code, sets the session cookie),
//! `POST /api/login-codes` (a fresh link, for `porfiry web`),
//! `GET /api/peer-qr`, `GET /api/clubs`, `GET /api/mind`, `POST /api/mind`,
//! `POST /api/invitations`, `POST /api/join`,
//! `PATCH /api/friends/{peer}`.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::header::{HOST, LOCATION, SET_COOKIE};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use qrcode::QrCode;
use qrcode::render::svg;
use serde::Deserialize;

use super::assets;
use super::guard::{cookie_name, session_cookie};
use super::signin::{LoginRefusal, WEB_SESSION_TTL_MS};
use super::texts::{self, Refusal};
use crate::backend::FriendSettings;
use crate::body::{JsonBody, QueryParams};
use crate::errors::ApiError;
use crate::state::ApiState;

/// How long an invitation made from the page works, as `porfiry invite`'s
/// default: a day to pass it on to a grandparent and have them join.
pub const PAGE_INVITATION_VALID: &str = "24h";

/// `GET /`.
pub async fn page(State(state): State<ApiState>) -> Response {
    assets::file("text/html; charset=utf-8", assets::index(state.language()))
}

/// `GET /page/app.js`.
pub async fn script() -> Response {
    assets::file("text/javascript; charset=utf-8", assets::APP_JS.to_owned())
}

/// `GET /page/app.css`.
pub async fn style() -> Response {
    assets::file("text/css; charset=utf-8", assets::APP_CSS.to_owned())
}

/// A refusal page with `status`.
pub fn refusal(
    state: &ApiState,
    status: StatusCode,
    pick: fn(&texts::RefusalTexts) -> &Refusal,
) -> Response {
    let language = state.language();
    let page = texts::refusal_page(language, pick(texts::refusals(language)));
    (status, Html(page)).into_response()
}

/// `?code=`.
#[derive(Debug, Deserialize)]
pub struct LoginParams {
    /// The one-time code.
    pub code: Option<String>,
}

/// `GET /login?code=…`: on a good code, the session cookie and a redirect
/// to the page; otherwise a page saying what was wrong and what to do.
pub async fn login(
    State(state): State<ApiState>,
    headers: HeaderMap,
    QueryParams(params): QueryParams<LoginParams>,
) -> Response {
    let now = state.now_ms();
    let outcome = state
        .signins()
        .redeem(params.code.as_deref().unwrap_or(""), now);
    match outcome {
        Ok(session) => {
            state.keep_page_sessions().await;
            let host = headers.get(HOST).and_then(|h| h.to_str().ok());
            let cookie = session_cookie(&cookie_name(host), &session, WEB_SESSION_TTL_MS / 1_000);
            tracing::info!("a browser signed in to the family page");
            (
                StatusCode::SEE_OTHER,
                [(SET_COOKIE, cookie), (LOCATION, "/".to_owned())],
            )
                .into_response()
        }
        Err(why) => {
            tracing::info!("family page sign-in refused: {why}");
            let pick: fn(&texts::RefusalTexts) -> &Refusal = match why {
                LoginRefusal::Used => |t| &t.used,
                LoginRefusal::Expired => |t| &t.expired,
                LoginRefusal::Unknown => |t| &t.unknown,
            };
            refusal(&state, StatusCode::FORBIDDEN, pick)
        }
    }
}

/// `POST /api/login-codes`: a fresh one-time code and its link (under the
/// `Host` the request used).
pub async fn new_login_code(
    State(state): State<ApiState>,
    headers: HeaderMap,
) -> Result<(StatusCode, Json<serde_json::Value>), ApiError> {
    let code = state
        .issue_login_code()
        .map_err(|e| ApiError::Internal(format!("no randomness for a login code: {e}")))?;
    let host = headers
        .get(HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("127.0.0.1");
    let url = format!("http://{host}/login?code={code}");
    Ok((
        StatusCode::CREATED,
        Json(serde_json::json!({ "code": code, "url": url })),
    ))
}

/// `GET /api/peer-qr`: this node's peer id as a QR image (SVG), for the
/// page's Node tab.
pub async fn peer_qr(State(state): State<ApiState>) -> Result<Response, ApiError> {
    let status = state.node().status().await?;
    let peer = status
        .get("peer_id")
        .and_then(|p| p.as_str())
        .ok_or_else(|| ApiError::Internal("the node's status has no peer id".to_owned()))?;
    Ok(assets::file("image/svg+xml", qr_svg(peer)?))
}

/// `GET /api/clubs`: the clubs this node knows, for the audience picker.
pub async fn clubs(State(state): State<ApiState>) -> Result<Json<serde_json::Value>, ApiError> {
    Ok(Json(state.node().clubs().await?))
}

/// `GET /api/mind`: the core's goals, tasks, last ticks and diary.
pub async fn mind(State(state): State<ApiState>) -> Result<Json<serde_json::Value>, ApiError> {
    Ok(Json(state.node().mind().await?))
}

/// `POST /api/mind`.
#[derive(Debug, Deserialize)]
pub struct MindChange {
    /// Pause (`true`) or resume (`false`) thinking.
    pub paused: bool,
}

/// Pauses or resumes the core's thinking; answers the mind view.
pub async fn change_mind(
    State(state): State<ApiState>,
    JsonBody(body): JsonBody<MindChange>,
) -> Result<Json<serde_json::Value>, ApiError> {
    state
        .node()
        .set_thinking_paused(body.paused, state.now_ms())
        .await?;
    Ok(Json(state.node().mind().await?))
}

/// `POST /api/invitations`.
#[derive(Debug, Deserialize)]
pub struct InvitationBody {
    /// The new friend's name here (optional).
    #[serde(default)]
    pub name: Option<String>,
    /// Groups it joins.
    #[serde(default)]
    pub groups: Vec<String>,
    /// How long the code works (`30m`, `24h`, `7d`; default 24h).
    #[serde(default)]
    pub valid_for: Option<String>,
}

/// The code of `text` as an SVG image.
pub fn qr_svg(text: &str) -> Result<String, ApiError> {
    let code = QrCode::new(text.as_bytes())
        .map_err(|e| ApiError::Internal(format!("cannot draw the QR code: {e}")))?;
    Ok(code
        .render::<svg::Color>()
        .min_dimensions(240, 240)
        .quiet_zone(true)
        .build())
}

/// Makes a one-time invitation: `{"code", "qr_svg", "valid_for"}`.
pub async fn invite(
    State(state): State<ApiState>,
    JsonBody(body): JsonBody<InvitationBody>,
) -> Result<(StatusCode, Json<serde_json::Value>), ApiError> {
    let valid_text = body
        .valid_for
        .unwrap_or_else(|| PAGE_INVITATION_VALID.to_owned());
    let valid_for = valid_for(&valid_text)?;
    let name = body.name.unwrap_or_default().trim().to_owned();
    let code = state.node().invite(name, body.groups, valid_for).await?;
    code_made(code, valid_text)
}

/// A `valid_for` value (`30m`, `24h`, …) as `porfiry invite --valid-for`
/// takes it; a 400 saying why when it is not one.
pub fn valid_for(text: &str) -> Result<std::time::Duration, ApiError> {
    porfiry_mesh::invite::duration::parse_valid_for(text)
        .map_err(|e| ApiError::BadRequest(format!("valid_for {e}")))
}

/// The answer to a one-time code made (an invitation, a device link):
/// `201 {"code", "qr_svg", "valid_for"}`.
pub fn code_made(
    code: String,
    valid_text: String,
) -> Result<(StatusCode, Json<serde_json::Value>), ApiError> {
    let qr = qr_svg(&code)?;
    Ok((
        StatusCode::CREATED,
        Json(serde_json::json!({ "code": code, "qr_svg": qr, "valid_for": valid_text })),
    ))
}

/// `POST /api/join`.
#[derive(Debug, Deserialize)]
pub struct JoinBody {
    /// The code another node's invitation gave.
    pub code: String,
    /// The inviter's name here (optional).
    #[serde(default)]
    pub name: Option<String>,
}

/// Presents another node's code; 201 with the inviter as a friend.
pub async fn join(
    State(state): State<ApiState>,
    JsonBody(body): JsonBody<JoinBody>,
) -> Result<(StatusCode, Json<serde_json::Value>), ApiError> {
    let friend = state.node().join(body.code, body.name).await?;
    Ok((StatusCode::CREATED, Json(friend)))
}

/// `PATCH /api/friends/{peer}`.
#[derive(Debug, Deserialize)]
pub struct FriendChange {
    /// A new local name.
    #[serde(default)]
    pub name: Option<String>,
    /// Whether it may use this node's model.
    #[serde(default)]
    pub allow_offload: Option<bool>,
    /// Whether it may pull this node's model files (`--share-models`).
    #[serde(default)]
    pub allow_models: Option<bool>,
}

/// Renames a friend and/or sets its offload and models permissions.
pub async fn change_friend(
    State(state): State<ApiState>,
    Path(peer): Path<String>,
    JsonBody(body): JsonBody<FriendChange>,
) -> Result<Json<serde_json::Value>, ApiError> {
    if body.name.is_none() && body.allow_offload.is_none() && body.allow_models.is_none() {
        return Err(ApiError::BadRequest(
            "nothing to change: give \"name\", \"allow_offload\" and/or \"allow_models\""
                .to_owned(),
        ));
    }
    let settings = FriendSettings {
        name: body.name,
        allow_offload: body.allow_offload,
        allow_models: body.allow_models,
    };
    Ok(Json(state.node().update_friend(peer, settings).await?))
}

//! A person's devices over the API (issue 45): `GET /api/devices` lists
//! them (each with its peer, name, `linked_since_ms`, `last_sync_ms` and
//! `behind`), `POST /api/devices` makes a one-time code another node of the
//! person joins with (`{"code", "qr_svg", "valid_for"}`), `POST
//! /api/devices/join` presents such a code (`{"code"}`; answers the
//! device), `DELETE /api/devices/{peer}` ends a link.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::Deserialize;

use crate::body::JsonBody;
use crate::errors::ApiError;
use crate::state::ApiState;
use crate::web::routes::{code_made, valid_for};

/// How long a device code from the page works unless asked otherwise: the
/// person holds both devices, so an hour is plenty, and a code seen by
/// someone else is dead soon.
pub const DEVICE_CODE_VALID: &str = "1h";

/// `GET /api/devices`.
pub async fn list(State(state): State<ApiState>) -> Result<Json<serde_json::Value>, ApiError> {
    Ok(Json(state.node().devices().await?))
}

/// `POST /api/devices`.
#[derive(Debug, Deserialize)]
pub struct LinkBody {
    /// How long the code works (`30m`, `1h`, …); default [`DEVICE_CODE_VALID`].
    #[serde(default)]
    pub valid_for: Option<String>,
}

/// Makes a device code: 201 `{"code", "qr_svg", "valid_for"}`.
pub async fn link(
    State(state): State<ApiState>,
    JsonBody(body): JsonBody<LinkBody>,
) -> Result<(StatusCode, Json<serde_json::Value>), ApiError> {
    let valid_text = body
        .valid_for
        .unwrap_or_else(|| DEVICE_CODE_VALID.to_owned());
    let code = state.node().link_device(valid_for(&valid_text)?).await?;
    code_made(code, valid_text)
}

/// `POST /api/devices/join`.
#[derive(Debug, Deserialize)]
pub struct JoinBody {
    /// The code another device's `POST /api/devices` (or `porfiry devices
    /// link`) gave.
    pub code: String,
}

/// Presents a device code: 201 with the other device.
pub async fn join(
    State(state): State<ApiState>,
    JsonBody(body): JsonBody<JoinBody>,
) -> Result<(StatusCode, Json<serde_json::Value>), ApiError> {
    let device = state.node().join_device(body.code).await?;
    Ok((StatusCode::CREATED, Json(device)))
}

/// `DELETE /api/devices/{peer}`: 204.
pub async fn unlink(
    State(state): State<ApiState>,
    Path(peer): Path<String>,
) -> Result<StatusCode, ApiError> {
    state.node().unlink_device(peer).await?;
    Ok(StatusCode::NO_CONTENT)
}

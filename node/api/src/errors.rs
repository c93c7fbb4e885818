//! The API's errors as OpenAI-style objects,
//! `{"error":{"message":…,"type":…,"code":…}}`, with the HTTP status each
//! maps to. Clients written for the OpenAI API show `message` to the user,
//! so every message says what was wrong and, where there is one, the fix.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// Why a request failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApiError {
    /// No `Authorization: Bearer <token>` header, or a wrong token → 401.
    #[error(
        "missing or wrong API token: send `Authorization: Bearer <token>` with the token \
         from <data-dir>/api-token"
    )]
    Unauthorized,
    /// The body is larger than [`super::limits::MAX_BODY_BYTES`] → 413.
    #[error("the request body is over the limit of {limit} bytes")]
    BodyTooLarge {
        /// The cap, in bytes.
        limit: usize,
    },
    /// Malformed JSON or a bad field → 400.
    #[error("{0}")]
    BadRequest(String),
    /// No such route → 404.
    #[error("no such endpoint: {method} {path}")]
    UnknownRoute {
        /// The request's method.
        method: String,
        /// The request's path.
        path: String,
    },
    /// The route exists but not with this method → 405.
    #[error("{method} is not allowed on {path}")]
    MethodNotAllowed {
        /// The request's method.
        method: String,
        /// The request's path.
        path: String,
    },
    /// A thing the request names does not exist (a friend) → 404.
    #[error("{0}")]
    NotFound(String),
    /// The node runs without a model → 503.
    #[error(
        "no model is configured on this node and no friend offers one: start `porfiry run` \
         with --llm-url and --llm-model (or PORFIRY_LLM_URL and PORFIRY_LLM_MODEL; the key, \
         if the server needs one, in PORFIRY_LLM_API_KEY), or with --llm-peer PEER, or ask a \
         friend with a model to run with --offload and allow this node"
    )]
    NoModel,
    /// The model is busy with other requests → 503, `Retry-After:`
    /// [`BUSY_RETRY_AFTER_SECS`].
    #[error("{0}")]
    Busy(String),
    /// The upstream model failed (unreachable, timeout, HTTP error) → 502.
    #[error("the model failed: {0}")]
    Upstream(String),
    /// The node itself failed → 500.
    #[error("internal error: {0}")]
    Internal(String),
    /// The disk is full: nothing was written → 507.
    #[error("{0}")]
    DiskFull(String),
    /// The same work is already under way (a backup) → 409.
    #[error("{0}")]
    InProgress(String),
}

/// Seconds a client is asked to wait after a busy answer: an on-device
/// model answers one request at a time, and a short chat answer takes a few
/// seconds on a phone.
pub const BUSY_RETRY_AFTER_SECS: u64 = 5;

impl ApiError {
    /// The HTTP status of this error.
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::Unauthorized => StatusCode::UNAUTHORIZED,
            ApiError::BodyTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::UnknownRoute { .. } | ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::NoModel | ApiError::Busy(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Upstream(_) => StatusCode::BAD_GATEWAY,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            ApiError::DiskFull(_) => StatusCode::INSUFFICIENT_STORAGE,
            ApiError::InProgress(_) => StatusCode::CONFLICT,
        }
    }

    /// The OpenAI error `type`.
    pub fn kind(&self) -> &'static str {
        match self {
            ApiError::Unauthorized => "authentication_error",
            ApiError::BodyTooLarge { .. }
            | ApiError::BadRequest(_)
            | ApiError::UnknownRoute { .. }
            | ApiError::MethodNotAllowed { .. }
            | ApiError::NotFound(_)
            | ApiError::InProgress(_) => "invalid_request_error",
            ApiError::NoModel
            | ApiError::Busy(_)
            | ApiError::Upstream(_)
            | ApiError::Internal(_)
            | ApiError::DiskFull(_) => "server_error",
        }
    }

    /// The OpenAI error `code`: a stable machine-readable name.
    pub fn code(&self) -> &'static str {
        match self {
            ApiError::Unauthorized => "invalid_api_key",
            ApiError::BodyTooLarge { .. } => "body_too_large",
            ApiError::BadRequest(_) => "bad_request",
            ApiError::UnknownRoute { .. } => "unknown_route",
            ApiError::MethodNotAllowed { .. } => "method_not_allowed",
            ApiError::NotFound(_) => "not_found",
            ApiError::NoModel => "no_model_configured",
            ApiError::Busy(_) => "model_busy",
            ApiError::Upstream(_) => "upstream_model_error",
            ApiError::Internal(_) => "internal_error",
            ApiError::DiskFull(_) => "disk_full",
            ApiError::InProgress(_) => "in_progress",
        }
    }

    /// The error object, `{"error":{"message","type","code"}}`.
    pub fn body(&self) -> ErrorBody {
        ErrorBody {
            error: ErrorObject {
                message: self.to_string(),
                kind: self.kind(),
                code: self.code(),
            },
        }
    }
}

/// The JSON body of an error response (and of an error inside a stream).
#[derive(Debug, Clone, Serialize)]
pub struct ErrorBody {
    /// The error.
    pub error: ErrorObject,
}

/// What went wrong, as OpenAI clients read it.
#[derive(Debug, Clone, Serialize)]
pub struct ErrorObject {
    /// What was wrong, for people.
    pub message: String,
    /// The class (`invalid_request_error`, `authentication_error`, `server_error`).
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// A stable name for programs.
    pub code: &'static str,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status(), axum::Json(self.body())).into_response();
        if matches!(self, ApiError::Busy(_)) {
            response.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from(BUSY_RETRY_AFTER_SECS),
            );
        }
        if self == ApiError::Unauthorized {
            response.headers_mut().insert(
                axum::http::header::WWW_AUTHENTICATE,
                axum::http::HeaderValue::from_static("Bearer"),
            );
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_error_has_its_status_and_an_openai_error_object() {
        let cases = [
            (ApiError::Unauthorized, 401, "invalid_api_key"),
            (ApiError::BodyTooLarge { limit: 10 }, 413, "body_too_large"),
            (ApiError::BadRequest("x".into()), 400, "bad_request"),
            (
                ApiError::UnknownRoute {
                    method: "GET".into(),
                    path: "/nope".into(),
                },
                404,
                "unknown_route",
            ),
            (ApiError::NoModel, 503, "no_model_configured"),
            (ApiError::Busy("busy".into()), 503, "model_busy"),
            (
                ApiError::Upstream("refused".into()),
                502,
                "upstream_model_error",
            ),
            (ApiError::InProgress("x".into()), 409, "in_progress"),
        ];
        for (error, status, code) in cases {
            assert_eq!(error.status().as_u16(), status, "{error}");
            let json = serde_json::to_value(error.body()).unwrap();
            assert_eq!(json["error"]["code"], code);
            assert_eq!(json["error"]["message"], error.to_string());
            assert!(json["error"]["type"].is_string());
        }
    }

    #[test]
    fn a_busy_model_asks_the_client_to_retry_later() {
        let response = ApiError::Busy("the model m is busy".into()).into_response();
        assert_eq!(response.status().as_u16(), 503);
        assert_eq!(
            response.headers()[axum::http::header::RETRY_AFTER],
            BUSY_RETRY_AFTER_SECS.to_string().as_str()
        );
        assert!(
            ApiError::NoModel
                .into_response()
                .headers()
                .get(axum::http::header::RETRY_AFTER)
                .is_none()
        );
    }

    #[test]
    fn the_no_model_error_says_how_to_configure_one() {
        let text = ApiError::NoModel.to_string();
        for needle in ["no model is configured", "--llm-url", "PORFIRY_LLM_URL"] {
            assert!(text.contains(needle), "{text}");
        }
    }
}

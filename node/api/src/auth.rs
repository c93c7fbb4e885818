//! The bearer-token check every request passes first, unknown routes
//! included (so routes are not discoverable without the token).

use axum::extract::{Request, State};
use axum::http::header::AUTHORIZATION;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::errors::ApiError;
use super::state::ApiState;

/// Passes the request on when it carries `Authorization: Bearer <token>`;
/// 401 with the error object otherwise.
pub async fn require_token(
    State(state): State<ApiState>,
    request: Request,
    next: Next,
) -> Response {
    let presented = request
        .headers()
        .get(AUTHORIZATION)
        .and_then(|value| bearer(value.as_bytes()));
    match presented {
        Some(token) if state.token().matches(token) => next.run(request).await,
        _ => ApiError::Unauthorized.into_response(),
    }
}

/// The token of a `Bearer <token>` header value (scheme case-insensitive).
pub fn bearer(value: &[u8]) -> Option<&[u8]> {
    let scheme = value.get(..7)?;
    if !scheme.eq_ignore_ascii_case(b"bearer ") {
        return None;
    }
    Some(value[7..].trim_ascii())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bearer_scheme_is_read_case_insensitively() {
        assert_eq!(bearer(b"Bearer abc"), Some(&b"abc"[..]));
        assert_eq!(bearer(b"bearer  abc "), Some(&b"abc"[..]));
        assert_eq!(bearer(b"Basic abc"), None);
        assert_eq!(bearer(b"Bear"), None);
    }
}

//! The check every request passes first, unknown routes included (so
//! routes are not discoverable without credentials): the `Host` header must
//! be one the API answers to (DNS rebinding), then either the bearer token
//! (programs) or the family page's session cookie (browsers; their writes
//! must come from the page's own origin, CSRF). The page's sign-in route
//! and static files need neither; `/` without a session is a page saying
//! how to sign in.

use axum::extract::{Request, State};
use axum::http::header::{AUTHORIZATION, COOKIE, HOST, ORIGIN};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::errors::ApiError;
use super::state::ApiState;
use super::web::guard::{cookie_name, cookie_value, host_allowed, origin_matches};
use super::web::routes::refusal;

/// Paths anyone who reaches the API may load: the sign-in route (it checks
/// its own code) and the page's static files (no data in them).
const OPEN_PATHS: &[&str] = &["/login", "/page/app.js", "/page/app.css"];

/// Passes the request on when its `Host` is served and it carries
/// `Authorization: Bearer <token>` or a signed-in session cookie (with a
/// write's `Origin` the page's own); refuses it otherwise, saying why.
pub async fn require_token(
    State(state): State<ApiState>,
    request: Request,
    next: Next,
) -> Response {
    let headers = request.headers();
    let host = match headers.get(HOST).map(|h| h.to_str()) {
        None => None,
        Some(Ok(host)) if host_allowed(host) => Some(host.to_owned()),
        Some(_) => {
            tracing::info!("refused a request for a host name the API does not serve");
            return refusal(&state, StatusCode::FORBIDDEN, |t| &t.wrong_host);
        }
    };
    if OPEN_PATHS.contains(&request.uri().path()) {
        return next.run(request).await;
    }
    let presented = headers
        .get(AUTHORIZATION)
        .and_then(|value| bearer(value.as_bytes()));
    if presented.is_some_and(|token| state.token().matches(token)) {
        return next.run(request).await;
    }
    let session = headers
        .get(COOKIE)
        .and_then(|c| c.to_str().ok())
        .and_then(|c| cookie_value(c, &cookie_name(host.as_deref())).map(str::to_owned));
    let signed_in = presented.is_none()
        && session.is_some_and(|s| state.signins().is_signed_in(&s, state.now_ms()));
    if signed_in {
        if is_write(request.method()) {
            let origin = headers.get(ORIGIN).and_then(|o| o.to_str().ok());
            let same = match (origin, host.as_deref()) {
                (Some(origin), Some(host)) => origin_matches(origin, host),
                _ => false,
            };
            if !same {
                tracing::info!("refused a cookie-signed write from another origin");
                return refusal(&state, StatusCode::FORBIDDEN, |t| &t.wrong_origin);
            }
        }
        return next.run(request).await;
    }
    if request.uri().path() == "/" {
        return refusal(&state, StatusCode::UNAUTHORIZED, |t| &t.signed_out);
    }
    ApiError::Unauthorized.into_response()
}

/// Whether `method` changes something (and so needs the page's origin).
fn is_write(method: &Method) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
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

//! The family page through the router: sign-in by a one-time link, the
//! session cookie (HttpOnly, SameSite=Strict, named for the port), the
//! Host check against DNS rebinding, the Origin check of cookie writes,
//! the refusal pages, the open static files.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode};

use super::fakes::{FakeNode, TOKEN, body_text, call, clock, send};
use crate::web::signin::LOGIN_CODE_TTL_MS;
use crate::{ApiState, ApiToken};

const HOST: &str = "127.0.0.1:4580";

fn state_with_clock() -> (ApiState, porfiry_skills::ManualClock) {
    let clock = clock();
    let state = ApiState::new(
        Arc::new(FakeNode),
        None,
        ApiToken::from_secret(TOKEN),
        Arc::new(clock.clone()),
    );
    (state, clock)
}

fn browser(method: &str, path: &str, cookie: Option<&str>, origin: Option<&str>) -> Request<Body> {
    let mut r = Request::builder()
        .method(method)
        .uri(path)
        .header("host", HOST)
        .header("content-type", "application/json");
    if let Some(c) = cookie {
        r = r.header("cookie", c);
    }
    if let Some(o) = origin {
        r = r.header("origin", o);
    }
    let body = if method == "POST" {
        r#"{"text":"from the page","audience":"friends"}"#
    } else {
        ""
    };
    r.body(Body::from(body)).unwrap()
}

/// Signs a browser in; returns its `Cookie` header value.
async fn sign_in(state: &ApiState) -> String {
    let code = state.issue_login_code().unwrap();
    let response = send(
        state,
        browser("GET", &format!("/login?code={code}"), None, None),
    )
    .await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    assert_eq!(response.headers()["location"], "/");
    let set = response.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(set.starts_with("porfiry_4580="), "{set}");
    for flag in ["HttpOnly", "SameSite=Strict", "Path=/"] {
        assert!(set.contains(flag), "{set}");
    }
    set.split(';').next().unwrap().to_owned()
}

#[tokio::test]
async fn a_login_link_signs_in_once_and_the_cookie_opens_the_page_and_the_api() {
    let (state, _) = state_with_clock();
    let signed_out = send(&state, browser("GET", "/", None, None)).await;
    assert_eq!(signed_out.status(), StatusCode::UNAUTHORIZED);
    let text = body_text(signed_out).await;
    assert!(
        text.contains("Sign in to this node") && text.contains("porfiry web"),
        "{text}"
    );

    let cookie = sign_in(&state).await;
    let page = send(&state, browser("GET", "/", Some(&cookie), None)).await;
    assert_eq!(page.status(), StatusCode::OK);
    let csp = page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(csp.contains("default-src 'none'"), "{csp}");
    assert!(body_text(page).await.contains("<html lang=\"en\">"));
    let (status, notes) = call(&state, browser("GET", "/api/notes", Some(&cookie), None)).await;
    assert_eq!(status, StatusCode::OK, "{notes}");

    // Another port's cookie is another node's.
    let other = cookie.replace("porfiry_4580", "porfiry_4581");
    let (status, _) = call(&state, browser("GET", "/api/notes", Some(&other), None)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn a_replayed_an_expired_and_an_unknown_link_each_say_what_to_do() {
    let (state, clock) = state_with_clock();
    let code = state.issue_login_code().unwrap();
    let path = format!("/login?code={code}");
    assert_eq!(
        send(&state, browser("GET", &path, None, None))
            .await
            .status(),
        StatusCode::SEE_OTHER
    );
    let replay = send(&state, browser("GET", &path, None, None)).await;
    assert_eq!(replay.status(), StatusCode::FORBIDDEN);
    assert!(replay.headers().get("set-cookie").is_none());
    assert!(body_text(replay).await.contains("already used"));

    let late = state.issue_login_code().unwrap();
    clock.advance_ms(LOGIN_CODE_TTL_MS as i64);
    let expired = send(
        &state,
        browser("GET", &format!("/login?code={late}"), None, None),
    )
    .await;
    assert_eq!(expired.status(), StatusCode::FORBIDDEN);
    assert!(body_text(expired).await.contains("expired"));

    let unknown = send(&state, browser("GET", "/login?code=0123", None, None)).await;
    assert!(body_text(unknown).await.contains("not from this node"));
}

#[tokio::test]
async fn a_name_the_api_does_not_serve_is_refused_even_with_the_token() {
    let (state, _) = state_with_clock();
    let mut r = super::fakes::request("GET", "/api/notes", "");
    r.headers_mut()
        .insert("host", "rebound.example:4580".parse().unwrap());
    let response = send(&state, r).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert!(
        body_text(response)
            .await
            .contains("Open the node by its address")
    );
    let mut r = super::fakes::request("GET", "/api/notes", "");
    r.headers_mut()
        .insert("host", "localhost:4580".parse().unwrap());
    assert_eq!(send(&state, r).await.status(), StatusCode::OK);
}

#[tokio::test]
async fn a_cookie_write_must_come_from_the_page_itself() {
    let (state, _) = state_with_clock();
    let cookie = sign_in(&state).await;
    for origin in [
        None,
        Some("http://evil.example"),
        Some("http://127.0.0.1:4581"),
    ] {
        let response = send(&state, browser("POST", "/api/notes", Some(&cookie), origin)).await;
        assert_eq!(response.status(), StatusCode::FORBIDDEN, "{origin:?}");
        assert!(body_text(response).await.contains("another site"));
    }
    let own = Some("http://127.0.0.1:4580");
    let (status, posted) = call(&state, browser("POST", "/api/notes", Some(&cookie), own)).await;
    assert_eq!(status, StatusCode::CREATED, "{posted}");
    assert_eq!(posted["text"], "from the page");
}

#[tokio::test]
async fn the_static_files_are_open_and_a_fresh_link_needs_the_token() {
    let (state, _) = state_with_clock();
    for (path, kind) in [
        ("/page/app.js", "text/javascript"),
        ("/page/app.css", "text/css"),
    ] {
        let response = send(&state, browser("GET", path, None, None)).await;
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        assert!(
            response.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with(kind)
        );
    }
    let (status, _) = call(&state, browser("POST", "/api/login-codes", None, None)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let mut r = super::fakes::request("POST", "/api/login-codes", "");
    r.headers_mut().insert("host", HOST.parse().unwrap());
    let (status, made) = call(&state, r).await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    let url = made["url"].as_str().unwrap();
    assert!(
        url.starts_with("http://127.0.0.1:4580/login?code="),
        "{url}"
    );
    let code = made["code"].as_str().unwrap();
    let login = send(
        &state,
        browser("GET", &format!("/login?code={code}"), None, None),
    )
    .await;
    assert_eq!(login.status(), StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn a_node_without_invitations_says_so() {
    let (state, _) = state_with_clock();
    let (status, e) = call(
        &state,
        super::fakes::request("POST", "/api/invitations", "{}"),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not supported"),
        "{e}"
    );
    let (status, _) = call(
        &state,
        super::fakes::request("PATCH", "/api/friends/x", "{}"),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

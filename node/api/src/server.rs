//! The router and [`serve`]: every route behind the token (or page session) check, the body
//! cap, the 404/405 fallbacks with the error object, graceful shutdown.

use std::future::Future;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::middleware::from_fn_with_state;
use axum::routing::{delete, get, post};

use super::auth::require_token;
use super::limits::MAX_BODY_BYTES;
use super::routes::{backup, chat, devices, fallback, models, node};
use super::state::ApiState;
use super::web::events;
use super::web::routes as web;

/// The API's routes over `state`.
pub fn router(state: ApiState) -> Router {
    Router::new()
        .route("/v1/models", get(models::list))
        .route("/v1/chat/completions", post(chat::completions))
        .route("/api/notes", get(node::list_notes).post(node::post_note))
        .route(
            "/api/friends",
            get(node::list_friends).post(node::add_friend),
        )
        .route(
            "/api/friends/{peer}",
            delete(node::remove_friend).patch(web::change_friend),
        )
        .route("/api/status", get(node::status))
        .route("/", get(web::page))
        .route("/page/app.js", get(web::script))
        .route("/page/app.css", get(web::style))
        .route("/login", get(web::login))
        .route("/api/login-codes", post(web::new_login_code))
        .route("/api/events", get(events::stream))
        .route("/api/invitations", post(web::invite))
        .route("/api/join", post(web::join))
        .route("/api/peer-qr", get(web::peer_qr))
        .route("/api/mind", get(web::mind).post(web::change_mind))
        .route("/api/clubs", get(web::clubs))
        .route("/api/devices", get(devices::list).post(devices::link))
        .route("/api/devices/join", post(devices::join))
        .route("/api/devices/{peer}", delete(devices::unlink))
        .route("/api/backup", post(backup::download))
        .fallback(fallback::not_found)
        .method_not_allowed_fallback(fallback::method_not_allowed)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(from_fn_with_state(state.clone(), require_token))
        .with_state(state)
}

/// Serves the API on `listener` until `shutdown` resolves; then stops
/// accepting and waits for the requests in flight (streams included) to end.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: ApiState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router(state))
        .with_graceful_shutdown(shutdown)
        .await
}

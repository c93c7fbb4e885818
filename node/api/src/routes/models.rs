//! `GET /v1/models`: the node's agent as the one model, `porfiry`.

use axum::Json;
use axum::extract::State;

use crate::state::ApiState;
use crate::wire::ModelList;

/// The model list chat UIs fetch to fill their model picker.
pub async fn list(State(state): State<ApiState>) -> Json<ModelList> {
    Json(ModelList::agent(state.started_secs()))
}

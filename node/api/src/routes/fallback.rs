//! Unknown routes (404) and wrong methods (405), with the error object.

use axum::http::{Method, Uri};

use crate::errors::ApiError;

/// 404 for a path no route serves.
pub async fn not_found(method: Method, uri: Uri) -> ApiError {
    ApiError::UnknownRoute {
        method: method.to_string(),
        path: uri.path().to_owned(),
    }
}

/// 405 for a known path with another method.
pub async fn method_not_allowed(method: Method, uri: Uri) -> ApiError {
    ApiError::MethodNotAllowed {
        method: method.to_string(),
        path: uri.path().to_owned(),
    }
}

//! Extractors whose failures are the API's error objects: a JSON body read
//! up to [`MAX_BODY_BYTES`](super::limits::MAX_BODY_BYTES) (413 above it,
//! 400 when malformed; the content type is not checked, so `curl -d` works),
//! and query strings (400 when malformed).

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Query, Request};
use axum::http::StatusCode;
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use super::errors::ApiError;
use super::limits::MAX_BODY_BYTES;

/// A JSON request body of type `T`.
pub struct JsonBody<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = Bytes::from_request(request, state)
            .await
            .map_err(|rejection| {
                if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                    ApiError::BodyTooLarge {
                        limit: MAX_BODY_BYTES,
                    }
                } else {
                    ApiError::BadRequest(format!("cannot read the body: {}", rejection.body_text()))
                }
            })?;
        serde_json::from_slice(&bytes)
            .map(JsonBody)
            .map_err(|e| ApiError::BadRequest(format!("the body is not a valid request: {e}")))
    }
}

/// A query string of type `T`.
pub struct QueryParams<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for QueryParams<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        Query::<T>::from_request_parts(parts, state)
            .await
            .map(|Query(value)| QueryParams(value))
            .map_err(|rejection| ApiError::BadRequest(rejection.body_text()))
    }
}

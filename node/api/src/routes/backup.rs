//! `POST /api/backup` with `{"passphrase": "…"}`: the node's encrypted
//! backup as a download (`application/octet-stream`, `Content-Disposition:
//! attachment; filename="porfiry-<peer>-<date>.porfiry-backup"`), the same
//! file `porfiry backup FILE` writes, which `porfiry restore FILE
//! --data-dir DIR` makes the node again from.
//!
//! Who may: the backup holds the node's identity key, so only the node's
//! owner. The API has no roles to pick a stricter one from: the auth layer
//! (`crate::auth`) lets in the bearer token (readable only by whoever runs
//! the node: it lives in its data dir) and a family page session, which
//! only a one-time login link opens, and only a token holder makes those
//! (`porfiry run` and `porfiry web` print them, `POST /api/login-codes`
//! needs the token or a session). Both are the owner; anyone else gets 401,
//! and a cookie-signed request from another site 403 (as every write).
//!
//! Memory: the backup is made on a blocking thread into an unnamed
//! temporary file (`crate::backup`), then streamed from that file in
//! [`BACKUP_DOWNLOAD_CHUNK`] pieces: a node with tens of MB of notes never
//! has its backup in memory, and the file's space is freed when the
//! response ends (or the client hangs up).

use axum::body::Body;
use axum::extract::State;
use axum::http::header::{CACHE_CONTROL, CONTENT_DISPOSITION, CONTENT_LENGTH, CONTENT_TYPE};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use tokio_util::io::ReaderStream;

use crate::body::JsonBody;
use crate::errors::ApiError;
use crate::limits::BACKUP_DOWNLOAD_CHUNK;
use crate::state::ApiState;
use porfiry_backup::passphrase::{MAX_PASSPHRASE_BYTES, Purpose, check};

/// Characters of the peer id in the file name: the 12 the family page shows
/// as a friend's short id.
pub const FILE_PEER_CHARS: usize = 12;

/// The backup file's extension, as in `docs/service.md`'s examples.
pub const FILE_EXTENSION: &str = "porfiry-backup";

/// `POST /api/backup`.
#[derive(Debug, Deserialize)]
pub struct BackupBody {
    /// What seals the backup (at least the CLI's minimum length).
    pub passphrase: String,
}

/// Makes the backup and streams it back.
pub async fn download(
    State(state): State<ApiState>,
    JsonBody(body): JsonBody<BackupBody>,
) -> Result<Response, ApiError> {
    if body.passphrase.len() as u64 > MAX_PASSPHRASE_BYTES {
        return Err(ApiError::BadRequest(format!(
            "the passphrase is over {MAX_PASSPHRASE_BYTES} bytes"
        )));
    }
    check(&body.passphrase, Purpose::Seal).map_err(|e| ApiError::BadRequest(e.to_string()))?;
    let made = {
        let Some(_permit) = state.backup_permit() else {
            return Err(ApiError::InProgress(
                "a backup is being made; try again when it is done".to_owned(),
            ));
        };
        state.node().backup(body.passphrase).await?
    };
    let name = file_name(&made.peer_id, made.made_ms);
    let disposition = HeaderValue::from_str(&format!("attachment; filename=\"{name}\""))
        .map_err(|e| ApiError::Internal(format!("the file name {name:?}: {e}")))?;
    let stream =
        ReaderStream::with_capacity(tokio::fs::File::from_std(made.file), BACKUP_DOWNLOAD_CHUNK);
    Ok((
        StatusCode::OK,
        [
            (
                CONTENT_TYPE,
                HeaderValue::from_static("application/octet-stream"),
            ),
            (CONTENT_LENGTH, HeaderValue::from(made.bytes)),
            (CONTENT_DISPOSITION, disposition),
            (CACHE_CONTROL, HeaderValue::from_static("no-store")),
        ],
        Body::from_stream(stream),
    )
        .into_response())
}

/// `porfiry-<first 12 characters of the peer id>-<YYYY-MM-DD, UTC>.porfiry-backup`:
/// whose and when, in characters every file system and header takes.
pub fn file_name(peer_id: &str, made_ms: u64) -> String {
    let peer: String = peer_id
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(FILE_PEER_CHARS)
        .collect();
    let seconds = i64::try_from(made_ms / 1_000).unwrap_or(i64::MAX);
    let date = time::OffsetDateTime::from_unix_timestamp(seconds)
        .map(|t| t.date())
        .unwrap_or(time::Date::MIN);
    format!(
        "porfiry-{peer}-{:04}-{:02}-{:02}.{FILE_EXTENSION}",
        date.year(),
        u8::from(date.month()),
        date.day()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_is_named_for_the_node_and_the_day() {
        // 2026-11-30 12:00 UTC.
        let ms = 1_796_040_000_000;
        assert_eq!(
            file_name("12D3KooWD3eckifWpRn9wQpMG9R9hX3sD158z7EqHWmweQAJU5SA", ms),
            "porfiry-12D3KooWD3ec-2026-11-30.porfiry-backup"
        );
        // Nothing but letters and digits from the peer id reaches the header.
        assert_eq!(
            file_name("a\"b/c", 0),
            "porfiry-abc-1970-01-01.porfiry-backup"
        );
    }
}

//! The `/porfiry/model/1` wire format: the client sends one
//! [`ModelRequest`] frame; the server answers one [`ModelAnswer`] frame and,
//! after [`ModelAnswer::Sending`], the file's raw bytes from the asked offset
//! to its end, then closes. Frames are a 4-byte big-endian length and that
//! much JSON, as on `/porfiry/offload/1`; the length is checked against
//! [`MAX_MODEL_FRAME_BYTES`] before a body byte is read. The file's bytes
//! are not framed: JSON around gigabytes would only cost time, and the
//! client knows how many to expect from `Sending`.

use futures::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::list::SignedList;

/// The cap on one frame: a signed list of [`super::MAX_LISTED_MODELS`]
/// entries is about 300 bytes each (name, file, hash, size), well under
/// 64 KiB; a request or an error is a few hundred bytes.
pub const MAX_MODEL_FRAME_BYTES: usize = 64 * 1024;

/// What the client asks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ModelRequest {
    /// The friend's signed list of what it shares.
    List,
    /// One file's bytes from `offset` (what the client already holds).
    Fetch {
        /// The listed name.
        name: String,
        /// The listed SHA-256 (hex): the server refuses if its file changed.
        sha256: String,
        /// The first byte wanted.
        offset: u64,
    },
}

/// What the server answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ModelAnswer {
    /// The list, signed by the server's node key.
    List {
        /// The signed list.
        list: SignedList,
    },
    /// The bytes from `offset` to `bytes` follow, raw, then the stream ends.
    Sending {
        /// The first byte sent.
        offset: u64,
        /// The file's whole size.
        bytes: u64,
    },
    /// Refused or failed; nothing follows.
    Error {
        /// What kind, for the client's decisions.
        kind: ErrorKind,
        /// Words for a person.
        message: String,
    },
}

/// Why the server refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The friend may not pull this node's models.
    NotPermitted,
    /// No shared model of that name (or its file changed since listed).
    Unknown,
    /// Every transfer slot is taken; try again later.
    Busy,
    /// The request made no sense (an offset past the end).
    BadRequest,
    /// The server could not read its own file.
    Io,
}

/// A frame that could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    /// The stream failed or ended.
    #[error("model stream: {0}")]
    Io(#[from] std::io::Error),
    /// A frame above the cap.
    #[error("model stream: a frame of {0} bytes is above the {MAX_MODEL_FRAME_BYTES}-byte cap")]
    TooLarge(usize),
    /// A frame that is not the JSON expected.
    #[error("model stream: a bad frame: {0}")]
    Json(#[from] serde_json::Error),
}

/// Writes one frame and flushes it.
pub async fn write_frame<W, T>(out: &mut W, frame: &T) -> Result<(), WireError>
where
    W: AsyncWrite + Unpin,
    T: Serialize,
{
    let body = serde_json::to_vec(frame)?;
    if body.len() > MAX_MODEL_FRAME_BYTES {
        return Err(WireError::TooLarge(body.len()));
    }
    // The cap is far below u32::MAX.
    let len = u32::try_from(body.len()).map_err(|_| WireError::TooLarge(body.len()))?;
    out.write_all(&len.to_be_bytes()).await?;
    out.write_all(&body).await?;
    out.flush().await?;
    Ok(())
}

/// Reads one frame, refusing a length above the cap before reading its body.
pub async fn read_frame<R, T>(input: &mut R) -> Result<T, WireError>
where
    R: AsyncRead + Unpin,
    T: DeserializeOwned,
{
    let mut len = [0u8; 4];
    input.read_exact(&mut len).await?;
    let len = u32::from_be_bytes(len) as usize;
    if len > MAX_MODEL_FRAME_BYTES {
        return Err(WireError::TooLarge(len));
    }
    let mut body = vec![0u8; len];
    input.read_exact(&mut body).await?;
    Ok(serde_json::from_slice(&body)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_an_oversized_length_is_refused_before_its_body() {
        futures::executor::block_on(async {
            let mut buf = Vec::new();
            let asked = ModelRequest::Fetch {
                name: "smol".into(),
                sha256: "ab".repeat(32),
                offset: 7,
            };
            write_frame(&mut buf, &asked).await.unwrap();
            let got: ModelRequest = read_frame(&mut buf.as_slice()).await.unwrap();
            assert_eq!(got, asked);

            let mut huge = ((MAX_MODEL_FRAME_BYTES + 1) as u32).to_be_bytes().to_vec();
            huge.extend_from_slice(b"{}");
            let e = read_frame::<_, ModelRequest>(&mut huge.as_slice())
                .await
                .unwrap_err();
            assert!(matches!(e, WireError::TooLarge(n) if n == MAX_MODEL_FRAME_BYTES + 1));
        });
    }
}

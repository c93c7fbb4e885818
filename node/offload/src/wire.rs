//! The `/porfiry/offload/1` wire format (pure apart from the two async frame
//! helpers): every frame is a 4-byte big-endian length and that many bytes of
//! JSON. The client sends one [`ClientFrame::Request`] and then at most a
//! [`ClientFrame::Cancel`]; the server answers [`ServerFrame::Delta`]s, then one
//! [`ServerFrame::Done`] or one [`ServerFrame::Error`], and closes.
//!
//! JSON rather than CBOR: frames are a few text fields, the node already speaks
//! JSON to its upstream model, and a captured stream reads as text. The length
//! is checked against the cap before any body byte is read, so a peer cannot
//! make the reader allocate more than the cap.

use futures::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use porfiry_skills::llm::{ChatMessage, ModelRequest, Usage};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// The request frame's cap: 1 MiB of JSON is ~250k tokens of history, above the
/// context of any model a family server runs, and small enough to hold in memory
/// per request at the default capacity.
pub const MAX_OFFLOAD_REQUEST_BYTES: usize = 1024 * 1024;

/// Any other frame's cap: a delta or an error message is a few bytes to a few KiB;
/// the server cuts text into pieces of [`MAX_DELTA_TEXT_BYTES`], and 64 KiB holds
/// such a piece even when JSON escapes every byte (`\u0001`, 6 bytes).
pub const MAX_OFFLOAD_FRAME_BYTES: usize = 64 * 1024;

/// The most text one [`ServerFrame::Delta`] carries: a whole (non-streamed) answer
/// is sent in pieces of this size so every frame stays under
/// [`MAX_OFFLOAD_FRAME_BYTES`] even if every byte were escaped (6 × 8 KiB = 48 KiB).
pub const MAX_DELTA_TEXT_BYTES: usize = 8 * 1024;

/// What the client sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ClientFrame {
    /// The one request of the stream.
    Request(OffloadRequest),
    /// Stop generating (closing or dropping the stream does the same).
    Cancel,
}

/// One chat request: the system prompt, the history, the answer's budget, and
/// whether the answer is wanted in pieces as it is made (`stream`) or in one
/// piece at the end. Sampling settings are the server's own (its `--llm-*`
/// configuration): the `Llm` trait carries none, so none travel. The budget
/// does, and the server's model sends the smaller of it and its own limit;
/// so do the stop texts, which any model honours. The reply grammar does
/// not: the friend's node decodes as its own model does, and whether that
/// model may be sent a grammar is its owner's setting, not the asker's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OffloadRequest {
    /// The system prompt.
    pub system: String,
    /// The history, in order.
    pub messages: Vec<ChatMessage>,
    /// Stream the answer (`true`) or send it whole at the end.
    pub stream: bool,
    /// The most tokens the answer may have; absent from older clients' frames
    /// (then the server's own limit alone applies).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Texts that end the answer (`ModelRequest::stop`); absent when none,
    /// and from older clients' frames.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stop: Vec<String>,
}

impl OffloadRequest {
    /// The request for a model call.
    pub fn new(request: &ModelRequest, stream: bool) -> Self {
        Self {
            system: request.system.clone(),
            messages: request.messages.clone(),
            stream,
            max_tokens: request.max_tokens,
            stop: request.stop.clone(),
        }
    }

    /// The model call it asks for (no grammar: see the type's doc).
    pub fn model_request(&self) -> ModelRequest {
        ModelRequest {
            stop: self.stop.clone(),
            ..ModelRequest::new(self.system.clone(), self.messages.clone(), self.max_tokens)
        }
    }
}

/// What the server sends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerFrame {
    /// Answer text as it arrives.
    Delta {
        /// The piece of text.
        text: String,
    },
    /// The answer is complete.
    Done {
        /// `stop`, `length`, … as the model said.
        finish_reason: Option<String>,
        /// Token counts, when known.
        usage: Option<Usage>,
    },
    /// The request failed; nothing follows.
    Error {
        /// The kind, for the client's decisions (fail over or not).
        kind: ErrorKind,
        /// Words for a person.
        message: String,
    },
}

/// A typed refusal or failure from the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ErrorKind {
    /// The peer is not allowed to use this node's model; the model never saw it.
    NotPermitted,
    /// Every slot is taken; try again after `retry_after_ms`.
    Busy {
        /// Suggested wait in milliseconds.
        retry_after_ms: u64,
    },
    /// The server's model failed or is not reachable from the server.
    ModelDown,
    /// The request frame is larger than [`MAX_OFFLOAD_REQUEST_BYTES`].
    TooLarge,
    /// A deadline passed on the server (reading the request, or the model's own).
    Deadline,
    /// The request is not an offload request.
    BadRequest,
}

/// A frame that could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    /// The stream ended inside a frame (or right after the length).
    #[error("the stream ended inside a frame ({got} of {want} bytes)")]
    Truncated {
        /// Bytes received.
        got: usize,
        /// Bytes the frame needed.
        want: usize,
    },
    /// The length prefix is above the cap; the body was not read.
    #[error("a frame of {len} bytes is larger than the {limit}-byte limit")]
    TooLarge {
        /// The announced length.
        len: usize,
        /// The cap.
        limit: usize,
    },
    /// The body is not the expected JSON.
    #[error("a frame is not offload JSON: {0}")]
    Garbage(String),
    /// The stream failed.
    #[error("stream error: {0}")]
    Io(#[from] std::io::Error),
}

/// `frame` as bytes: the length prefix and the JSON.
pub fn encode<T: Serialize>(frame: &T) -> Vec<u8> {
    // Serialising these enums of strings and numbers cannot fail.
    let body = serde_json::to_vec(frame).unwrap_or_default();
    let mut out = Vec::with_capacity(4 + body.len());
    out.extend_from_slice(&u32::try_from(body.len()).unwrap_or(u32::MAX).to_be_bytes());
    out.extend_from_slice(&body);
    out
}

/// One frame body (without its length) as `T`.
pub fn decode<T: DeserializeOwned>(body: &[u8]) -> Result<T, WireError> {
    serde_json::from_slice(body).map_err(|e| WireError::Garbage(e.to_string()))
}

/// Reads one frame of at most `limit` bytes. `Ok(None)` is a clean end of the
/// stream before a frame began.
pub async fn read_frame<R, T>(reader: &mut R, limit: usize) -> Result<Option<T>, WireError>
where
    R: AsyncRead + Unpin,
    T: DeserializeOwned,
{
    let mut len = [0u8; 4];
    let got = read_full(reader, &mut len).await?;
    if got == 0 {
        return Ok(None);
    }
    if got < len.len() {
        return Err(WireError::Truncated { got, want: 4 });
    }
    let want = u32::from_be_bytes(len) as usize;
    if want > limit {
        return Err(WireError::TooLarge { len: want, limit });
    }
    let mut body = vec![0u8; want];
    let got = read_full(reader, &mut body).await?;
    if got < want {
        return Err(WireError::Truncated { got, want });
    }
    decode(&body).map(Some)
}

/// Writes one frame and flushes it.
pub async fn write_frame<W, T>(writer: &mut W, frame: &T) -> Result<(), WireError>
where
    W: AsyncWrite + Unpin,
    T: Serialize,
{
    writer.write_all(&encode(frame)).await?;
    writer.flush().await?;
    Ok(())
}

/// Fills `buf` unless the stream ends first; returns the bytes read.
async fn read_full<R: AsyncRead + Unpin>(reader: &mut R, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        let n = reader.read(&mut buf[got..]).await?;
        if n == 0 {
            break;
        }
        got += n;
    }
    Ok(got)
}

/// `text` cut into pieces of at most [`MAX_DELTA_TEXT_BYTES`], on char boundaries.
pub fn split_text(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let mut cut = rest.len().min(MAX_DELTA_TEXT_BYTES);
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        let (piece, tail) = rest.split_at(cut);
        out.push(piece);
        rest = tail;
    }
    out
}

#[cfg(test)]
mod tests;

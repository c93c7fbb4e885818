//! The frame codec: length-prefixed byte frames for libp2p request-response.
//!
//! On the stream a frame is `[u32 big-endian length][body]`. The length is
//! checked against the cap right after its four bytes arrive, BEFORE any of the
//! body is read; the body is then read as it arrives (never pre-allocated to the
//! announced size), so a lying peer cannot make us allocate. A request carries
//! one frame; the response is a frame too (the driver answers with an empty one
//! as an acknowledgement).
//!
//! The body is opaque bytes: the engine's wire messages are encoded and decoded
//! by the caller of the driver, so this codec never changes when they do.
//!
//! An oversized or truncated REQUEST is read as [`Frame::Refused`] rather than
//! as an error, because libp2p's request-response only logs read errors of
//! requests it has not yet delivered, without the peer; as a value it reaches
//! the driver with the peer id, which reports it and drops the stream unanswered
//! (the unread body is discarded by yamux with a reset). An oversized response
//! or a frame we are asked to write over the cap is an [`io::Error`] wrapping a
//! [`FrameError`].

use std::io;

use futures::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use libp2p::StreamProtocol;
use libp2p::request_response::Codec;

use super::limits::{FRAME_PREFIX_BYTES, MAX_TRANSPORT_FRAME_BYTES};

/// Largest buffer reserved up front for a body; the rest grows as bytes arrive.
/// 64 KiB is one full envelope, so typical frames need no reallocation.
pub const INITIAL_BODY_CAPACITY: usize = 64 * 1024;

/// Why a frame could not be read or written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// The announced (or, when sending, the actual) length is over the cap.
    #[error("frame of {len} bytes is over the {max}-byte cap")]
    TooLarge {
        /// The frame's length in bytes.
        len: u64,
        /// The cap it is over.
        max: u32,
    },
    /// The stream ended before the announced number of body bytes.
    #[error("frame truncated: {got} of {expected} bytes arrived")]
    Truncated {
        /// The length the prefix announced.
        expected: u32,
        /// The bytes that arrived before the stream ended.
        got: u64,
    },
}

impl FrameError {
    /// The frame error inside an I/O error from the codec, if that is its cause.
    pub fn from_io(error: &io::Error) -> Option<&FrameError> {
        error
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<FrameError>())
    }

    fn into_io(self) -> io::Error {
        let kind = match self {
            FrameError::TooLarge { .. } => io::ErrorKind::InvalidData,
            FrameError::Truncated { .. } => io::ErrorKind::UnexpectedEof,
        };
        io::Error::new(kind, self)
    }
}

/// A request as read from a stream: its body, or why it was refused unread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// The whole body, within the cap.
    Body(Vec<u8>),
    /// The frame broke the framing rules; what was left of it was not read.
    Refused(FrameError),
}

/// Reads one request frame; a framing violation becomes [`Frame::Refused`],
/// other I/O failures stay errors.
pub async fn read_request_frame<R>(io: &mut R, max: u32) -> io::Result<Frame>
where
    R: AsyncRead + Unpin + Send,
{
    match read_frame(io, max).await {
        Ok(body) => Ok(Frame::Body(body)),
        Err(error) => match FrameError::from_io(&error) {
            Some(refusal) => Ok(Frame::Refused(refusal.clone())),
            None => Err(error),
        },
    }
}

/// Reads one frame, refusing an announced length over `max` before reading the body.
pub async fn read_frame<R>(io: &mut R, max: u32) -> io::Result<Vec<u8>>
where
    R: AsyncRead + Unpin + Send,
{
    let mut prefix = [0u8; FRAME_PREFIX_BYTES];
    io.read_exact(&mut prefix).await?;
    let len = u32::from_be_bytes(prefix);
    if len > max {
        return Err(FrameError::TooLarge {
            len: u64::from(len),
            max,
        }
        .into_io());
    }
    let mut body = Vec::with_capacity((len as usize).min(INITIAL_BODY_CAPACITY));
    let got = io.take(u64::from(len)).read_to_end(&mut body).await?;
    if got as u64 != u64::from(len) {
        return Err(FrameError::Truncated {
            expected: len,
            got: got as u64,
        }
        .into_io());
    }
    Ok(body)
}

/// Writes one frame, refusing a body over `max` before writing anything.
pub async fn write_frame<W>(io: &mut W, body: &[u8], max: u32) -> io::Result<()>
where
    W: AsyncWrite + Unpin + Send,
{
    let len = match u32::try_from(body.len()) {
        Ok(len) if len <= max => len,
        _ => {
            return Err(FrameError::TooLarge {
                len: body.len() as u64,
                max,
            }
            .into_io());
        }
    };
    io.write_all(&len.to_be_bytes()).await?;
    io.write_all(body).await?;
    io.flush().await
}

/// Request-response codec moving opaque byte frames with a size cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameCodec {
    max_frame_bytes: u32,
}

impl FrameCodec {
    /// A codec with the given cap on frame bodies, both directions.
    pub fn new(max_frame_bytes: u32) -> Self {
        Self { max_frame_bytes }
    }

    /// The cap on frame bodies this codec enforces.
    pub fn max_frame_bytes(&self) -> u32 {
        self.max_frame_bytes
    }
}

impl Default for FrameCodec {
    fn default() -> Self {
        Self::new(MAX_TRANSPORT_FRAME_BYTES)
    }
}

impl Codec for FrameCodec {
    type Protocol = StreamProtocol;
    type Request = Frame;
    type Response = Vec<u8>;

    fn read_request<T>(
        &mut self,
        _protocol: &StreamProtocol,
        io: &mut T,
    ) -> impl Future<Output = io::Result<Frame>> + Send
    where
        T: AsyncRead + Unpin + Send,
    {
        read_request_frame(io, self.max_frame_bytes)
    }

    fn read_response<T>(
        &mut self,
        _protocol: &StreamProtocol,
        io: &mut T,
    ) -> impl Future<Output = io::Result<Vec<u8>>> + Send
    where
        T: AsyncRead + Unpin + Send,
    {
        read_frame(io, self.max_frame_bytes)
    }

    fn write_request<T>(
        &mut self,
        _protocol: &StreamProtocol,
        io: &mut T,
        req: Frame,
    ) -> impl Future<Output = io::Result<()>> + Send
    where
        T: AsyncWrite + Unpin + Send,
    {
        let max = self.max_frame_bytes;
        async move {
            match req {
                Frame::Body(body) => write_frame(io, &body, max).await,
                Frame::Refused(refusal) => {
                    Err(io::Error::new(io::ErrorKind::InvalidInput, refusal))
                }
            }
        }
    }

    fn write_response<T>(
        &mut self,
        _protocol: &StreamProtocol,
        io: &mut T,
        res: Vec<u8>,
    ) -> impl Future<Output = io::Result<()>> + Send
    where
        T: AsyncWrite + Unpin + Send,
    {
        let max = self.max_frame_bytes;
        async move { write_frame(io, &res, max).await }
    }
}

#[cfg(test)]
mod tests {
    use futures::executor::block_on;
    use futures::io::Cursor;

    use super::*;

    fn encoded(body: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        block_on(write_frame(
            &mut Cursor::new(&mut out),
            body,
            MAX_TRANSPORT_FRAME_BYTES,
        ))
        .unwrap();
        out
    }

    #[test]
    fn frame_round_trips_with_big_endian_prefix() {
        let bytes = encoded(b"hello");
        assert_eq!(bytes, [0, 0, 0, 5, b'h', b'e', b'l', b'l', b'o']);
        let back = block_on(read_frame(
            &mut Cursor::new(bytes),
            MAX_TRANSPORT_FRAME_BYTES,
        ))
        .unwrap();
        assert_eq!(back, b"hello");
    }

    #[test]
    fn empty_frame_round_trips() {
        let bytes = encoded(b"");
        assert_eq!(bytes, [0, 0, 0, 0]);
        let back = block_on(read_frame(
            &mut Cursor::new(bytes),
            MAX_TRANSPORT_FRAME_BYTES,
        ))
        .unwrap();
        assert!(back.is_empty());
    }

    #[test]
    fn frame_at_the_cap_is_accepted() {
        let body = vec![7u8; 1000];
        let bytes = encoded(&body);
        let back = block_on(read_frame(&mut Cursor::new(bytes), 1000)).unwrap();
        assert_eq!(back, body);
    }

    #[test]
    fn oversized_prefix_is_refused_before_the_body_is_read() {
        // The prefix announces 4 MiB + 1 but no body follows: a reader that
        // looked at the body would fail with Truncated, not TooLarge.
        let prefix = (MAX_TRANSPORT_FRAME_BYTES + 1).to_be_bytes().to_vec();
        let err = block_on(read_frame(
            &mut Cursor::new(prefix),
            MAX_TRANSPORT_FRAME_BYTES,
        ))
        .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert_eq!(
            FrameError::from_io(&err),
            Some(&FrameError::TooLarge {
                len: u64::from(MAX_TRANSPORT_FRAME_BYTES) + 1,
                max: MAX_TRANSPORT_FRAME_BYTES
            })
        );
    }

    #[test]
    fn reader_stops_right_after_an_oversized_prefix() {
        let mut bytes = 11u32.to_be_bytes().to_vec();
        bytes.extend_from_slice(b"hello world");
        let mut cursor = Cursor::new(bytes);
        let err = block_on(read_frame(&mut cursor, 10)).unwrap_err();
        assert!(matches!(
            FrameError::from_io(&err),
            Some(FrameError::TooLarge { len: 11, max: 10 })
        ));
        assert_eq!(
            cursor.position(),
            FRAME_PREFIX_BYTES as u64,
            "no body byte was consumed"
        );
    }

    #[test]
    fn truncated_body_is_an_error() {
        let mut bytes = 10u32.to_be_bytes().to_vec();
        bytes.extend_from_slice(b"abc");
        let err = block_on(read_frame(
            &mut Cursor::new(bytes),
            MAX_TRANSPORT_FRAME_BYTES,
        ))
        .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
        assert_eq!(
            FrameError::from_io(&err),
            Some(&FrameError::Truncated {
                expected: 10,
                got: 3
            })
        );
    }

    #[test]
    fn truncated_prefix_is_an_error() {
        let err = block_on(read_frame(
            &mut Cursor::new(vec![0u8, 0]),
            MAX_TRANSPORT_FRAME_BYTES,
        ))
        .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
        assert_eq!(FrameError::from_io(&err), None);
    }

    #[test]
    fn oversized_body_is_refused_before_anything_is_written() {
        let mut out = Vec::new();
        let err = block_on(write_frame(&mut Cursor::new(&mut out), &[0u8; 11], 10)).unwrap_err();
        assert_eq!(
            FrameError::from_io(&err),
            Some(&FrameError::TooLarge { len: 11, max: 10 })
        );
        assert!(out.is_empty());
    }

    const P: StreamProtocol = super::super::limits::FRAME_PROTOCOL;

    #[test]
    fn codec_requests_round_trip() {
        let mut codec = FrameCodec::new(4);
        let mut out = Vec::new();
        block_on(codec.write_request(
            &P,
            &mut Cursor::new(&mut out),
            Frame::Body(b"abcd".to_vec()),
        ))
        .unwrap();
        let back = block_on(codec.read_request(&P, &mut Cursor::new(out))).unwrap();
        assert_eq!(back, Frame::Body(b"abcd".to_vec()));
    }

    #[test]
    fn codec_reads_a_bad_request_as_refused_not_as_an_error() {
        let mut codec = FrameCodec::new(4);
        let mut bytes = 5u32.to_be_bytes().to_vec();
        bytes.extend_from_slice(b"12345");
        let got = block_on(codec.read_request(&P, &mut Cursor::new(bytes))).unwrap();
        assert_eq!(got, Frame::Refused(FrameError::TooLarge { len: 5, max: 4 }));
        let mut short = 3u32.to_be_bytes().to_vec();
        short.push(b'x');
        let got = block_on(codec.read_request(&P, &mut Cursor::new(short))).unwrap();
        assert_eq!(
            got,
            Frame::Refused(FrameError::Truncated {
                expected: 3,
                got: 1
            })
        );
        let err = block_on(codec.read_request(&P, &mut Cursor::new(vec![0u8]))).unwrap_err();
        assert_eq!(
            err.kind(),
            io::ErrorKind::UnexpectedEof,
            "a cut prefix is a plain I/O error"
        );
    }

    #[test]
    fn codec_enforces_its_cap_on_writes_and_responses() {
        let mut codec = FrameCodec::new(4);
        let mut out = Vec::new();
        let err =
            block_on(codec.write_request(&P, &mut Cursor::new(&mut out), Frame::Body(vec![0; 5])))
                .unwrap_err();
        assert!(FrameError::from_io(&err).is_some());
        let err =
            block_on(codec.write_response(&P, &mut Cursor::new(&mut out), vec![0; 5])).unwrap_err();
        assert!(FrameError::from_io(&err).is_some());
        let refused = Frame::Refused(FrameError::TooLarge { len: 5, max: 4 });
        let err =
            block_on(codec.write_request(&P, &mut Cursor::new(&mut out), refused)).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(out.is_empty(), "nothing was written");
        let mut bytes = 5u32.to_be_bytes().to_vec();
        bytes.extend_from_slice(b"12345");
        let err = block_on(codec.read_response(&P, &mut Cursor::new(bytes))).unwrap_err();
        assert!(FrameError::from_io(&err).is_some());
        assert_eq!(
            FrameCodec::default().max_frame_bytes(),
            MAX_TRANSPORT_FRAME_BYTES
        );
    }
}

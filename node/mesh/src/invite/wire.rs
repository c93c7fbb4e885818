//! The bytes on a `/porfiry/invite/1` stream: the joiner writes one
//! request, `0x01` followed by the 16 secret bytes; the inviter answers one
//! status byte and closes. Fixed sizes, so nothing is read past 17 bytes
//! from a stranger. See `docs/wire.md`.

use futures::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::code::{SECRET_BYTES, Secret};
use super::secret::Refusal;

/// The request version byte.
pub const REQUEST_VERSION: u8 = 1;

/// Request length: version byte + secret.
pub const REQUEST_BYTES: usize = 1 + SECRET_BYTES;

/// The answer: admitted, or why not.
pub type Answer = Result<(), Refusal>;

/// Why an exchange failed on the wire.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    /// The stream failed or closed early.
    #[error("invitation stream: {0}")]
    Io(#[from] std::io::Error),
    /// A request version we do not know.
    #[error("unknown invitation request version {0}")]
    Version(u8),
    /// A status byte we do not know.
    #[error("unknown invitation answer {0}")]
    Status(u8),
}

/// The status byte of an answer.
pub fn status_byte(answer: Answer) -> u8 {
    match answer {
        Ok(()) => 0,
        Err(Refusal::Unknown) => 1,
        Err(Refusal::Used) => 2,
        Err(Refusal::Expired) => 3,
        Err(Refusal::RateLimited) => 4,
        Err(Refusal::Failed) => 5,
    }
}

/// The answer a status byte stands for.
pub fn answer_of(byte: u8) -> Result<Answer, WireError> {
    Ok(match byte {
        0 => Ok(()),
        1 => Err(Refusal::Unknown),
        2 => Err(Refusal::Used),
        3 => Err(Refusal::Expired),
        4 => Err(Refusal::RateLimited),
        5 => Err(Refusal::Failed),
        other => return Err(WireError::Status(other)),
    })
}

/// Joiner: writes the request.
pub async fn write_request<S: AsyncWrite + Unpin>(
    s: &mut S,
    secret: &Secret,
) -> Result<(), WireError> {
    let mut buf = [0u8; REQUEST_BYTES];
    buf[0] = REQUEST_VERSION;
    buf[1..].copy_from_slice(secret);
    s.write_all(&buf).await?;
    s.flush().await?;
    Ok(())
}

/// Inviter: reads exactly one request.
pub async fn read_request<S: AsyncRead + Unpin>(s: &mut S) -> Result<Secret, WireError> {
    let mut buf = [0u8; REQUEST_BYTES];
    s.read_exact(&mut buf).await?;
    if buf[0] != REQUEST_VERSION {
        return Err(WireError::Version(buf[0]));
    }
    let mut secret = [0u8; SECRET_BYTES];
    secret.copy_from_slice(&buf[1..]);
    Ok(secret)
}

/// Inviter: writes the answer and closes its side.
pub async fn write_answer<S: AsyncWrite + Unpin>(
    s: &mut S,
    answer: Answer,
) -> Result<(), WireError> {
    s.write_all(&[status_byte(answer)]).await?;
    s.close().await?;
    Ok(())
}

/// Joiner: reads the answer.
pub async fn read_answer<S: AsyncRead + Unpin>(s: &mut S) -> Result<Answer, WireError> {
    let mut b = [0u8; 1];
    s.read_exact(&mut b).await?;
    answer_of(b[0])
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::io::Cursor;

    #[test]
    fn every_answer_round_trips_through_its_byte() {
        for answer in [
            Ok(()),
            Err(Refusal::Unknown),
            Err(Refusal::Used),
            Err(Refusal::Expired),
            Err(Refusal::RateLimited),
            Err(Refusal::Failed),
        ] {
            assert_eq!(answer_of(status_byte(answer)).unwrap(), answer);
        }
        assert!(matches!(answer_of(9), Err(WireError::Status(9))));
    }

    #[test]
    fn a_request_round_trips_and_a_bad_one_is_refused() {
        futures::executor::block_on(async {
            let mut out = Cursor::new(Vec::new());
            write_request(&mut out, &[5; SECRET_BYTES]).await.unwrap();
            let bytes = out.into_inner();
            assert_eq!(bytes.len(), REQUEST_BYTES);
            assert_eq!(
                read_request(&mut Cursor::new(bytes.clone())).await.unwrap(),
                [5; SECRET_BYTES]
            );
            let mut bad = bytes.clone();
            bad[0] = 2;
            assert!(matches!(
                read_request(&mut Cursor::new(bad)).await,
                Err(WireError::Version(2))
            ));
            assert!(matches!(
                read_request(&mut Cursor::new(bytes[..5].to_vec())).await,
                Err(WireError::Io(_))
            ));
        });
    }
}

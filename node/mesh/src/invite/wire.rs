//! The bytes on a `/porfiry/invite/1` stream: the joiner writes one
//! request, a version byte followed by the 16 secret bytes — `0x01` to
//! become a friend, `0x02` to link a device of the same person; the inviter
//! answers one status byte and closes. A device link goes on for two more
//! fixed-size messages (the inviter's half-signed link, the joiner's
//! countersignature) and a final status byte. Fixed sizes, so nothing is
//! read past 17 bytes from a stranger before its secret is judged. See
//! `docs/wire.md`.

use futures::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use porfiry_storage::InvitationKind;

use super::code::{SECRET_BYTES, Secret};
use super::secret::Refusal;

/// The request version byte of a friend's invitation.
pub const REQUEST_VERSION: u8 = 1;

/// The request version byte of a device link.
pub const DEVICE_REQUEST_VERSION: u8 = 2;

/// An ed25519 signature's length.
pub const SIGNATURE_BYTES: usize = 64;

/// The inviter's offer of a device link: `since_ms` (8 bytes, big-endian)
/// and its signature of the link.
pub const OFFER_BYTES: usize = 8 + SIGNATURE_BYTES;

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
        Err(Refusal::NotADeviceCode) => 6,
        Err(Refusal::DeviceCode) => 7,
        Err(Refusal::BadSignature) => 8,
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
        6 => Err(Refusal::NotADeviceCode),
        7 => Err(Refusal::DeviceCode),
        8 => Err(Refusal::BadSignature),
        other => return Err(WireError::Status(other)),
    })
}

/// Joiner: writes the request for an invitation of `kind`.
pub async fn write_request<S: AsyncWrite + Unpin>(
    s: &mut S,
    secret: &Secret,
    kind: InvitationKind,
) -> Result<(), WireError> {
    let mut buf = [0u8; REQUEST_BYTES];
    buf[0] = match kind {
        InvitationKind::Friend => REQUEST_VERSION,
        InvitationKind::Device => DEVICE_REQUEST_VERSION,
    };
    buf[1..].copy_from_slice(secret);
    s.write_all(&buf).await?;
    s.flush().await?;
    Ok(())
}

/// Inviter: reads exactly one request: the secret and what the joiner
/// wants to become.
pub async fn read_request<S: AsyncRead + Unpin>(
    s: &mut S,
) -> Result<(Secret, InvitationKind), WireError> {
    let mut buf = [0u8; REQUEST_BYTES];
    s.read_exact(&mut buf).await?;
    let kind = match buf[0] {
        REQUEST_VERSION => InvitationKind::Friend,
        DEVICE_REQUEST_VERSION => InvitationKind::Device,
        other => return Err(WireError::Version(other)),
    };
    let mut secret = [0u8; SECRET_BYTES];
    secret.copy_from_slice(&buf[1..]);
    Ok((secret, kind))
}

/// Inviter: after a device request's secret was judged good, a `0` status
/// byte and the half-signed link (its time and the inviter's signature).
pub async fn write_offer<S: AsyncWrite + Unpin>(
    s: &mut S,
    since_ms: u64,
    signature: &[u8; SIGNATURE_BYTES],
) -> Result<(), WireError> {
    let mut buf = [0u8; 1 + OFFER_BYTES];
    buf[1..9].copy_from_slice(&since_ms.to_be_bytes());
    buf[9..].copy_from_slice(signature);
    s.write_all(&buf).await?;
    s.flush().await?;
    Ok(())
}

/// Joiner: the answer to a device request: the offer (time, inviter's
/// signature), or why not.
pub async fn read_offer<S: AsyncRead + Unpin>(
    s: &mut S,
) -> Result<Result<(u64, [u8; SIGNATURE_BYTES]), Refusal>, WireError> {
    if let Err(refusal) = read_answer(s).await? {
        return Ok(Err(refusal));
    }
    let mut buf = [0u8; OFFER_BYTES];
    s.read_exact(&mut buf).await?;
    let mut since = [0u8; 8];
    since.copy_from_slice(&buf[..8]);
    let mut signature = [0u8; SIGNATURE_BYTES];
    signature.copy_from_slice(&buf[8..]);
    Ok(Ok((u64::from_be_bytes(since), signature)))
}

/// Joiner: its countersignature of the offered link.
pub async fn write_signature<S: AsyncWrite + Unpin>(
    s: &mut S,
    signature: &[u8; SIGNATURE_BYTES],
) -> Result<(), WireError> {
    s.write_all(signature).await?;
    s.flush().await?;
    Ok(())
}

/// Inviter: reads the joiner's countersignature.
pub async fn read_signature<S: AsyncRead + Unpin>(
    s: &mut S,
) -> Result<[u8; SIGNATURE_BYTES], WireError> {
    let mut signature = [0u8; SIGNATURE_BYTES];
    s.read_exact(&mut signature).await?;
    Ok(signature)
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
            Err(Refusal::NotADeviceCode),
            Err(Refusal::DeviceCode),
            Err(Refusal::BadSignature),
        ] {
            assert_eq!(answer_of(status_byte(answer)).unwrap(), answer);
        }
        assert!(matches!(answer_of(9), Err(WireError::Status(9))));
    }

    #[test]
    fn a_request_round_trips_and_a_bad_one_is_refused() {
        futures::executor::block_on(async {
            let mut out = Cursor::new(Vec::new());
            write_request(&mut out, &[5; SECRET_BYTES], InvitationKind::Friend)
                .await
                .unwrap();
            let bytes = out.into_inner();
            assert_eq!(bytes.len(), REQUEST_BYTES);
            assert_eq!(
                read_request(&mut Cursor::new(bytes.clone())).await.unwrap(),
                ([5; SECRET_BYTES], InvitationKind::Friend)
            );
            let mut device = Cursor::new(Vec::new());
            write_request(&mut device, &[5; SECRET_BYTES], InvitationKind::Device)
                .await
                .unwrap();
            let device = device.into_inner();
            assert_eq!(device[0], DEVICE_REQUEST_VERSION);
            assert_eq!(
                read_request(&mut Cursor::new(device)).await.unwrap(),
                ([5; SECRET_BYTES], InvitationKind::Device)
            );
            let mut bad = bytes.clone();
            bad[0] = 3;
            assert!(matches!(
                read_request(&mut Cursor::new(bad)).await,
                Err(WireError::Version(3))
            ));
            assert!(matches!(
                read_request(&mut Cursor::new(bytes[..5].to_vec())).await,
                Err(WireError::Io(_))
            ));
        });
    }

    #[test]
    fn a_device_offer_and_its_countersignature_round_trip() {
        futures::executor::block_on(async {
            let mut out = Cursor::new(Vec::new());
            write_offer(&mut out, 0x0102_0304_0506_0708, &[7; SIGNATURE_BYTES])
                .await
                .unwrap();
            let bytes = out.into_inner();
            assert_eq!(bytes.len(), 1 + OFFER_BYTES);
            assert_eq!(bytes[0], 0, "an offer starts with the admitted status");
            assert_eq!(
                read_offer(&mut Cursor::new(bytes.clone())).await.unwrap(),
                Ok((0x0102_0304_0506_0708, [7; SIGNATURE_BYTES]))
            );
            // A refusal is one byte and no offer.
            assert_eq!(
                read_offer(&mut Cursor::new(vec![6])).await.unwrap(),
                Err(Refusal::NotADeviceCode)
            );
            // A cut offer is an error, not a half-read time.
            assert!(
                read_offer(&mut Cursor::new(bytes[..20].to_vec()))
                    .await
                    .is_err()
            );
            let mut sig = Cursor::new(Vec::new());
            write_signature(&mut sig, &[9; SIGNATURE_BYTES])
                .await
                .unwrap();
            let sig = sig.into_inner();
            assert_eq!(
                read_signature(&mut Cursor::new(sig)).await.unwrap(),
                [9; SIGNATURE_BYTES]
            );
        });
    }
}

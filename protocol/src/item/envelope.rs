//! The envelope: the CBOR map `{"payload": bytes, "signature": bytes(64)}`,
//! written in exactly one way so that its SHA-256 is the item's id.
//!
//! Decoding refuses anything that would not re-encode to the same bytes
//! (other key order, extra keys, longer-than-needed length headers), so
//! nobody can re-wrap an item under a second id.

use ciborium::Value;
use serde::{Serialize, Serializer};

use crate::error::ItemError;
use crate::item::cbor;
use crate::limits::{MAX_ENVELOPE_BYTES, SIGNATURE_LEN};

/// Bytes after the payload in a canonical envelope: the `"signature"` key
/// (1 + 9 bytes), the byte-string header (2) and the signature (64).
pub(crate) const TAIL_LEN: usize = 1 + 9 + 2 + SIGNATURE_LEN;

/// Envelope bytes split into their two fields.
pub(crate) struct EnvelopeParts {
    /// Where the payload bytes lie inside the envelope.
    pub payload: std::ops::Range<usize>,
    /// The signature.
    pub signature: [u8; SIGNATURE_LEN],
}

/// Encodes an envelope.
pub fn encode_envelope(
    payload: &[u8],
    signature: &[u8; SIGNATURE_LEN],
) -> Result<Vec<u8>, ItemError> {
    cbor::write(
        "envelope",
        &EnvelopeOut {
            payload: Bytes(payload),
            signature: Bytes(signature),
        },
    )
}

/// Splits envelope bytes; checks size (before decoding), shape and canonical form.
pub(crate) fn decode_envelope(bytes: &[u8]) -> Result<EnvelopeParts, ItemError> {
    if bytes.len() > MAX_ENVELOPE_BYTES {
        return Err(ItemError::Oversized {
            len: bytes.len(),
            max: MAX_ENVELOPE_BYTES,
        });
    }
    let value: Value = cbor::read_exact("envelope", bytes)?;
    let malformed = |detail: &str| ItemError::Malformed {
        what: "envelope",
        detail: detail.into(),
    };
    let Value::Map(entries) = value else {
        return Err(malformed("not a map"));
    };
    let [(k1, Value::Bytes(payload)), (k2, Value::Bytes(signature))] = entries.as_slice() else {
        return Err(malformed(
            "expected exactly {payload: bytes, signature: bytes}",
        ));
    };
    if k1.as_text() != Some("payload") || k2.as_text() != Some("signature") {
        return Err(malformed("expected keys \"payload\" then \"signature\""));
    }
    let signature: [u8; SIGNATURE_LEN] =
        signature
            .as_slice()
            .try_into()
            .map_err(|_| ItemError::BadSignatureLength {
                len: signature.len(),
            })?;
    if encode_envelope(payload, &signature)? != bytes {
        return Err(ItemError::NonCanonicalEnvelope);
    }
    let end = bytes.len() - TAIL_LEN;
    Ok(EnvelopeParts {
        payload: end - payload.len()..end,
        signature,
    })
}

#[derive(Serialize)]
struct EnvelopeOut<'a> {
    payload: Bytes<'a>,
    signature: Bytes<'a>,
}

/// A byte slice written as a CBOR byte string (not an array of integers).
struct Bytes<'a>(&'a [u8]);

impl Serialize for Bytes<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_locates_the_payload() {
        for len in [0usize, 1, 23, 24, 255, 256, 65_535 - 200] {
            let payload = vec![0xabu8; len];
            let env = encode_envelope(&payload, &[7; 64]).unwrap();
            let parts = decode_envelope(&env).unwrap();
            assert_eq!(&env[parts.payload.clone()], payload.as_slice(), "len {len}");
            assert_eq!(parts.signature, [7; 64]);
        }
    }

    #[test]
    fn refuses_non_canonical_oversized_and_misshapen_envelopes() {
        let env = encode_envelope(b"hi", &[1; 64]).unwrap();
        // Same content, payload length written with a needless extra byte.
        let mut long_header = vec![0xa2, 0x67];
        long_header.extend_from_slice(b"payload");
        long_header.extend_from_slice(&[0x58, 0x02]);
        long_header.extend_from_slice(b"hi");
        long_header.extend_from_slice(&env[2 + 7 + 3..]);
        assert!(decode_envelope(&long_header).is_err());
        assert_eq!(
            decode_envelope(&long_header).err(),
            Some(ItemError::NonCanonicalEnvelope)
        );

        let big = vec![0u8; MAX_ENVELOPE_BYTES + 1];
        assert_eq!(
            decode_envelope(&big).err(),
            Some(ItemError::Oversized {
                len: MAX_ENVELOPE_BYTES + 1,
                max: MAX_ENVELOPE_BYTES
            })
        );

        let short_sig = cbor::write(
            "t",
            &EnvelopeOut {
                payload: Bytes(b"hi"),
                signature: Bytes(&[1; 63]),
            },
        )
        .unwrap();
        assert_eq!(
            decode_envelope(&short_sig).err(),
            Some(ItemError::BadSignatureLength { len: 63 })
        );

        let swapped = cbor::write(
            "t",
            &Value::Map(vec![
                ("signature".into(), Value::Bytes(vec![1; 64])),
                ("payload".into(), Value::Bytes(b"hi".to_vec())),
            ]),
        )
        .unwrap();
        assert!(matches!(
            decode_envelope(&swapped),
            Err(ItemError::Malformed {
                what: "envelope",
                ..
            })
        ));

        let mut trailing = env.clone();
        trailing.push(0);
        assert_eq!(
            decode_envelope(&trailing).err(),
            Some(ItemError::TrailingBytes {
                what: "envelope",
                extra: 1
            })
        );
    }
}

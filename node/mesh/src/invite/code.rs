//! The one-line invitation code `porfiry invite` prints and `porfiry join`
//! reads: `porfiry:` followed by the base58 (Bitcoin alphabet) of a small
//! versioned binary record — the inviter's peer id, where to dial it and a
//! one-time secret. Layout (version 1), every length a single byte:
//!
//! ```text
//! 0x01 | peer-id length | peer-id bytes | 16 secret bytes
//!      | address count  | (address length | multiaddr bytes)*
//! ```
//!
//! Base58 has no characters a terminal, a chat app or a URL mangles, and
//! the whole code stays one copy-pasteable word. See `docs/wire.md`.

use crate::net::{Multiaddr, PeerId};

/// What every code starts with.
pub const CODE_PREFIX: &str = "porfiry:";

/// The record version this build writes and reads.
pub const CODE_VERSION: u8 = 1;

/// Secret length: 128 random bits cannot be guessed within any rate limit.
pub const SECRET_BYTES: usize = 16;

/// At most this many addresses in a code: a node has a handful of
/// interfaces, and the code must stay short enough to paste and to fit a
/// QR code a phone camera reads.
pub const MAX_CODE_ADDRESSES: usize = 8;

/// Longest code accepted, in characters: 8 addresses of ~40 bytes plus the
/// header is ~400 bytes, ~550 base58 characters; more is not a code of ours
/// (and base58 decoding is quadratic, so garbage is cut off before it).
pub const MAX_CODE_CHARS: usize = 1_024;

/// The invitation's secret.
pub type Secret = [u8; SECRET_BYTES];

/// A decoded invitation code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InviteCode {
    /// The inviter.
    pub peer: PeerId,
    /// Where to dial it.
    pub addresses: Vec<Multiaddr>,
    /// The one-time secret to present.
    pub secret: Secret,
}

/// Why a code could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CodeError {
    /// It does not start with `porfiry:`.
    #[error("not an invitation code: it must start with {CODE_PREFIX:?}")]
    MissingPrefix,
    /// Longer than any code of ours.
    #[error("invitation code too long ({len} characters; at most {MAX_CODE_CHARS})")]
    TooLong {
        /// Its length.
        len: usize,
    },
    /// Not base58 after the prefix.
    #[error("invitation code is damaged (not base58): {0}")]
    NotBase58(String),
    /// A version this build does not know.
    #[error(
        "invitation code version {0} is not supported (this porfiry reads version {CODE_VERSION}); update porfiry"
    )]
    UnknownVersion(u8),
    /// Ends in the middle of a field.
    #[error("invitation code is cut short (in its {0})")]
    Truncated(&'static str),
    /// Bytes after the last field.
    #[error("invitation code has {0} unexpected bytes at the end")]
    Trailing(usize),
    /// The peer id is not one.
    #[error("invitation code holds a bad peer id: {0}")]
    BadPeerId(String),
    /// An address is not a multiaddr.
    #[error("invitation code holds a bad address (number {index}): {reason}")]
    BadAddress {
        /// Which address (from 1).
        index: usize,
        /// Why.
        reason: String,
    },
    /// No address, or too many.
    #[error("invitation code must hold 1 to {MAX_CODE_ADDRESSES} addresses, not {0}")]
    AddressCount(usize),
    /// An address too long for the one-byte length.
    #[error("address {0} is longer than 255 bytes")]
    AddressTooLong(String),
}

impl InviteCode {
    /// The code as one line, `porfiry:…`. Fails only for an address count
    /// outside 1..=[`MAX_CODE_ADDRESSES`] or an address over 255 bytes.
    pub fn encode(&self) -> Result<String, CodeError> {
        if self.addresses.is_empty() || self.addresses.len() > MAX_CODE_ADDRESSES {
            return Err(CodeError::AddressCount(self.addresses.len()));
        }
        let peer = self.peer.to_bytes();
        let mut bytes = vec![CODE_VERSION];
        push_short(&mut bytes, &peer).map_err(|()| CodeError::BadPeerId(self.peer.to_string()))?;
        bytes.extend_from_slice(&self.secret);
        bytes.push(
            u8::try_from(self.addresses.len())
                .map_err(|_| CodeError::AddressCount(self.addresses.len()))?,
        );
        for a in &self.addresses {
            push_short(&mut bytes, &a.to_vec())
                .map_err(|()| CodeError::AddressTooLong(a.to_string()))?;
        }
        Ok(format!(
            "{CODE_PREFIX}{}",
            bs58::encode(bytes).into_string()
        ))
    }

    /// Reads a code (surrounding whitespace ignored).
    pub fn decode(code: &str) -> Result<Self, CodeError> {
        let code = code.trim();
        if code.len() > MAX_CODE_CHARS {
            return Err(CodeError::TooLong { len: code.len() });
        }
        let body = code
            .strip_prefix(CODE_PREFIX)
            .ok_or(CodeError::MissingPrefix)?;
        let bytes = bs58::decode(body)
            .into_vec()
            .map_err(|e| CodeError::NotBase58(e.to_string()))?;
        let mut r = Reader { bytes: &bytes };
        let version = r.take(1, "version")?[0];
        if version != CODE_VERSION {
            return Err(CodeError::UnknownVersion(version));
        }
        let peer = r.short("peer id")?;
        let peer = PeerId::from_bytes(peer).map_err(|e| CodeError::BadPeerId(e.to_string()))?;
        let secret: Secret = r
            .take(SECRET_BYTES, "secret")?
            .try_into()
            .map_err(|_| CodeError::Truncated("secret"))?;
        let count = usize::from(r.take(1, "address count")?[0]);
        if count == 0 || count > MAX_CODE_ADDRESSES {
            return Err(CodeError::AddressCount(count));
        }
        let mut addresses = Vec::with_capacity(count);
        for index in 1..=count {
            let raw = r.short("addresses")?;
            let a = Multiaddr::try_from(raw.to_vec()).map_err(|e| CodeError::BadAddress {
                index,
                reason: e.to_string(),
            })?;
            addresses.push(a);
        }
        if !r.bytes.is_empty() {
            return Err(CodeError::Trailing(r.bytes.len()));
        }
        Ok(Self {
            peer,
            addresses,
            secret,
        })
    }
}

/// Appends a one-byte length and `data`; `Err` if it is over 255 bytes.
fn push_short(out: &mut Vec<u8>, data: &[u8]) -> Result<(), ()> {
    let len = u8::try_from(data.len()).map_err(|_| ())?;
    out.push(len);
    out.extend_from_slice(data);
    Ok(())
}

struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], CodeError> {
        if self.bytes.len() < n {
            return Err(CodeError::Truncated(what));
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn short(&mut self, what: &'static str) -> Result<&'a [u8], CodeError> {
        let len = usize::from(self.take(1, what)?[0]);
        self.take(len, what)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use porfiry_protocol::NodeKey;

    fn code() -> InviteCode {
        InviteCode {
            peer: NodeKey::from_seed([1; 32]).peer_id(),
            addresses: vec![
                "/ip4/127.0.0.1/tcp/4001".parse().unwrap(),
                "/ip6/::1/tcp/4001".parse().unwrap(),
            ],
            secret: [7; SECRET_BYTES],
        }
    }

    #[test]
    fn a_code_round_trips_as_one_line() {
        let c = code();
        let text = c.encode().unwrap();
        assert!(text.starts_with(CODE_PREFIX));
        assert!(!text.contains(char::is_whitespace));
        assert!(text.len() < 200, "{} chars", text.len());
        assert_eq!(InviteCode::decode(&text).unwrap(), c);
        assert_eq!(InviteCode::decode(&format!("  {text}\n")).unwrap(), c);
    }

    #[test]
    fn garbage_is_refused_with_a_clear_message() {
        let text = code().encode().unwrap();
        let body = text.strip_prefix(CODE_PREFIX).unwrap();
        assert_eq!(InviteCode::decode(body), Err(CodeError::MissingPrefix));
        assert!(matches!(
            InviteCode::decode("porfiry:0OIl"),
            Err(CodeError::NotBase58(_))
        ));
        let bytes = bs58::decode(body).into_vec().unwrap();
        let cut = format!(
            "{CODE_PREFIX}{}",
            bs58::encode(&bytes[..bytes.len() - 3]).into_string()
        );
        assert_eq!(
            InviteCode::decode(&cut),
            Err(CodeError::Truncated("addresses"))
        );
        let long = format!("{CODE_PREFIX}{}", "1".repeat(MAX_CODE_CHARS));
        assert!(matches!(
            InviteCode::decode(&long),
            Err(CodeError::TooLong { .. })
        ));
        let mut bytes = bs58::decode(body).into_vec().unwrap();
        bytes[0] = 9;
        let v9 = format!("{CODE_PREFIX}{}", bs58::encode(&bytes).into_string());
        let err = InviteCode::decode(&v9).unwrap_err();
        assert_eq!(err, CodeError::UnknownVersion(9));
        assert!(err.to_string().contains("update porfiry"));
        bytes[0] = CODE_VERSION;
        bytes.push(0);
        let trailing = format!("{CODE_PREFIX}{}", bs58::encode(&bytes).into_string());
        assert_eq!(InviteCode::decode(&trailing), Err(CodeError::Trailing(1)));
        let err = InviteCode::decode("porfiry:").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invitation code is cut short (in its version)"
        );
    }

    #[test]
    fn address_count_is_bounded_both_ways() {
        let mut c = code();
        c.addresses.clear();
        assert_eq!(c.encode(), Err(CodeError::AddressCount(0)));
        c.addresses = vec!["/ip4/127.0.0.1/tcp/1".parse().unwrap(); MAX_CODE_ADDRESSES + 1];
        assert_eq!(
            c.encode(),
            Err(CodeError::AddressCount(MAX_CODE_ADDRESSES + 1))
        );
        c.addresses.pop();
        let text = c.encode().unwrap();
        assert_eq!(
            InviteCode::decode(&text).unwrap().addresses.len(),
            MAX_CODE_ADDRESSES
        );
    }
}

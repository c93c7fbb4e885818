//! Node identity: one ed25519 key that signs the node's items and is its
//! libp2p identity, so the node id users see (`12D3KooW…`) is its PeerId.
//! Also the key file (create-new, mode 0600) and the public `AuthorKey`.

use std::fmt;
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use ed25519_dalek::{SigningKey, VerifyingKey};
use libp2p_identity::PeerId;
use rand_core::CryptoRng;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::ItemError;

/// Length of the key file: the raw 32-byte ed25519 secret seed, nothing else.
pub const KEY_FILE_LEN: usize = 32;

/// Why a key file could not be saved or loaded.
#[derive(Debug, thiserror::Error)]
pub enum IdentityError {
    /// `save` found a file already there and left it alone.
    #[error("key file {0} already exists; refusing to overwrite it")]
    AlreadyExists(PathBuf),
    /// `load` found no file.
    #[error("key file {0} does not exist")]
    NotFound(PathBuf),
    /// The file is not exactly 32 bytes.
    #[error("key file {path} is {len} bytes; a key file holds exactly {KEY_FILE_LEN}")]
    BadLength {
        /// The file.
        path: PathBuf,
        /// Its length.
        len: u64,
    },
    /// Any other IO failure.
    #[error("key file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        source: io::Error,
    },
}

/// The node's secret signing key. `Debug` shows only the peer id.
#[derive(Clone)]
pub struct NodeKey {
    signing: SigningKey,
}

impl NodeKey {
    /// A fresh key from the caller's RNG (the protocol crate has no ambient RNG).
    pub fn generate<R: CryptoRng + ?Sized>(rng: &mut R) -> NodeKey {
        NodeKey {
            signing: SigningKey::generate(rng),
        }
    }

    /// The key with this 32-byte secret seed (RFC 8032 private key).
    pub fn from_seed(seed: [u8; 32]) -> NodeKey {
        NodeKey {
            signing: SigningKey::from_bytes(&seed),
        }
    }

    /// The 32-byte secret seed. Keep it secret.
    pub fn seed(&self) -> [u8; 32] {
        self.signing.to_bytes()
    }

    /// Writes the seed to a NEW file at `path`, mode 0600 on unix. Refuses
    /// (touching nothing) when a file is already there.
    pub fn save(&self, path: &Path) -> Result<(), IdentityError> {
        let mut opts = OpenOptions::new();
        opts.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.mode(0o600);
        }
        let mut file = opts.open(path).map_err(|e| match e.kind() {
            io::ErrorKind::AlreadyExists => IdentityError::AlreadyExists(path.to_owned()),
            _ => IdentityError::Io {
                path: path.to_owned(),
                source: e,
            },
        })?;
        let written = file
            .write_all(&self.signing.to_bytes())
            .and_then(|()| file.sync_all());
        if let Err(e) = written {
            // The file is ours and incomplete: remove it so a retry can succeed.
            drop(file);
            let _ = fs::remove_file(path);
            return Err(IdentityError::Io {
                path: path.to_owned(),
                source: e,
            });
        }
        Ok(())
    }

    /// Reads a key saved by [`NodeKey::save`]. Warns (tracing) when the file
    /// is readable by group or others, but still loads it.
    pub fn load(path: &Path) -> Result<NodeKey, IdentityError> {
        let io_err = |e: io::Error| match e.kind() {
            io::ErrorKind::NotFound => IdentityError::NotFound(path.to_owned()),
            _ => IdentityError::Io {
                path: path.to_owned(),
                source: e,
            },
        };
        let meta = fs::metadata(path).map_err(io_err)?;
        if meta.len() != KEY_FILE_LEN as u64 {
            return Err(IdentityError::BadLength {
                path: path.to_owned(),
                len: meta.len(),
            });
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = meta.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                tracing::warn!(path = %path.display(), mode = format!("{mode:o}"), "key file is readable by others; chmod 600 it");
            }
        }
        let bytes = fs::read(path).map_err(io_err)?;
        let seed: [u8; 32] = bytes
            .as_slice()
            .try_into()
            .map_err(|_| IdentityError::BadLength {
                path: path.to_owned(),
                len: bytes.len() as u64,
            })?;
        Ok(NodeKey::from_seed(seed))
    }

    /// The public half, as written into items.
    pub fn author(&self) -> AuthorKey {
        AuthorKey(self.signing.verifying_key().to_bytes())
    }

    /// The libp2p PeerId of this key: the node id users see.
    pub fn peer_id(&self) -> PeerId {
        self.author().peer_id()
    }

    /// The same key as a libp2p keypair, for the swarm.
    pub fn to_libp2p_keypair(&self) -> libp2p_identity::Keypair {
        let mut seed = self.signing.to_bytes();
        // A 32-byte seed is always a valid ed25519 secret key.
        libp2p_identity::Keypair::ed25519_from_bytes(&mut seed)
            .expect("32-byte seed is a valid ed25519 secret key")
    }

    pub(crate) fn signing_key(&self) -> &SigningKey {
        &self.signing
    }
}

impl fmt::Debug for NodeKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "NodeKey({})", self.peer_id())
    }
}

/// How every ed25519 PeerId begins: identity multihash (code 0x00, 36 bytes)
/// of the protobuf `PublicKey { Type = Ed25519 (1), Data = 32 bytes }`.
const PEER_ID_PREFIX: [u8; 6] = [0x00, 0x24, 0x08, 0x01, 0x12, 0x20];

/// An author's 32-byte ed25519 public key, as carried in every payload.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AuthorKey(pub [u8; 32]);

impl AuthorKey {
    /// The raw 32 bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The key as a verifying key; refuses bytes that are not a curve point
    /// and weak (small-order) points.
    pub fn verifying_key(&self) -> Result<VerifyingKey, ItemError> {
        let key = VerifyingKey::from_bytes(&self.0).map_err(|_| ItemError::BadAuthorKey)?;
        if key.is_weak() {
            return Err(ItemError::WeakKey);
        }
        Ok(key)
    }

    /// The libp2p PeerId of this key. A PeerId of an ed25519 key is the
    /// identity multihash of its protobuf encoding, so this needs no curve math.
    pub fn peer_id(&self) -> PeerId {
        let mut mh = [0u8; 38];
        mh[..PEER_ID_PREFIX.len()].copy_from_slice(&PEER_ID_PREFIX);
        mh[PEER_ID_PREFIX.len()..].copy_from_slice(&self.0);
        PeerId::from_bytes(&mh).expect("an identity multihash of 36 bytes is a valid PeerId")
    }

    /// The ed25519 key inside a PeerId, or `None` when the PeerId is not
    /// an inlined ed25519 key (RSA and other keys are hashed, not inlined).
    pub fn from_peer_id(peer: &PeerId) -> Option<AuthorKey> {
        let bytes = peer.to_bytes();
        let key = bytes.strip_prefix(&PEER_ID_PREFIX)?;
        key.try_into().ok().map(AuthorKey)
    }

    /// The PeerId as text (`12D3KooW…`): the author's node id.
    pub fn peer_id_string(&self) -> String {
        self.peer_id().to_base58()
    }
}

impl fmt::Debug for AuthorKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AuthorKey({})", hex::encode(self.0))
    }
}

impl fmt::Display for AuthorKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&hex::encode(self.0))
    }
}

/// CBOR: a 32-byte byte string; JSON: 64 hex digits.
impl Serialize for AuthorKey {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        crate::fixed_bytes::serialize(&self.0, serializer)
    }
}

impl<'de> Deserialize<'de> for AuthorKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        crate::fixed_bytes::deserialize(deserializer).map(AuthorKey)
    }
}

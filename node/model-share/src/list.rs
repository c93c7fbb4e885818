//! The signed list a sharing node answers with: each shared file's name,
//! file name, size and SHA-256, signed by the node's key so the puller
//! knows the hash it will check came from its friend (and a list passed on
//! by someone else still proves whose it is).
//!
//! The signature covers a domain prefix and the list's JSON text exactly as
//! sent ([`SignedList::list`]), so no re-encoding can change what was
//! signed, and the node key's signatures over items can never be passed off
//! as a list (or the other way round).

use libp2p::PeerId;
use libp2p::identity::{Keypair, PublicKey};
use serde::{Deserialize, Serialize};

use super::MAX_LISTED_MODELS;

/// What every signed list's bytes start with before they are signed.
const SIGNING_DOMAIN: &[u8] = b"porfiry model list v1\n";

/// One shared file as listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListedModel {
    /// Its registry name on the sharing node (what `pull NAME` names).
    pub name: String,
    /// Its file name (no folders), kept under that name by the puller.
    pub file: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// Its SHA-256, 64 lowercase hex digits.
    pub sha256: String,
    /// `model`, or `taught` for a model this node taught its tools.
    pub kind: String,
}

/// What the sharing node says it shares, and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelList {
    /// The sharing node's peer id.
    pub node: String,
    /// When the list was made (Unix ms).
    pub at_ms: u64,
    /// The shared files, by name.
    pub models: Vec<ListedModel>,
}

/// A [`ModelList`] as JSON text with its signature.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignedList {
    /// The list's JSON, exactly as signed.
    pub list: String,
    /// The ed25519 signature over the domain prefix and `list`, hex.
    pub signature: String,
}

/// A list whose signature or contents do not hold.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ListError {
    /// The signature is not the friend's.
    #[error("the model list is not signed by {0}")]
    BadSignature(String),
    /// The list names another node.
    #[error("the model list names node {named}, not {asked}")]
    WrongNode {
        /// Who it says it is.
        named: String,
        /// Whom we asked.
        asked: String,
    },
    /// The text is no list, or holds too many entries.
    #[error("the model list cannot be read: {0}")]
    Malformed(String),
    /// The key could not sign.
    #[error("cannot sign the model list: {0}")]
    Sign(String),
}

fn signed_bytes(list: &str) -> Vec<u8> {
    let mut bytes = SIGNING_DOMAIN.to_vec();
    bytes.extend_from_slice(list.as_bytes());
    bytes
}

impl SignedList {
    /// Signs `list` with `key`.
    pub fn sign(key: &Keypair, list: &ModelList) -> Result<SignedList, ListError> {
        let text = serde_json::to_string(list).map_err(|e| ListError::Sign(e.to_string()))?;
        let signature = key
            .sign(&signed_bytes(&text))
            .map_err(|e| ListError::Sign(e.to_string()))?;
        Ok(SignedList {
            list: text,
            signature: hex::encode(signature),
        })
    }

    /// The list, when `friend` signed it and it names `friend`.
    pub fn verify(&self, friend: &PeerId) -> Result<ModelList, ListError> {
        let bad = || ListError::BadSignature(friend.to_string());
        let key = public_key(friend).ok_or_else(bad)?;
        let signature = hex::decode(&self.signature).map_err(|_| bad())?;
        if !key.verify(&signed_bytes(&self.list), &signature) {
            return Err(bad());
        }
        let list: ModelList =
            serde_json::from_str(&self.list).map_err(|e| ListError::Malformed(e.to_string()))?;
        if list.node != friend.to_string() {
            return Err(ListError::WrongNode {
                named: list.node,
                asked: friend.to_string(),
            });
        }
        if list.models.len() > MAX_LISTED_MODELS {
            return Err(ListError::Malformed(format!(
                "{} entries, above the {MAX_LISTED_MODELS} a list may hold",
                list.models.len()
            )));
        }
        Ok(list)
    }
}

/// The public key inside an ed25519 peer id (the identity multihash holds
/// it); `None` for a peer id that only hashes its key.
fn public_key(peer: &PeerId) -> Option<PublicKey> {
    let hash = AsRef::<libp2p::multihash::Multihash<64>>::as_ref(peer);
    // Multihash code 0 is "identity": the digest is the key itself.
    (hash.code() == 0)
        .then(|| PublicKey::try_decode_protobuf(hash.digest()).ok())
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(node: &PeerId) -> ModelList {
        ModelList {
            node: node.to_string(),
            at_ms: 1,
            models: vec![ListedModel {
                name: "smol".into(),
                file: "smol.gguf".into(),
                bytes: 3,
                sha256: "00".repeat(32),
                kind: "model".into(),
            }],
        }
    }

    #[test]
    fn a_list_verifies_against_its_signer_and_nobody_else() {
        let key = Keypair::generate_ed25519();
        let other = Keypair::generate_ed25519();
        let me = key.public().to_peer_id();
        let signed = SignedList::sign(&key, &list(&me)).unwrap();
        assert_eq!(signed.verify(&me).unwrap(), list(&me));
        let them = other.public().to_peer_id();
        assert_eq!(
            signed.verify(&them).unwrap_err(),
            ListError::BadSignature(them.to_string())
        );
        // A changed byte breaks the signature.
        let mut forged = signed.clone();
        forged.list = forged.list.replace("\"bytes\":3", "\"bytes\":4");
        assert!(matches!(
            forged.verify(&me),
            Err(ListError::BadSignature(_))
        ));
        // A list naming another node, signed by this one, is refused.
        let wrong = SignedList::sign(&key, &list(&them)).unwrap();
        assert!(matches!(
            wrong.verify(&me),
            Err(ListError::WrongNode { .. })
        ));
    }
}

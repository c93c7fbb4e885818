//! The signed payload: header fields plus body, and its CBOR codec.
//!
//! Layout (a CBOR map with text keys, in this order): `version`, `kind`
//! (numeric code), `author` (32-byte byte string), `created_ms`, `audience`
//! (text), `max_hops`, `expires_ms` (absent when none), `replaces` (absent
//! when none, else a 32-byte id), `body` (the kind's map). Decoding checks
//! the version first, then the kind code, then that the body fits the kind.

use ciborium::Value;
use serde::{Deserialize, Serialize};

use crate::error::ItemError;
use crate::identity::AuthorKey;
use crate::item::audience::Audience;
use crate::item::body::Body;
use crate::item::cbor;
use crate::item::id::ItemId;
use crate::item::kinds::ItemKind;
use crate::limits::{MAX_HOPS, PROTOCOL_VERSION};

/// What the author fills in to make an item; `sign` adds version and author.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PayloadDraft {
    /// Creation time, Unix milliseconds (the caller's clock).
    pub created_ms: u64,
    /// Who may receive it.
    pub audience: Audience,
    /// How far it may travel: 1..=MAX_HOPS.
    pub max_hops: u8,
    /// When it stops being sent and accepted, Unix ms; after `created_ms`.
    pub expires_ms: Option<u64>,
    /// An earlier item of the same author this one supersedes.
    pub replaces: Option<ItemId>,
    /// The content; its variant is the item's kind.
    pub body: Body,
}

/// A decoded payload: the header and the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Payload {
    /// Payload layout version (always PROTOCOL_VERSION once decoded).
    pub version: u64,
    /// The author's public key.
    pub author: AuthorKey,
    /// Creation time, Unix ms.
    pub created_ms: u64,
    /// Who may receive it.
    pub audience: Audience,
    /// How far it may travel.
    pub max_hops: u8,
    /// Expiry, Unix ms.
    pub expires_ms: Option<u64>,
    /// The item this one supersedes.
    pub replaces: Option<ItemId>,
    /// The content.
    pub body: Body,
}

impl Payload {
    /// The item kind (from the body).
    pub fn kind(&self) -> ItemKind {
        self.body.kind()
    }

    /// The payload `key` would sign for `draft`.
    pub fn from_draft(author: AuthorKey, draft: &PayloadDraft) -> Payload {
        Payload {
            version: PROTOCOL_VERSION,
            author,
            created_ms: draft.created_ms,
            audience: draft.audience.clone(),
            max_hops: draft.max_hops,
            expires_ms: draft.expires_ms,
            replaces: draft.replaces,
            body: draft.body.clone(),
        }
    }

    /// Checks the header and body limits (not the signature or expiry).
    pub fn validate(&self) -> Result<(), ItemError> {
        if self.version != PROTOCOL_VERSION {
            return Err(ItemError::UnknownVersion(self.version));
        }
        if self.max_hops == 0 || self.max_hops > MAX_HOPS {
            return Err(ItemError::HopsOutOfRange {
                hops: self.max_hops,
            });
        }
        // Parsing checked a received audience already; this catches a
        // `Group`/`Peer` built in code before it is signed.
        self.audience.check().map_err(|e| ItemError::Malformed {
            what: "audience",
            detail: e.to_string(),
        })?;
        // A club change travels to the club it changes, and only there.
        if let Body::ClubChange(c) = &self.body
            && self.audience != Audience::Club(c.club.clone())
        {
            return Err(ItemError::BadClub(format!(
                "a change to {} must have audience club:{}",
                c.club, c.club
            )));
        }
        // A device statement travels among the person's devices only, and
        // is published by a node that signed it.
        if let Body::DeviceLink(d) = &self.body {
            if self.audience != Audience::Devices {
                return Err(ItemError::BadDeviceLink(
                    "a device_link item must have audience devices".into(),
                ));
            }
            if !d.signed_by(&self.author.peer_id_string()) {
                return Err(ItemError::BadDeviceLink(
                    "its author did not sign the statement".into(),
                ));
            }
        }
        // A person's memory is for the person's devices and nobody else.
        if matches!(self.body, Body::MindRecord(_)) && self.audience != Audience::Devices {
            return Err(ItemError::MindBeyondDevices);
        }
        // Each version counts its own writer (`next_vv` bumps it).
        if let Body::MindRecord(r) = &self.body {
            let author = self.author.peer_id_string();
            if r.vv.get(&author) == 0 {
                return Err(ItemError::MindWithoutAuthor(author));
            }
        }
        // Addresses are for the author's friends and never travel further.
        if matches!(self.body, Body::ReachableAt(_))
            && (self.audience != Audience::Friends || self.max_hops != 1)
        {
            return Err(ItemError::AddressesBeyondFriends);
        }
        if let Some(expires_ms) = self.expires_ms
            && expires_ms <= self.created_ms
        {
            return Err(ItemError::ExpiresBeforeCreated {
                created_ms: self.created_ms,
                expires_ms,
            });
        }
        self.body.validate()
    }

    /// The CBOR bytes to sign.
    pub fn encode(&self) -> Result<Vec<u8>, ItemError> {
        cbor::write(
            "payload",
            &PayloadOut {
                version: self.version,
                kind: self.kind().code(),
                author: &self.author,
                created_ms: self.created_ms,
                audience: &self.audience,
                max_hops: self.max_hops,
                expires_ms: self.expires_ms,
                replaces: self.replaces.as_ref(),
                body: &self.body,
            },
        )
    }

    /// Decodes and validates payload bytes (signature not checked here).
    pub fn decode(bytes: &[u8]) -> Result<Payload, ItemError> {
        let value: Value = cbor::read_exact("payload", bytes)?;
        let Value::Map(entries) = &value else {
            return Err(ItemError::Malformed {
                what: "payload",
                detail: "not a map".into(),
            });
        };
        let field = |name: &str| {
            entries
                .iter()
                .find(|(k, _)| k.as_text() == Some(name))
                .map(|(_, v)| v)
        };
        let version = field("version")
            .and_then(Value::as_integer)
            .and_then(|i| u64::try_from(i).ok())
            .ok_or(ItemError::MissingVersion)?;
        if version != PROTOCOL_VERSION {
            return Err(ItemError::UnknownVersion(version));
        }
        let code = field("kind")
            .and_then(Value::as_integer)
            .and_then(|i| u64::try_from(i).ok())
            .ok_or_else(|| ItemError::Malformed {
                what: "payload",
                detail: "no unsigned integer `kind` field".into(),
            })?;
        let kind = ItemKind::from_code(code)?;
        let raw: PayloadIn = value.deserialized().map_err(|e| ItemError::Malformed {
            what: "payload",
            detail: e.to_string(),
        })?;
        let payload = Payload {
            version: raw.version,
            author: raw.author,
            created_ms: raw.created_ms,
            audience: raw.audience,
            max_hops: raw.max_hops,
            expires_ms: raw.expires_ms,
            replaces: raw.replaces,
            body: Body::from_value(kind, raw.body)?,
        };
        payload.validate()?;
        Ok(payload)
    }
}

#[derive(Serialize)]
struct PayloadOut<'a> {
    version: u64,
    kind: u64,
    author: &'a AuthorKey,
    created_ms: u64,
    audience: &'a Audience,
    max_hops: u8,
    #[serde(skip_serializing_if = "Option::is_none")]
    expires_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    replaces: Option<&'a ItemId>,
    body: &'a Body,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PayloadIn {
    version: u64,
    #[allow(dead_code)] // read above, before the strict pass
    kind: u64,
    author: AuthorKey,
    created_ms: u64,
    audience: Audience,
    max_hops: u8,
    #[serde(default)]
    expires_ms: Option<u64>,
    #[serde(default)]
    replaces: Option<ItemId>,
    body: Value,
}

//! The body of each item kind: one struct per kind, holding only what the
//! author shares. Local-only fields (a note's tags, llm_id, hidden, read)
//! and secrets (an LLM's API key) have no field here, so they can never
//! enter a payload.

use serde::{Deserialize, Serialize, Serializer};

use crate::club::ClubChange;
use crate::devices::DeviceStatement;
use crate::error::ItemError;
use crate::item::id::ItemId;
use crate::item::kinds::ItemKind;
use crate::mind::MindRecord;

/// A message in the shared notebook (HMP `notes`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Note {
    /// The message, 1..=MAX_TEXT_BYTES bytes.
    pub text: String,
    /// Optional topic line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topic: Option<String>,
    /// Who is addressed (peer ids or names), at most MAX_LIST_ITEMS.
    pub mentions: Vec<String>,
    /// Hashtags without `#`, at most MAX_LIST_ITEMS.
    pub hashtags: Vec<String>,
    /// 0 = ordinary; higher = more urgent.
    pub priority: u8,
    /// Who wrote it: "user", "llm", "system", or a free label.
    pub source: String,
    /// The item this answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_to: Option<ItemId>,
}

impl Note {
    /// A plain note the user wrote: `text` and nothing else (no topic,
    /// mentions or hashtags, ordinary priority, not a reply).
    pub fn by_user(text: impl Into<String>) -> Note {
        Note {
            text: text.into(),
            topic: None,
            mentions: Vec::new(),
            hashtags: Vec::new(),
            priority: 0,
            source: "user".into(),
            reply_to: None,
        }
    }
}

/// A way out of a stagnation (HMP `stagnation_strategies`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StagnationStrategy {
    /// Short name.
    pub name: String,
    /// Family of strategy (e.g. "mesh", "flashback", "random-walk").
    pub class: String,
    /// What it does and when it helps.
    pub description: String,
    /// The steps, in order.
    pub steps: Vec<String>,
    /// Relative cost, 0 = cheapest; cheap strategies are tried first.
    pub cost: u8,
    /// What the core does to apply it (`ask_friends`, `flashback`, …: the
    /// mechanism names of seed 003); absent on items written before it
    /// existed and on strategies that name none. Without it a friend's
    /// core cannot apply the strategy it received.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mechanism: Option<String>,
}

/// A thinking method: what to do when a solution will not come.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThinkingMethod {
    /// Short name.
    pub name: String,
    /// What it does and when it helps.
    pub description: String,
    /// The steps, in order.
    pub steps: Vec<String>,
}

/// A score the author gives another item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rating {
    /// The rated item.
    pub target: ItemId,
    /// MIN_SCORE..=MAX_SCORE (-3..=+3, the HMP validation scale).
    pub score: i8,
    /// Why, possibly empty.
    pub comment: String,
}

/// Optional limits of an advertised LLM.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmLimits {
    /// Context window in tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_tokens: Option<u32>,
    /// Longest reply in tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    /// Requests per minute the owner allows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_per_minute: Option<u32>,
}

/// Where an LLM can be reached. There is deliberately no API key field:
/// secrets stay in the local `llm_registry` row and never travel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmAddress {
    /// Short name.
    pub name: String,
    /// An `http://` or `https://` URL without credentials, or a node's peer
    /// id (`12D3KooW…`) to offload tasks to that node.
    pub endpoint: String,
    /// Model name as the endpoint knows it.
    pub model: String,
    /// Capabilities ("chat", "tools", "vision", …).
    pub features: Vec<String>,
    /// Advertised limits.
    pub limits: LlmLimits,
}

/// A tombstone: the author withdraws one of its own earlier items. (That
/// the target has the same author is checked where the target is known.)
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Retraction {
    /// The withdrawn item.
    pub target: ItemId,
}

/// Where the author can be reached now: its listen, external and relay
/// circuit addresses as multiaddr text. Only for the author's friends, one
/// hop (checked with the header); each one replaces the author's previous
/// one, so friends dial the current addresses and drop the stale ones. An
/// empty list says "dial me through a friend, or wait for me to dial".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReachableAt {
    /// Multiaddrs (`/ip4/…/tcp/…`, `/…/p2p/RELAY/p2p-circuit`), at most
    /// `MAX_REACH_ADDRESSES`, each at most `MAX_ADDRESS_LEN` bytes.
    pub addresses: Vec<String>,
}

/// An item's body; the variant is the item's kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    /// See [`Note`].
    Note(Note),
    /// See [`StagnationStrategy`].
    StagnationStrategy(StagnationStrategy),
    /// See [`ThinkingMethod`].
    ThinkingMethod(ThinkingMethod),
    /// See [`Rating`].
    Rating(Rating),
    /// See [`LlmAddress`].
    LlmAddress(LlmAddress),
    /// See [`Retraction`].
    Retraction(Retraction),
    /// A change to a club's member list.
    ClubChange(ClubChange),
    /// See [`ReachableAt`].
    ReachableAt(ReachableAt),
    /// One version of a record of a person's long-term memory.
    MindRecord(MindRecord),
    /// A device link or unlink statement (audience `devices`).
    DeviceLink(DeviceStatement),
}

/// Written as the bare struct of its variant; the kind travels in the header.
impl Serialize for Body {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Body::Note(b) => b.serialize(serializer),
            Body::StagnationStrategy(b) => b.serialize(serializer),
            Body::ThinkingMethod(b) => b.serialize(serializer),
            Body::Rating(b) => b.serialize(serializer),
            Body::LlmAddress(b) => b.serialize(serializer),
            Body::Retraction(b) => b.serialize(serializer),
            Body::ClubChange(b) => b.serialize(serializer),
            Body::ReachableAt(b) => b.serialize(serializer),
            Body::MindRecord(b) => b.serialize(serializer),
            Body::DeviceLink(b) => b.serialize(serializer),
        }
    }
}

impl Body {
    /// The kind of this body.
    pub fn kind(&self) -> ItemKind {
        match self {
            Body::Note(_) => ItemKind::Note,
            Body::StagnationStrategy(_) => ItemKind::StagnationStrategy,
            Body::ThinkingMethod(_) => ItemKind::ThinkingMethod,
            Body::Rating(_) => ItemKind::Rating,
            Body::LlmAddress(_) => ItemKind::LlmAddress,
            Body::Retraction(_) => ItemKind::Retraction,
            Body::ClubChange(_) => ItemKind::ClubChange,
            Body::ReachableAt(_) => ItemKind::ReachableAt,
            Body::MindRecord(_) => ItemKind::MindRecord,
            Body::DeviceLink(_) => ItemKind::DeviceLink,
        }
    }

    /// Reads a body of `kind` from a decoded CBOR value; any other shape
    /// (missing, extra or mistyped fields) is a `KindMismatch`.
    pub(crate) fn from_value(kind: ItemKind, value: ciborium::Value) -> Result<Body, ItemError> {
        fn read<T: serde::de::DeserializeOwned>(
            kind: ItemKind,
            v: ciborium::Value,
        ) -> Result<T, ItemError> {
            v.deserialized().map_err(|e| ItemError::KindMismatch {
                kind,
                detail: e.to_string(),
            })
        }
        Ok(match kind {
            ItemKind::Note => Body::Note(read(kind, value)?),
            ItemKind::StagnationStrategy => Body::StagnationStrategy(read(kind, value)?),
            ItemKind::ThinkingMethod => Body::ThinkingMethod(read(kind, value)?),
            ItemKind::Rating => Body::Rating(read(kind, value)?),
            ItemKind::LlmAddress => Body::LlmAddress(read(kind, value)?),
            ItemKind::Retraction => Body::Retraction(read(kind, value)?),
            ItemKind::ClubChange => Body::ClubChange(read(kind, value)?),
            ItemKind::ReachableAt => Body::ReachableAt(read(kind, value)?),
            ItemKind::MindRecord => Body::MindRecord(read(kind, value)?),
            ItemKind::DeviceLink => Body::DeviceLink(read(kind, value)?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(endpoint: &str) -> Body {
        Body::LlmAddress(LlmAddress {
            name: "home".into(),
            endpoint: endpoint.into(),
            model: "qwen3".into(),
            features: vec!["chat".into()],
            limits: LlmLimits::default(),
        })
    }

    #[test]
    fn a_note_by_the_user_carries_only_its_text() {
        let n = Note::by_user("hello");
        assert_eq!(n.text, "hello");
        assert_eq!(n.source, "user");
        assert_eq!((n.topic, n.reply_to, n.priority), (None, None, 0));
        assert!(n.mentions.is_empty() && n.hashtags.is_empty());
    }

    #[test]
    fn llm_address_has_no_secret_field() {
        let Body::LlmAddress(a) = addr("https://llm.example.org") else {
            unreachable!()
        };
        let json = serde_json_like(&a);
        for secret in ["api_key", "apikey", "key", "token", "secret", "password"] {
            assert!(
                !json.contains(&format!("\"{secret}\"")),
                "{secret} in {json}"
            );
        }
        // And a body carrying one is refused rather than silently dropped.
        let mut map = ciborium::Value::serialized(&a).unwrap();
        if let ciborium::Value::Map(m) = &mut map {
            m.push(("api_key".into(), "sk-123".into()));
        }
        assert!(matches!(
            Body::from_value(ItemKind::LlmAddress, map),
            Err(ItemError::KindMismatch {
                kind: ItemKind::LlmAddress,
                ..
            })
        ));
    }

    /// The field names a serialized value carries, as `"name"` strings.
    fn serde_json_like<T: Serialize>(v: &T) -> String {
        fn walk(v: &ciborium::Value, out: &mut String) {
            match v {
                ciborium::Value::Map(m) => m.iter().for_each(|(k, v)| {
                    if let ciborium::Value::Text(t) = k {
                        out.push_str(&format!("\"{t}\" "));
                    }
                    walk(v, out);
                }),
                ciborium::Value::Array(a) => a.iter().for_each(|v| walk(v, out)),
                _ => {}
            }
        }
        let mut out = String::new();
        walk(&ciborium::Value::serialized(v).unwrap(), &mut out);
        out
    }

    #[test]
    fn a_body_read_as_another_kind_is_a_mismatch() {
        let r = Rating {
            target: ItemId([1; 32]),
            score: 1,
            comment: "ok".into(),
        };
        let v = ciborium::Value::serialized(&r).unwrap();
        for kind in ItemKind::ALL {
            let got = Body::from_value(kind, v.clone());
            if kind == ItemKind::Rating {
                assert_eq!(got, Ok(Body::Rating(r.clone())));
            } else {
                assert!(
                    matches!(got, Err(ItemError::KindMismatch { kind: k, .. }) if k == kind),
                    "{kind}"
                );
            }
        }
    }
}

//! The limits of every body kind, checked the same way when an item is
//! signed and when one is decoded: lengths, list sizes, the rating scale and
//! the LLM endpoint rules (http(s) URL without credentials, or a peer id).

use crate::error::ItemError;
use crate::identity::AuthorKey;
use crate::item::body::Body;
use crate::limits::{
    MAX_ADDRESS_LEN, MAX_COMMENT_BYTES, MAX_ENDPOINT_LEN, MAX_LIST_ITEMS, MAX_NAME_LEN,
    MAX_REACH_ADDRESSES, MAX_SCORE, MAX_STEP_BYTES, MAX_TEXT_BYTES, MIN_SCORE,
};

impl Body {
    /// Checks every limit of the body; the same check runs on sign and decode.
    pub fn validate(&self) -> Result<(), ItemError> {
        match self {
            Body::Note(n) => {
                non_empty("note.text", &n.text)?;
                max_len("note.text", &n.text, MAX_TEXT_BYTES)?;
                if let Some(t) = &n.topic {
                    max_len("note.topic", t, MAX_NAME_LEN)?;
                }
                list("note.mentions", &n.mentions, MAX_NAME_LEN)?;
                list("note.hashtags", &n.hashtags, MAX_NAME_LEN)?;
                max_len("note.source", &n.source, MAX_NAME_LEN)
            }
            Body::StagnationStrategy(s) => {
                name("stagnation_strategy.name", &s.name)?;
                max_len("stagnation_strategy.class", &s.class, MAX_NAME_LEN)?;
                max_len(
                    "stagnation_strategy.description",
                    &s.description,
                    MAX_TEXT_BYTES,
                )?;
                if let Some(m) = &s.mechanism {
                    max_len("stagnation_strategy.mechanism", m, MAX_NAME_LEN)?;
                }
                list("stagnation_strategy.steps", &s.steps, MAX_STEP_BYTES)
            }
            Body::ThinkingMethod(m) => {
                name("thinking_method.name", &m.name)?;
                max_len(
                    "thinking_method.description",
                    &m.description,
                    MAX_TEXT_BYTES,
                )?;
                list("thinking_method.steps", &m.steps, MAX_STEP_BYTES)
            }
            Body::Rating(r) => {
                if !(MIN_SCORE..=MAX_SCORE).contains(&r.score) {
                    return Err(ItemError::ScoreOutOfRange(r.score));
                }
                max_len("rating.comment", &r.comment, MAX_COMMENT_BYTES)
            }
            Body::LlmAddress(a) => {
                name("llm_address.name", &a.name)?;
                check_endpoint(&a.endpoint)?;
                max_len("llm_address.model", &a.model, MAX_NAME_LEN)?;
                list("llm_address.features", &a.features, MAX_NAME_LEN)
            }
            Body::Retraction(_) => Ok(()),
            Body::ClubChange(c) => {
                if c.club.check().is_err() {
                    return Err(ItemError::BadClub(c.club.to_string()));
                }
                if crate::item::audience::valid_peer_id(&c.target) {
                    Ok(())
                } else {
                    Err(ItemError::BadClub(format!("target {:?}", c.target)))
                }
            }
            Body::ReachableAt(r) => {
                if r.addresses.len() > MAX_REACH_ADDRESSES {
                    return Err(ItemError::TooManyEntries {
                        field: "reachable_at.addresses",
                        count: r.addresses.len(),
                        max: MAX_REACH_ADDRESSES,
                    });
                }
                r.addresses.iter().try_for_each(|a| check_address(a))
            }
            Body::MindRecord(r) => r.check(),
            Body::DeviceLink(s) => s
                .verify()
                .map_err(|e| ItemError::BadDeviceLink(e.to_string())),
        }
    }
}

/// An address is multiaddr text that parses, within [`MAX_ADDRESS_LEN`].
fn check_address(address: &str) -> Result<(), ItemError> {
    max_len("reachable_at.addresses", address, MAX_ADDRESS_LEN)?;
    match address.parse::<multiaddr::Multiaddr>() {
        Ok(m) if !m.is_empty() => Ok(()),
        _ => Err(ItemError::BadAddress(address.to_owned())),
    }
}

fn non_empty(field: &'static str, s: &str) -> Result<(), ItemError> {
    if s.is_empty() {
        Err(ItemError::Empty { field })
    } else {
        Ok(())
    }
}

fn max_len(field: &'static str, s: &str, max: usize) -> Result<(), ItemError> {
    if s.len() > max {
        Err(ItemError::TooLong {
            field,
            len: s.len(),
            max,
        })
    } else {
        Ok(())
    }
}

fn name(field: &'static str, s: &str) -> Result<(), ItemError> {
    non_empty(field, s)?;
    max_len(field, s, MAX_NAME_LEN)
}

fn list(field: &'static str, items: &[String], max_each: usize) -> Result<(), ItemError> {
    if items.len() > MAX_LIST_ITEMS {
        return Err(ItemError::TooManyEntries {
            field,
            count: items.len(),
            max: MAX_LIST_ITEMS,
        });
    }
    items.iter().try_for_each(|s| max_len(field, s, max_each))
}

/// An endpoint is an http(s) URL with a host and no `user@`, or a peer id.
fn check_endpoint(endpoint: &str) -> Result<(), ItemError> {
    max_len("llm_address.endpoint", endpoint, MAX_ENDPOINT_LEN)?;
    let rest = endpoint
        .strip_prefix("https://")
        .or_else(|| endpoint.strip_prefix("http://"));
    match rest {
        Some(rest) => {
            let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
            if authority.contains('@') {
                return Err(ItemError::CredentialsInEndpoint);
            }
            if authority.is_empty()
                || endpoint
                    .chars()
                    .any(|c| c.is_whitespace() || c.is_control())
            {
                return Err(ItemError::BadEndpoint(endpoint.to_owned()));
            }
            Ok(())
        }
        None => endpoint
            .parse::<libp2p_identity::PeerId>()
            .ok()
            .and_then(|peer| AuthorKey::from_peer_id(&peer))
            .map(|_| ())
            .ok_or_else(|| ItemError::BadEndpoint(endpoint.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::item::body::{LlmAddress, LlmLimits, Note, Rating, ThinkingMethod};
    use crate::item::id::ItemId;

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
    fn endpoints_are_urls_or_peer_ids_without_credentials() {
        assert_eq!(addr("http://127.0.0.1:8080/v1").validate(), Ok(()));
        assert_eq!(addr("https://llm.example.org").validate(), Ok(()));
        assert_eq!(
            addr("12D3KooWD3eckifWpRn9wQpMG9R9hX3sD158z7EqHWmweQAJU5SA").validate(),
            Ok(())
        );
        assert_eq!(
            addr("https://bob:hunter2@llm.example.org/v1").validate(),
            Err(ItemError::CredentialsInEndpoint)
        );
        assert_eq!(
            addr("https://key@llm.example.org").validate(),
            Err(ItemError::CredentialsInEndpoint)
        );
        for bad in [
            "ftp://x",
            "https://",
            "llm.example.org",
            "12D3KooWnope",
            "http://a b",
        ] {
            assert_eq!(
                addr(bad).validate(),
                Err(ItemError::BadEndpoint(bad.into())),
                "{bad}"
            );
        }
        let long = format!("https://{}", "a".repeat(MAX_ENDPOINT_LEN));
        assert!(matches!(
            addr(&long).validate(),
            Err(ItemError::TooLong {
                field: "llm_address.endpoint",
                ..
            })
        ));
    }

    #[test]
    fn limits_are_enforced_per_field() {
        let note = |text: &str, tags: usize| {
            Body::Note(Note {
                text: text.into(),
                topic: None,
                mentions: vec![],
                hashtags: vec!["t".into(); tags],
                priority: 0,
                source: "user".into(),
                reply_to: None,
            })
        };
        assert_eq!(note("hi", MAX_LIST_ITEMS).validate(), Ok(()));
        assert_eq!(
            note("", 0).validate(),
            Err(ItemError::Empty { field: "note.text" })
        );
        assert!(matches!(
            note(&"x".repeat(MAX_TEXT_BYTES + 1), 0).validate(),
            Err(ItemError::TooLong {
                field: "note.text",
                ..
            })
        ));
        assert_eq!(
            note("hi", MAX_LIST_ITEMS + 1).validate(),
            Err(ItemError::TooManyEntries {
                field: "note.hashtags",
                count: MAX_LIST_ITEMS + 1,
                max: MAX_LIST_ITEMS
            })
        );
        let rating = |score| {
            Body::Rating(Rating {
                target: ItemId([0; 32]),
                score,
                comment: String::new(),
            })
        };
        assert_eq!(rating(MAX_SCORE).validate(), Ok(()));
        assert_eq!(rating(MIN_SCORE).validate(), Ok(()));
        assert_eq!(rating(4).validate(), Err(ItemError::ScoreOutOfRange(4)));
        assert_eq!(rating(-4).validate(), Err(ItemError::ScoreOutOfRange(-4)));
        let method = |name: &str, steps: Vec<String>| {
            Body::ThinkingMethod(ThinkingMethod {
                name: name.into(),
                description: String::new(),
                steps,
            })
        };
        assert_eq!(
            method("", vec![]).validate(),
            Err(ItemError::Empty {
                field: "thinking_method.name"
            })
        );
        assert!(matches!(
            method("m", vec!["s".repeat(MAX_STEP_BYTES + 1)]).validate(),
            Err(ItemError::TooLong {
                field: "thinking_method.steps",
                ..
            })
        ));
    }
}

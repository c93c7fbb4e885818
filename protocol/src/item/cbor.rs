//! Small CBOR helpers shared by the envelope and payload codecs: reading one
//! value from a byte slice with stray bytes and errors reported as `ItemError`.

use serde::de::DeserializeOwned;

use crate::error::ItemError;

/// Reads exactly one CBOR value of type `T` from `bytes`; `what` names the
/// part ("envelope", "payload") in errors.
pub(crate) fn read_exact<T: DeserializeOwned>(
    what: &'static str,
    bytes: &[u8],
) -> Result<T, ItemError> {
    let mut rest = bytes;
    let value = ciborium::from_reader(&mut rest).map_err(|e| map_error(what, e))?;
    if !rest.is_empty() {
        return Err(ItemError::TrailingBytes {
            what,
            extra: rest.len(),
        });
    }
    Ok(value)
}

/// Encodes `value` as CBOR. Writing to a `Vec` cannot fail for our types;
/// an error here is a bug, reported as `Malformed` rather than a panic.
pub(crate) fn write<T: serde::Serialize>(
    what: &'static str,
    value: &T,
) -> Result<Vec<u8>, ItemError> {
    let mut out = Vec::new();
    ciborium::into_writer(value, &mut out).map_err(|e| ItemError::Malformed {
        what,
        detail: format!("cannot encode: {e}"),
    })?;
    Ok(out)
}

fn map_error(what: &'static str, e: ciborium::de::Error<std::io::Error>) -> ItemError {
    use ciborium::de::Error;
    match e {
        Error::Io(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => {
            ItemError::Truncated { what }
        }
        Error::Io(io) => ItemError::Malformed {
            what,
            detail: io.to_string(),
        },
        Error::Syntax(at) => ItemError::Malformed {
            what,
            detail: format!("invalid CBOR at byte {at}"),
        },
        Error::Semantic(Some(at), msg) => ItemError::Malformed {
            what,
            detail: format!("{msg} (at byte {at})"),
        },
        Error::Semantic(None, msg) => ItemError::Malformed { what, detail: msg },
        Error::RecursionLimitExceeded => ItemError::Malformed {
            what,
            detail: "nested too deeply".into(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_say_what_and_why() {
        assert_eq!(
            read_exact::<u64>("payload", &[]),
            Err(ItemError::Truncated { what: "payload" })
        );
        assert_eq!(
            read_exact::<u64>("payload", &[0x19, 0x01]),
            Err(ItemError::Truncated { what: "payload" })
        );
        assert_eq!(
            read_exact::<u64>("payload", &[0x01, 0x02]),
            Err(ItemError::TrailingBytes {
                what: "payload",
                extra: 1
            })
        );
        assert!(matches!(
            read_exact::<u64>("envelope", &[0x1c]),
            Err(ItemError::Malformed {
                what: "envelope",
                ..
            })
        ));
        assert!(matches!(
            read_exact::<u64>("envelope", &[0x60]),
            Err(ItemError::Malformed {
                what: "envelope",
                ..
            })
        ));
        let deep = vec![0x81; 10_000];
        assert!(matches!(
            read_exact::<ciborium::Value>("payload", &deep),
            Err(ItemError::Malformed { detail, .. }) if detail.contains("nested")
        ));
    }
}

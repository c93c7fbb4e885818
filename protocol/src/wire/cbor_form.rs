//! How wire messages map to CBOR values: the numeric type codes, the
//! positional fields of each message, and a field reader whose errors name
//! the message and field. Caps are checked by the caller (`wire.rs`).

use ciborium::Value;

use super::{
    Announce, MAX_IDS_PER_MESSAGE, MAX_ITEMS_PER_MESSAGE, WireError, WireItem, WireMessage,
};
use crate::item::id::ItemId;

/// Type codes; part of the wire format, never reused.
const T_HAVE: u64 = 1;
const T_WANT: u64 = 2;
const T_ITEMS: u64 = 3;
const T_SYNC_QUERY: u64 = 4;
const T_SYNC_REPLY: u64 = 5;
const T_SYNC_DONE: u64 = 6;
const T_SYNC_ABORT: u64 = 7;

pub(super) fn to_value(message: &WireMessage) -> Value {
    let uint = |n: u64| Value::Integer(n.into());
    let fields = match message {
        WireMessage::Have { items } => {
            let mut ids = Vec::with_capacity(items.len() * 32);
            for a in items {
                ids.extend_from_slice(a.id.as_bytes());
            }
            let hops: Vec<u8> = items.iter().map(|a| a.hops).collect();
            vec![uint(T_HAVE), Value::Bytes(ids), Value::Bytes(hops)]
        }
        WireMessage::Want { ids } => {
            let packed: Vec<u8> = ids.iter().flat_map(|id| id.0).collect();
            vec![uint(T_WANT), Value::Bytes(packed)]
        }
        WireMessage::Items { session, items } => {
            let list = items
                .iter()
                .map(|i| Value::Array(vec![uint(i.hops.into()), Value::Bytes(i.envelope.clone())]))
                .collect();
            vec![
                uint(T_ITEMS),
                session.map_or(Value::Null, uint),
                Value::Array(list),
            ]
        }
        WireMessage::SyncQuery { session, frame } => {
            vec![
                uint(T_SYNC_QUERY),
                uint(*session),
                Value::Bytes(frame.clone()),
            ]
        }
        WireMessage::SyncReply { session, frame } => {
            vec![
                uint(T_SYNC_REPLY),
                uint(*session),
                Value::Bytes(frame.clone()),
            ]
        }
        WireMessage::SyncDone { session, sent } => {
            vec![uint(T_SYNC_DONE), uint(*session), uint((*sent).into())]
        }
        WireMessage::SyncAbort { session, reason } => {
            vec![
                uint(T_SYNC_ABORT),
                uint(*session),
                Value::Text(reason.clone()),
            ]
        }
    };
    Value::Array(fields)
}

pub(super) fn from_value(value: Value) -> Result<WireMessage, WireError> {
    let Value::Array(mut fields) = value else {
        return Err(WireError::NotAMessage);
    };
    if fields.is_empty() {
        return Err(WireError::NotAMessage);
    }
    let code = fields
        .remove(0)
        .as_integer()
        .and_then(|i| u64::try_from(i).ok())
        .ok_or(WireError::NotAMessage)?;
    let (name, arity) = match code {
        T_HAVE => ("have", 2),
        T_WANT => ("want", 1),
        T_ITEMS => ("items", 2),
        T_SYNC_QUERY => ("sync-query", 2),
        T_SYNC_REPLY => ("sync-reply", 2),
        T_SYNC_DONE => ("sync-done", 2),
        T_SYNC_ABORT => ("sync-abort", 2),
        other => return Err(WireError::UnknownType(other)),
    };
    if fields.len() != arity {
        return Err(WireError::WrongArity {
            message: name,
            got: fields.len(),
            expected: arity,
        });
    }
    let mut f = Fields {
        name,
        values: fields.into_iter(),
    };
    Ok(match code {
        T_HAVE => {
            let ids = f.ids("ids")?;
            let hops = f.bytes("hops")?;
            if hops.len() != ids.len() {
                return Err(f.bad(
                    "hops",
                    format!("{} hop counts for {} ids", hops.len(), ids.len()),
                ));
            }
            let items = ids
                .into_iter()
                .zip(hops)
                .map(|(id, hops)| Announce { id, hops })
                .collect();
            WireMessage::Have { items }
        }
        T_WANT => WireMessage::Want { ids: f.ids("ids")? },
        T_ITEMS => {
            let session = f.opt_u64("session")?;
            let items = f.items()?;
            WireMessage::Items { session, items }
        }
        T_SYNC_QUERY => WireMessage::SyncQuery {
            session: f.u64("session")?,
            frame: f.bytes("frame")?,
        },
        T_SYNC_REPLY => WireMessage::SyncReply {
            session: f.u64("session")?,
            frame: f.bytes("frame")?,
        },
        T_SYNC_DONE => {
            let session = f.u64("session")?;
            let sent = f.u64("sent")?;
            let sent = u32::try_from(sent)
                .map_err(|_| f.bad("sent", format!("{sent} does not fit in 32 bits")))?;
            WireMessage::SyncDone { session, sent }
        }
        _ => WireMessage::SyncAbort {
            session: f.u64("session")?,
            reason: f.text("reason")?,
        },
    })
}

/// Positional field reader with errors that name message and field.
struct Fields {
    name: &'static str,
    values: std::vec::IntoIter<Value>,
}

impl Fields {
    fn bad(&self, field: &'static str, detail: impl Into<String>) -> WireError {
        WireError::BadField {
            message: self.name,
            field,
            detail: detail.into(),
        }
    }

    fn next(&mut self, field: &'static str) -> Result<Value, WireError> {
        self.values.next().ok_or_else(|| self.bad(field, "missing"))
    }

    fn u64(&mut self, field: &'static str) -> Result<u64, WireError> {
        let v = self.next(field)?;
        v.as_integer()
            .and_then(|i| u64::try_from(i).ok())
            .ok_or_else(|| self.bad(field, "expected an unsigned integer"))
    }

    fn opt_u64(&mut self, field: &'static str) -> Result<Option<u64>, WireError> {
        let v = self.next(field)?;
        if v.is_null() {
            return Ok(None);
        }
        v.as_integer()
            .and_then(|i| u64::try_from(i).ok())
            .map(Some)
            .ok_or_else(|| self.bad(field, "expected an unsigned integer or null"))
    }

    fn bytes(&mut self, field: &'static str) -> Result<Vec<u8>, WireError> {
        self.next(field)?
            .into_bytes()
            .map_err(|_| self.bad(field, "expected a byte string"))
    }

    fn text(&mut self, field: &'static str) -> Result<String, WireError> {
        self.next(field)?
            .into_text()
            .map_err(|_| self.bad(field, "expected a text string"))
    }

    fn ids(&mut self, field: &'static str) -> Result<Vec<ItemId>, WireError> {
        let packed = self.bytes(field)?;
        if packed.len() % 32 != 0 {
            return Err(self.bad(
                field,
                format!(
                    "{} bytes is not a whole number of 32-byte ids",
                    packed.len()
                ),
            ));
        }
        let count = packed.len() / 32;
        if count > MAX_IDS_PER_MESSAGE {
            return Err(WireError::TooMany {
                message: self.name,
                what: "ids",
                count,
                max: MAX_IDS_PER_MESSAGE,
            });
        }
        Ok(packed
            .chunks_exact(32)
            .map(|c| {
                let mut id = [0u8; 32];
                id.copy_from_slice(c);
                ItemId(id)
            })
            .collect())
    }

    fn items(&mut self) -> Result<Vec<WireItem>, WireError> {
        let list = self
            .next("items")?
            .into_array()
            .map_err(|_| self.bad("items", "expected an array"))?;
        if list.len() > MAX_ITEMS_PER_MESSAGE {
            return Err(WireError::TooMany {
                message: self.name,
                what: "items",
                count: list.len(),
                max: MAX_ITEMS_PER_MESSAGE,
            });
        }
        list.into_iter()
            .map(|entry| {
                let pair = entry
                    .into_array()
                    .map_err(|_| self.bad("items", "each item must be [hops, envelope]"))?;
                let [hops, envelope]: [Value; 2] = pair
                    .try_into()
                    .map_err(|_| self.bad("items", "each item must be [hops, envelope]"))?;
                let hops = hops
                    .as_integer()
                    .and_then(|i| u8::try_from(i).ok())
                    .ok_or_else(|| self.bad("items", "hops must be an integer 0..=255"))?;
                let envelope = envelope
                    .into_bytes()
                    .map_err(|_| self.bad("items", "envelope must be a byte string"))?;
                Ok(WireItem { hops, envelope })
            })
            .collect()
    }
}

pub(super) fn map_cbor_error(e: ciborium::de::Error<std::io::Error>) -> WireError {
    use ciborium::de::Error;
    match e {
        Error::Io(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => WireError::Truncated,
        Error::Io(io) => WireError::BadCbor(io.to_string()),
        Error::Syntax(at) => WireError::BadCbor(format!("syntax error at byte {at}")),
        Error::Semantic(_, msg) => WireError::BadCbor(msg),
        Error::RecursionLimitExceeded => WireError::BadCbor("nested too deeply".into()),
    }
}

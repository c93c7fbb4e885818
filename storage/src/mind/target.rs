//! A rating's target between a person's devices. A rating of one of the
//! person's own rows names it by its local id (`stagnation_strategies:3`),
//! which differs between devices; it travels as the row's record key
//! (`stagnation_strategies#<32 hex digits>`) and is written back as the
//! local id of the row that record lives in here. Any other target (an
//! item id in hex, a friend's row, a row gone) travels as it is.

use porfiry_protocol::mind::MindTable;
use rusqlite::OptionalExtension;

use super::columns::{own_rows_only, sql_table, table_of_sql};
use super::rows::RecordKey;
use crate::error::{Result, StorageError};
use crate::store::Store;

/// What a received target becomes here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TargetHere {
    /// This text.
    Text(String),
    /// The record it names has not arrived yet: the rating waits for it.
    Waiting(RecordKey),
}

/// `<table>:<id>` of a memory table (the id in its plain decimal form).
fn local_form(text: &str) -> Option<(MindTable, i64)> {
    let (table, id) = text.split_once(':')?;
    let table = table_of_sql(table)?;
    let n = id.parse::<i64>().ok()?;
    (n.to_string() == id).then_some((table, n))
}

/// `<table>#<key hex>` of a memory table.
fn key_form(text: &str) -> Option<(MindTable, RecordKey)> {
    let (table, key) = text.split_once('#')?;
    let table = table_of_sql(table)?;
    let mut out = [0u8; 16];
    hex::decode_to_slice(key, &mut out).ok()?;
    Some((table, out))
}

impl Store {
    /// Target `text` of a rating as it travels, as device `origin` (the
    /// row it names gets a record key if it has none).
    pub(crate) fn target_to_share(&self, origin: &str, text: String) -> Result<String> {
        let Some((table, id)) = local_form(&text) else {
            return Ok(text);
        };
        let own = if own_rows_only(table) {
            " AND origin_author IS NULL"
        } else {
            ""
        };
        let travels = self
            .conn
            .prepare_cached(&format!(
                "SELECT 1 FROM {} WHERE id = ?{own}",
                sql_table(table)
            ))?
            .query_row([id], |_| Ok(()))
            .optional()?
            .is_some();
        if !travels {
            return Ok(text);
        }
        let key = self.mind_key_or_new(origin, table, id)?;
        Ok(format!("{}#{}", sql_table(table), hex::encode(key)))
    }

    /// A received target as this device writes it.
    pub(crate) fn target_here(&self, text: &str) -> Result<TargetHere> {
        let Some((table, key)) = key_form(text) else {
            return Ok(TargetHere::Text(text.to_owned()));
        };
        Ok(match self.mind_row_of(&key)? {
            Some((found, Some(id))) if found == table => {
                TargetHere::Text(format!("{}:{id}", sql_table(table)))
            }
            Some((found, _)) if found != table => {
                return Err(StorageError::invalid(
                    "mind record target",
                    format!("refers to a {found}, not a {table}"),
                ));
            }
            // Deleted: the rating keeps naming the record, which rates nothing here.
            Some(_) => TargetHere::Text(text.to_owned()),
            None => TargetHere::Waiting(key),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_memory_table_and_a_plain_id_or_key_are_read() {
        assert_eq!(
            local_form("stagnation_strategies:3"),
            Some((MindTable::Strategy, 3))
        );
        assert_eq!(local_form("thinking_methods:03"), None);
        assert_eq!(local_form("notes:3"), None);
        assert_eq!(local_form("ab12"), None);
        let hex = "000102030405060708090a0b0c0d0e0f";
        assert_eq!(
            key_form(&format!("llm_registry#{hex}")).map(|(t, k)| (t, k[15])),
            Some((MindTable::Llm, 15))
        );
        assert_eq!(key_form("llm_registry#00"), None);
        assert_eq!(key_form(&format!("notes#{hex}")), None);
    }
}

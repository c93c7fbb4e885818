//! Building the WHERE / ORDER / LIMIT part of list queries safely: values
//! are always bound parameters, never spliced into SQL text.

use rusqlite::types::Value;

use crate::error::{Result, StorageError};
use crate::limits::{DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT};

/// What a generic list returns: filters and paging shared by every table.
/// A filter on a column the table lacks (tags, pinned, search) is refused.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListQuery {
    /// Only rows whose `tags` contain this tag.
    pub tag: Option<String>,
    /// Only pinned (`Some(true)`) or unpinned (`Some(false)`) rows.
    pub pinned: Option<bool>,
    /// Only rows where one of the table's search columns contains this text
    /// (case-insensitive for ASCII).
    pub text: Option<String>,
    /// Only rows created at or after this time (Unix ms).
    pub since_ms: Option<u64>,
    /// At most this many rows; `None` = [`DEFAULT_LIST_LIMIT`], more than
    /// [`MAX_LIST_LIMIT`] is refused.
    pub limit: Option<u32>,
    /// Rows to skip (paging).
    pub offset: u32,
    /// Oldest first instead of newest first.
    pub oldest_first: bool,
}

impl ListQuery {
    /// The newest `n` rows.
    pub fn recent(n: u32) -> Self {
        ListQuery {
            limit: Some(n),
            ..Default::default()
        }
    }
}

/// Resolves a caller's limit: `None` is the default; 0 or too many is refused.
pub(crate) fn resolve_limit(limit: Option<u32>) -> Result<u32> {
    match limit {
        None => Ok(DEFAULT_LIST_LIMIT),
        Some(n @ 1..=MAX_LIST_LIMIT) => Ok(n),
        Some(n) => Err(StorageError::invalid(
            "limit",
            format!("{n}: must be 1 to {MAX_LIST_LIMIT}"),
        )),
    }
}

/// A LIKE pattern matching `text` anywhere, with `%`, `_` and `\` escaped
/// (use with `ESCAPE '\'`).
pub(crate) fn contains_pattern(text: &str) -> String {
    let mut p = String::with_capacity(text.len() + 2);
    p.push('%');
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            p.push('\\');
        }
        p.push(c);
    }
    p.push('%');
    p
}

/// AND-ed conditions with their parameters, in placeholder order.
#[derive(Debug, Default)]
pub(crate) struct Filter {
    clauses: Vec<String>,
    pub(crate) params: Vec<Value>,
}

impl Filter {
    /// Adds one condition; its `?` placeholders take `params` in order.
    pub(crate) fn and(
        &mut self,
        clause: impl Into<String>,
        params: impl IntoIterator<Item = Value>,
    ) {
        self.clauses.push(clause.into());
        self.params.extend(params);
    }

    /// Adds "column's JSON array contains `value`".
    pub(crate) fn json_contains(&mut self, column: &str, value: &str) {
        self.and(
            format!("EXISTS (SELECT 1 FROM json_each({column}) WHERE json_each.value = ?)"),
            [Value::Text(value.to_owned())],
        );
    }

    /// Adds "one of `columns` contains `text`".
    pub(crate) fn text_in(&mut self, columns: &[&str], text: &str) {
        let pattern = contains_pattern(text);
        let clause = columns
            .iter()
            .map(|c| format!("{c} LIKE ? ESCAPE '\\'"))
            .collect::<Vec<_>>()
            .join(" OR ");
        self.and(
            format!("({clause})"),
            columns.iter().map(|_| Value::Text(pattern.clone())),
        );
    }

    /// The ` WHERE …` text, or nothing when there are no conditions.
    pub(crate) fn where_sql(&self) -> String {
        if self.clauses.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", self.clauses.join(" AND "))
        }
    }
}

/// A u64 (time) as an SQL integer parameter; times beyond i64 are refused.
pub(crate) fn int_param(what: &str, v: u64) -> Result<Value> {
    i64::try_from(v)
        .map(Value::Integer)
        .map_err(|_| StorageError::invalid(what, format!("{v} is out of range")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_patterns_escape_wildcards() {
        assert_eq!(contains_pattern("a%b_c\\d"), "%a\\%b\\_c\\\\d%");
        assert_eq!(contains_pattern(""), "%%");
    }

    #[test]
    fn limits_default_and_refuse_out_of_range() {
        assert_eq!(resolve_limit(None).unwrap(), DEFAULT_LIST_LIMIT);
        assert_eq!(resolve_limit(Some(MAX_LIST_LIMIT)).unwrap(), MAX_LIST_LIMIT);
        assert!(resolve_limit(Some(0)).is_err());
        assert!(resolve_limit(Some(MAX_LIST_LIMIT + 1)).is_err());
    }

    #[test]
    fn filter_joins_clauses_in_order() {
        let mut f = Filter::default();
        assert_eq!(f.where_sql(), "");
        f.and("a = ?", [Value::Integer(1)]);
        f.text_in(&["x", "y"], "q");
        assert_eq!(
            f.where_sql(),
            " WHERE a = ? AND (x LIKE ? ESCAPE '\\' OR y LIKE ? ESCAPE '\\')"
        );
        assert_eq!(f.params.len(), 3);
    }
}

//! Small helpers the acting sets share: database calls with one error type,
//! bounded lists with their "…and N more" line, and cutting text at a
//! character boundary.

use porfiry_skills::{Language, ToolOutput};
use porfiry_storage::Store;

use super::texts;
use porfiry_storage::db::{Db, DbError};

/// Runs `f` on the writer thread; a closed actor or a refused write become
/// one error text.
pub async fn write<T, F>(db: &Db, f: F) -> Result<T, String>
where
    F: FnOnce(&Store) -> porfiry_storage::Result<T> + Send + 'static,
    T: Send + 'static,
{
    one_error(db.write(f).await)
}

/// Runs `f` on a read connection, like [`write`].
pub async fn read<T, F>(db: &Db, f: F) -> Result<T, String>
where
    F: FnOnce(&Store) -> porfiry_storage::Result<T> + Send + 'static,
    T: Send + 'static,
{
    one_error(db.read(f).await)
}

/// The actor's error or the storage's, as one text.
fn one_error<T>(outcome: Result<porfiry_storage::Result<T>, DbError>) -> Result<T, String> {
    match outcome {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(e.to_string()),
        Err(e) => Err(e.to_string()),
    }
}

/// A failed call because the database refused or is gone; nothing changed.
pub fn db_failed(lang: Language, detail: &str) -> ToolOutput {
    ToolOutput::failed(texts::storage_failed(lang, detail))
}

/// The first `max` of `lines` (already in display order), then "…and N
/// more" when `total` is larger than what is shown.
pub fn bounded(lang: Language, mut lines: Vec<String>, max: usize, total: usize) -> String {
    lines.truncate(max);
    let more = total.saturating_sub(lines.len());
    if more > 0 {
        lines.push(texts::and_more(lang, more));
    }
    lines.join("\n")
}

/// `text` cut to at most `max` characters, with `…` when cut.
pub fn cut_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cutting_keeps_whole_characters() {
        assert_eq!(cut_chars("привет", 3), "при…");
        assert_eq!(cut_chars("abc", 3), "abc");
        assert_eq!(cut_chars("", 0), "");
    }

    #[test]
    fn a_long_list_says_how_many_are_left_out() {
        let lines: Vec<String> = (0..5).map(|i| i.to_string()).collect();
        let text = bounded(Language::En, lines.clone(), 2, 7);
        assert_eq!(text, "0\n1\n…and 5 more");
        assert_eq!(bounded(Language::En, lines, 9, 5), "0\n1\n2\n3\n4");
    }
}

//! Reading the user's messages, one per line, from any `BufRead` (stdin in
//! `porfiry chat`): a line is cut off at a byte limit instead of growing
//! without bound, and a line that is not UTF-8 is reported, not fatal.

use std::io::{self, BufRead};

use super::config::MAX_USER_MESSAGE_CHARS;

/// Longest line kept in memory: [`MAX_USER_MESSAGE_CHARS`] characters of up
/// to 4 bytes each in UTF-8. Longer lines are skipped to their end.
pub const MAX_INPUT_LINE_BYTES: usize = MAX_USER_MESSAGE_CHARS * 4;

/// One line of input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputLine {
    /// A line of text, without its line ending.
    Text(String),
    /// A line that is not valid UTF-8 (its bytes are dropped).
    NotUtf8,
    /// A line longer than the limit; it was read to its end and dropped.
    TooLong {
        /// Its length in bytes.
        bytes: usize,
    },
}

/// Reads the next line; `None` at the end of input.
pub fn read_line(reader: &mut impl BufRead, max_bytes: usize) -> io::Result<Option<InputLine>> {
    // Room for the line, a `\r\n` ending, and one byte to tell "over".
    let cap = max_bytes.saturating_add(2);
    let mut bytes = Vec::new();
    let mut total = 0usize;
    let mut last_byte = None;
    let mut saw_any = false;
    let mut ending = 0usize;
    loop {
        let chunk = match reader.fill_buf() {
            Ok(chunk) => chunk,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            break;
        }
        saw_any = true;
        let newline = chunk.iter().position(|&b| b == b'\n');
        let take = newline.map_or(chunk.len(), |i| i + 1);
        if let Some(i) = newline {
            let before = if i > 0 { Some(chunk[i - 1]) } else { last_byte };
            ending = if before == Some(b'\r') { 2 } else { 1 };
        }
        last_byte = chunk[..take].last().copied();
        total += take;
        let room = cap.saturating_sub(bytes.len());
        bytes.extend_from_slice(&chunk[..take.min(room)]);
        reader.consume(take);
        if newline.is_some() {
            break;
        }
    }
    if !saw_any {
        return Ok(None);
    }
    let len = total - ending;
    if len > max_bytes {
        return Ok(Some(InputLine::TooLong { bytes: len }));
    }
    bytes.truncate(len);
    Ok(Some(match String::from_utf8(bytes) {
        Ok(text) => InputLine::Text(text),
        Err(_) => InputLine::NotUtf8,
    }))
}

#[cfg(test)]
mod tests {
    use std::io::{BufReader, Cursor};

    use super::*;

    fn all(input: &[u8], max: usize) -> Vec<InputLine> {
        // A tiny buffer makes lines span several fill_buf calls.
        let mut reader = BufReader::with_capacity(3, Cursor::new(input.to_vec()));
        let mut out = Vec::new();
        while let Some(line) = read_line(&mut reader, max).unwrap() {
            out.push(line);
        }
        out
    }

    fn text(s: &str) -> InputLine {
        InputLine::Text(s.into())
    }

    #[test]
    fn lines_lose_their_endings_and_the_last_needs_none() {
        assert_eq!(
            all(b"one\r\ntwo\n\nthree", 100),
            [text("one"), text("two"), text(""), text("three")]
        );
        assert_eq!(all(b"", 100), []);
        assert_eq!(all("привет\n".as_bytes(), 100), [text("привет")]);
    }

    #[test]
    fn a_long_line_is_dropped_whole_and_the_next_line_still_reads() {
        assert_eq!(
            all(b"abcdefgh\nok\n", 5),
            [InputLine::TooLong { bytes: 8 }, text("ok")]
        );
        assert_eq!(all(b"abcde\n", 5), [text("abcde")], "exactly at the limit");
        assert_eq!(all(b"abcdef", 5), [InputLine::TooLong { bytes: 6 }]);
        assert_eq!(
            all(b"abcde\r\nx", 5),
            [text("abcde"), text("x")],
            "CR split off"
        );
        assert_eq!(
            all(b"abcdefg\r\nx\r\n", 5),
            [InputLine::TooLong { bytes: 7 }, text("x")]
        );
    }

    #[test]
    fn bad_utf8_is_reported_and_reading_goes_on() {
        assert_eq!(
            all(b"\xff\xfe\nfine\n", 100),
            [InputLine::NotUtf8, text("fine")]
        );
    }
}

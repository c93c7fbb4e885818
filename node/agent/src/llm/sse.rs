//! Server-sent events (the `text/event-stream` body of a streamed chat completion),
//! parsed from bytes as they arrive. Pure: no IO, no clock.
//!
//! Follows the WHATWG event-stream rules: lines end in `\n`, `\r\n` or `\r` (a `\r\n`
//! split across two TCP reads is still one line end); `field: value` lines with one
//! optional space after the colon; `data` lines of one event joined by `\n`; lines
//! starting with `:` are comments (keep-alives) and ignored; a blank line dispatches the
//! event; an event without data is dropped; a leading byte-order mark is skipped. Bytes
//! are gathered per line before decoding, so a UTF-8 character split across reads
//! arrives whole; invalid UTF-8 becomes U+FFFD.
//!
//! One deviation, for servers that close right after their last line: [`SseParser::finish`]
//! dispatches an event whose blank line never came (the standard drops it), so a final
//! `data: [DONE]` without its blank line is still seen.

/// Largest event (its data lines together, or any one line): a chunk of a chat stream
/// carries a token or a few in ~200 bytes of JSON; a mebibyte is thousands of times more
/// and stops a server that never sends a line end from filling memory.
pub const MAX_EVENT_BYTES: usize = 1024 * 1024;

const BOM: &str = "\u{feff}";

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` name; empty for the default (`message`).
    pub event: String,
    /// The `data:` lines joined by `\n`.
    pub data: String,
}

/// The stream broke the parser's limits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SseError {
    /// A line or an event grew past [`MAX_EVENT_BYTES`].
    #[error("an event of the stream is larger than {limit} bytes")]
    TooLarge {
        /// The limit in bytes.
        limit: usize,
    },
}

/// Incremental parser: feed it the body as it arrives ([`push`](Self::push)), then
/// [`finish`](Self::finish) at the end of the body.
#[derive(Debug, Default)]
pub struct SseParser {
    /// Bytes of the current, unfinished line.
    line: Vec<u8>,
    /// The last byte seen was `\r`: a `\n` right after it ends nothing.
    after_cr: bool,
    /// No line has ended yet (the byte-order mark may lead the first).
    first_line: bool,
    /// The current event's name.
    event: String,
    /// The current event's data lines, each followed by `\n`.
    data: String,
    /// Whether a `data` field was seen for the current event.
    has_data: bool,
}

impl SseParser {
    /// A parser at the start of a body.
    pub fn new() -> Self {
        Self {
            first_line: true,
            ..Self::default()
        }
    }

    /// Takes the next bytes of the body; returns the events they complete, in order.
    pub fn push(&mut self, mut bytes: &[u8]) -> Result<Vec<SseEvent>, SseError> {
        let mut events = Vec::new();
        while !bytes.is_empty() {
            if self.after_cr {
                self.after_cr = false;
                if bytes[0] == b'\n' {
                    bytes = &bytes[1..];
                    continue;
                }
            }
            match bytes.iter().position(|&b| b == b'\n' || b == b'\r') {
                None => {
                    self.grow_line(bytes)?;
                    break;
                }
                Some(end) => {
                    self.grow_line(&bytes[..end])?;
                    self.after_cr = bytes[end] == b'\r';
                    bytes = &bytes[end + 1..];
                    if let Some(event) = self.end_line()? {
                        events.push(event);
                    }
                }
            }
        }
        Ok(events)
    }

    /// The end of the body: the last event when the body stopped after a data line
    /// without the blank line that should follow.
    pub fn finish(&mut self) -> Result<Option<SseEvent>, SseError> {
        if !self.line.is_empty() {
            // The last line had no line end: it still counts as a line.
            if let Some(event) = self.end_line()? {
                return Ok(Some(event));
            }
        }
        Ok(self.dispatch())
    }

    fn grow_line(&mut self, bytes: &[u8]) -> Result<(), SseError> {
        if self.line.len() + bytes.len() > MAX_EVENT_BYTES {
            return Err(SseError::TooLarge {
                limit: MAX_EVENT_BYTES,
            });
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    /// One complete line: a field, a comment, or the blank line that dispatches.
    fn end_line(&mut self) -> Result<Option<SseEvent>, SseError> {
        let raw = std::mem::take(&mut self.line);
        let decoded = String::from_utf8_lossy(&raw);
        let mut line: &str = &decoded;
        if std::mem::take(&mut self.first_line) {
            line = line.strip_prefix(BOM).unwrap_or(line);
        }
        if line.is_empty() {
            return Ok(self.dispatch());
        }
        if line.starts_with(':') {
            return Ok(None);
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "data" => {
                if self.data.len() + value.len() + 1 > MAX_EVENT_BYTES {
                    return Err(SseError::TooLarge {
                        limit: MAX_EVENT_BYTES,
                    });
                }
                self.data.push_str(value);
                self.data.push('\n');
                self.has_data = true;
            }
            "event" => value.clone_into(&mut self.event),
            // `id`, `retry` and unknown fields mean nothing to a chat stream.
            _ => {}
        }
        Ok(None)
    }

    /// The event gathered so far, if it has data; starts the next one either way.
    fn dispatch(&mut self) -> Option<SseEvent> {
        let event = std::mem::take(&mut self.event);
        let mut data = std::mem::take(&mut self.data);
        if !std::mem::take(&mut self.has_data) {
            return None;
        }
        data.pop();
        Some(SseEvent { event, data })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(data: &str) -> SseEvent {
        SseEvent {
            event: String::new(),
            data: data.into(),
        }
    }

    fn named(event: &str, data: &str) -> SseEvent {
        SseEvent {
            event: event.into(),
            data: data.into(),
        }
    }

    /// All events of `body` fed as one piece.
    fn whole(body: &[u8]) -> Vec<SseEvent> {
        let mut p = SseParser::new();
        let mut out = p.push(body).unwrap();
        out.extend(p.finish().unwrap());
        out
    }

    /// The events of `body` fed in the given pieces.
    fn pieces(parts: &[&[u8]]) -> Vec<SseEvent> {
        let mut p = SseParser::new();
        let mut out = Vec::new();
        for part in parts {
            out.extend(p.push(part).unwrap());
        }
        out.extend(p.finish().unwrap());
        out
    }

    /// Asserts that `body` gives `want` whole, split in two at every byte, split in
    /// three at every pair of bytes, and one byte at a time.
    fn check(body: &[u8], want: &[SseEvent]) {
        assert_eq!(
            whole(body),
            want,
            "whole: {:?}",
            String::from_utf8_lossy(body)
        );
        for i in 0..=body.len() {
            let (a, b) = body.split_at(i);
            assert_eq!(pieces(&[a, b]), want, "split at {i}");
            for j in i..=body.len() {
                let (b, c) = body[i..].split_at(j - i);
                assert_eq!(pieces(&[a, b, c]), want, "split at {i} and {j}");
            }
        }
        let bytes: Vec<&[u8]> = body.chunks(1).collect();
        assert_eq!(pieces(&bytes), want, "byte by byte");
    }

    const OPENAI: &[u8] = b"data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n\
        data: {\"choices\":[{\"delta\":{\"content\":\" there\"}}]}\n\n\
        data: [DONE]\n\n";

    #[test]
    fn openai_stream_at_every_split() {
        check(
            OPENAI,
            &[
                ev(r#"{"choices":[{"delta":{"content":"Hi"}}]}"#),
                ev(r#"{"choices":[{"delta":{"content":" there"}}]}"#),
                ev("[DONE]"),
            ],
        );
    }

    #[test]
    fn crlf_and_lone_cr_line_ends_at_every_split() {
        let want = [ev("a"), ev("b"), ev("c"), ev("d")];
        check(b"data: a\r\n\r\ndata: b\r\rdata: c\n\ndata: d\r\n\n", &want);
        // `\r` then `\n` in the next read is one line end, not two (which would be an
        // empty line dispatching early): the data lines stay one event.
        check(b"data: x\r\ndata: y\r\n\r\n", &[ev("x\ny")]);
    }

    #[test]
    fn comments_and_keep_alives_are_ignored() {
        check(
            b": keep-alive\n\n:\ndata: a\n: inside an event\ndata: b\n\n: OPENROUTER PROCESSING\r\n\r\n",
            &[ev("a\nb")],
        );
    }

    #[test]
    fn multi_line_data_event_names_and_other_fields() {
        check(
            b"event: error\ndata: {\"error\":\ndata:  two spaces\n not a field\nid: 7\nretry: 10\nfoo\n\n",
            &[named("error", "{\"error\":\n two spaces")],
        );
        // `data` without a colon is an empty data line; `data:x` needs no space.
        check(b"data\n\ndata:x\n\n", &[ev(""), ev("x")]);
        // The event name does not carry over to the next event.
        check(
            b"event: a\ndata: 1\n\ndata: 2\n\n",
            &[named("a", "1"), ev("2")],
        );
    }

    #[test]
    fn events_without_data_are_dropped() {
        check(b"event: ping\n\n\n\nid: 1\n\n", &[]);
        check(b"", &[]);
    }

    #[test]
    fn utf8_split_inside_a_character_arrives_whole() {
        check("data: привет 🦀\n\n".as_bytes(), &[ev("привет 🦀")]);
        check(b"data: \xff\n\n", &[ev("\u{fffd}")]);
    }

    #[test]
    fn leading_byte_order_mark_is_skipped_once() {
        check("\u{feff}data: a\n\n".as_bytes(), &[ev("a")]);
        check(
            "data: a\n\n\u{feff}data: b\n\n".as_bytes(),
            &[ev("a")],
            // The second BOM makes the field name `\u{feff}data`: not a data field.
        );
    }

    #[test]
    fn a_body_cut_after_a_data_line_still_gives_its_event() {
        check(b"data: a\n\ndata: [DONE]\n", &[ev("a"), ev("[DONE]")]);
        check(b"data: a\n\ndata: [DONE]", &[ev("a"), ev("[DONE]")]);
        check(b"data: a\r", &[ev("a")]);
    }

    #[test]
    fn a_line_or_event_past_the_limit_is_refused() {
        let mut p = SseParser::new();
        let long = vec![b'x'; MAX_EVENT_BYTES];
        assert_eq!(p.push(&long).unwrap(), vec![]);
        assert_eq!(
            p.push(b"x"),
            Err(SseError::TooLarge {
                limit: MAX_EVENT_BYTES
            })
        );

        let mut p = SseParser::new();
        let line = [
            b"data: ".as_slice(),
            &vec![b'y'; MAX_EVENT_BYTES / 2],
            b"\n",
        ]
        .concat();
        p.push(&line).unwrap();
        assert!(matches!(p.push(&line), Err(SseError::TooLarge { .. })));

        // Up to the limit is fine: a line of exactly MAX_EVENT_BYTES, its data one less.
        let mut p = SseParser::new();
        let data = "z".repeat(MAX_EVENT_BYTES - 5);
        let body = format!("data:{data}\n\n");
        assert_eq!(p.push(body.as_bytes()).unwrap(), vec![ev(&data)]);
    }
}

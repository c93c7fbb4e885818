//! The `TOOL_CALL: name|args` parser, forgiving of what small models emit:
//! spaces anywhere, a code fence or backticks or bold around the line, text
//! before the marker on the same line, a lower-case marker, a trailing period
//! after a bare name, `name()` or `name(args)` function style, `name args`
//! with a space for the bar, and `<think>` blocks. A call is one line. A reply without a call is the answer.
//!
//! When a reply holds several calls, only the FIRST runs: the model has not
//! seen its result yet, so later calls are guesses (often with an invented
//! result in between), and an `enable_toolset` changes the prompt the later
//! calls were written against. The dropped count is reported so the model can
//! be told.

use std::borrow::Cow;

/// The marker, matched without regard to ASCII case.
pub const MARKER: &str = "tool_call";

/// One parsed call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    /// Lower-case tool name, `[a-z0-9_-]+`.
    pub name: String,
    /// Everything after the first `|` (trimmed), or `""`.
    pub args: String,
}

impl ToolCall {
    /// A call.
    pub fn new(name: &str, args: &str) -> Self {
        Self {
            name: name.to_owned(),
            args: args.to_owned(),
        }
    }

    /// The canonical line, `TOOL_CALL: name|args` (or `TOOL_CALL: name`): the
    /// form written into the history, so the model's own past turns show it
    /// the exact syntax.
    pub fn line(&self) -> String {
        if self.args.is_empty() {
            format!("TOOL_CALL: {}", self.name)
        } else {
            format!("TOOL_CALL: {}|{}", self.name, self.args)
        }
    }
}

/// What a model reply is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParsedReply {
    /// No call: the text (think blocks removed, trimmed) is the answer.
    Answer(String),
    /// The first call, and how many more calls the reply held (not run).
    Call {
        /// The call to run.
        call: ToolCall,
        /// Further calls ignored.
        ignored: usize,
    },
}

/// Parses a model reply.
pub fn parse_reply(text: &str) -> ParsedReply {
    let text = strip_think(text);
    let mut calls = text.lines().filter_map(parse_line);
    match calls.next() {
        Some(call) => ParsedReply::Call {
            call,
            ignored: calls.count(),
        },
        None => ParsedReply::Answer(text.trim().to_owned()),
    }
}

/// Every call in a reply, in order (for callers that run them all, such as
/// a batch of cognitive-core commands).
pub fn find_calls(text: &str) -> Vec<ToolCall> {
    strip_think(text).lines().filter_map(parse_line).collect()
}

/// Removes `<think>…</think>` blocks, and everything before a `</think>`
/// whose opening tag the server already stripped. An unclosed `<think>` is
/// left alone (the text is all we have).
pub fn strip_think(text: &str) -> Cow<'_, str> {
    const OPEN: &str = "<think>";
    const CLOSE: &str = "</think>";
    if !text.contains(CLOSE) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    // Each close is looked for once, and an open only before it, so the
    // work is linear: searching the whole rest for an open at every close
    // took minutes on a megabyte of stray closes (issue 46, an input
    // written for the `tool_call` fuzz target).
    while let Some(c) = rest.find(CLOSE) {
        // An open before the close: keep what precedes the open. None (a
        // close with no open before it): drop what precedes the close. The
        // two tags cannot overlap, so an open that starts before the close
        // ends before it.
        if let Some(o) = rest[..c].find(OPEN) {
            out.push_str(&rest[..o]);
        }
        rest = &rest[c + CLOSE.len()..];
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// Finds a call on one line, trying each occurrence of the marker.
pub fn parse_line(line: &str) -> Option<ToolCall> {
    let lower = line.to_ascii_lowercase();
    let mut from = 0;
    while let Some(found) = lower[from..].find(MARKER) {
        let start = from + found;
        from = start + MARKER.len();
        // The marker is ASCII and to_ascii_lowercase keeps byte offsets, so
        // `from` is a char boundary of `line` too.
        if let Some(call) = parse_after_marker(&line[from..]) {
            return Some(call);
        }
    }
    None
}

/// A call written without `|`: `name(args)` function style, or `name args`
/// when the first word looks like a tool name (has a `_`), else a bare name.
fn split_without_bar(body: &str) -> (&str, &str) {
    if let Some((name, inner)) = body.split_once('(')
        && !name.trim().contains(char::is_whitespace)
    {
        let inner = inner.trim();
        let inner = inner.strip_suffix(['.', ';']).unwrap_or(inner).trim_end();
        return (name, inner.strip_suffix(')').unwrap_or(inner).trim());
    }
    match body.split_once(char::is_whitespace) {
        Some((name, rest)) if name.contains('_') => (name, rest.trim()),
        _ => (body, ""),
    }
}

/// `rest` follows the marker: `**: name|args```` and the like.
fn parse_after_marker(rest: &str) -> Option<ToolCall> {
    let rest = rest.trim_start_matches(|c: char| c == '*' || c == '`' || c.is_whitespace());
    let rest = rest.strip_prefix(':')?;
    let body = rest
        .trim_start_matches(|c: char| c == '*' || c == '`' || c.is_whitespace())
        .trim_end_matches(|c: char| c == '*' || c == '`' || c.is_whitespace());
    let (head, args) = match body.split_once('|') {
        Some((head, args)) => (head, args.trim()),
        None => split_without_bar(body),
    };
    let name = head
        .trim()
        .trim_matches(|c: char| c == '"' || c == '\'' || c == '`' || c == '*')
        .trim_end_matches(['.', ',', ';', ':', '!'])
        .to_ascii_lowercase();
    let valid = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
    valid.then(|| ToolCall {
        name,
        args: args.to_owned(),
    })
}

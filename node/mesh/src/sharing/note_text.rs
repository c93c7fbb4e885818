//! Mentions (`@name`) and hashtags (`#topic`) parsed from a note's text when
//! the note is written, so they are stored (and signed into the item) once
//! instead of being re-derived by every reader.
//!
//! Rules: a marker counts at the start of the text or after a character that
//! cannot be part of a word (so `bob@example.org` and `a#b` are neither);
//! the name is the run of letters, digits, `_`, `-` and `.` after it, with
//! trailing `.` and `-` dropped (sentence punctuation). Hashtags are
//! lower-cased, mentions kept as written (peer ids are case-sensitive).
//! Repeats are dropped; at most `MAX_LIST_ITEMS` of each are kept, and names
//! longer than `MAX_NAME_LEN` bytes are skipped, so a parsed note always
//! fits the item limits.
//!
//! A mention of a friend's local name (`@anna`, any case) is stored as that
//! friend's peer id ([`resolve_mentions`]), so the signed item says who is
//! meant without carrying the name, which never leaves this node.

use porfiry_protocol::limits::{MAX_LIST_ITEMS, MAX_NAME_LEN};

/// What a note's text mentions and tags.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    /// `@name`s, without the `@`, in order of first appearance.
    pub mentions: Vec<String>,
    /// `#tag`s, without the `#`, lower-cased, in order of first appearance.
    pub hashtags: Vec<String>,
}

/// Parses the mentions and hashtags of `text`.
pub fn parse(text: &str) -> Parsed {
    let mut out = Parsed::default();
    let mut prev: Option<char> = None;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let boundary = prev.is_none_or(|p| !is_name_char(p));
        if boundary && (c == '@' || c == '#') {
            let rest = &text[i + c.len_utf8()..];
            let end = rest
                .char_indices()
                .find(|(_, ch)| !is_name_char(*ch))
                .map_or(rest.len(), |(j, _)| j);
            let name = rest[..end].trim_end_matches(['.', '-']);
            if !name.is_empty() {
                if c == '@' {
                    push(&mut out.mentions, name.to_owned());
                } else {
                    push(&mut out.hashtags, name.to_lowercase());
                }
            }
            // Skip the name so `#a#b` does not yield `b`.
            while chars
                .peek()
                .is_some_and(|(j, _)| *j < i + c.len_utf8() + end)
            {
                chars.next();
            }
            prev = Some('x');
            continue;
        }
        prev = Some(c);
    }
    out
}

/// Replaces each mention that is a friend's name (ignoring case) by that
/// friend's peer id; `friends` holds `(name, peer id)` of named friends.
/// Other mentions stay as written; a friend mentioned twice (by name and
/// by id) is kept once.
pub fn resolve_mentions(mentions: Vec<String>, friends: &[(String, String)]) -> Vec<String> {
    let mut out = Vec::with_capacity(mentions.len());
    for m in mentions {
        let id = friends
            .iter()
            .find(|(name, _)| porfiry_storage::same_name(name, &m))
            .map_or(m, |(_, peer)| peer.clone());
        if !out.contains(&id) {
            out.push(id);
        }
    }
    out
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '-' || c == '.'
}

fn push(list: &mut Vec<String>, name: String) {
    if list.len() < MAX_LIST_ITEMS && name.len() <= MAX_NAME_LEN && !list.contains(&name) {
        list.push(name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> (Vec<&'static str>, Vec<&'static str>) {
        let r = parse(text);
        let leak = |v: Vec<String>| -> Vec<&'static str> {
            v.into_iter()
                .map(|s| &*Box::leak(s.into_boxed_str()))
                .collect()
        };
        (leak(r.mentions), leak(r.hashtags))
    }

    #[test]
    fn finds_mentions_and_hashtags_with_punctuation_trimmed() {
        let (m, h) = p("@alice meet #Rust and #chess-club. cc @12D3KooWabc, #rust again");
        assert_eq!(m, ["alice", "12D3KooWabc"]);
        assert_eq!(h, ["rust", "chess-club"]);
    }

    #[test]
    fn emails_mid_word_markers_and_bare_markers_are_not_names() {
        let (m, h) = p("write bob@example.org or a#b; lone # and @ and #. stay");
        assert!(m.is_empty(), "{m:?}");
        assert!(h.is_empty(), "{h:?}");
    }

    #[test]
    fn adjacent_markers_and_unicode_words() {
        let (m, h) = p("#a#b (@мария) «#привет»");
        assert_eq!(h, ["a", "привет"]);
        assert_eq!(m, ["мария"]);
    }

    #[test]
    fn friend_names_become_peer_ids_and_others_stay() {
        let friends = vec![
            ("Anna".to_owned(), "12D3KooWAnna".to_owned()),
            ("мария".to_owned(), "12D3KooWMaria".to_owned()),
        ];
        let m = parse("@anna, @Мария and @bob; again @12D3KooWAnna @ANNA").mentions;
        assert_eq!(
            resolve_mentions(m, &friends),
            ["12D3KooWAnna", "12D3KooWMaria", "bob"]
        );
        assert!(resolve_mentions(Vec::new(), &friends).is_empty());
    }

    #[test]
    fn caps_count_and_length_to_the_item_limits() {
        let many: String = (0..100).map(|i| format!("#t{i} ")).collect();
        assert_eq!(parse(&many).hashtags.len(), MAX_LIST_ITEMS);
        let long = format!("#{} #ok", "x".repeat(MAX_NAME_LEN + 1));
        assert_eq!(parse(&long).hashtags, ["ok"]);
    }
}

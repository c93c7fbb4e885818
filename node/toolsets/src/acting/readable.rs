//! What a small model can read of a fetched page: a feed (RSS, Atom, JSON
//! Feed, parsed by `feed-rs`) as one line per entry, newest first; HTML as
//! its visible words (scripts, styles and tags dropped, the common entities
//! decoded); anything else as text. A full HTML engine would add a megabyte
//! to a phone's binary for what a model needs: the words.

/// Entries of a feed shown: enough for something new, short enough for a
/// small model's context.
pub const MAX_FEED_ENTRIES: usize = 10;

/// Characters of an entry's summary shown after its title.
pub const ENTRY_SUMMARY_CHARS: usize = 200;

/// The readable text of `body`, served as `content_type`.
pub fn readable(content_type: Option<&str>, body: &[u8]) -> String {
    let ct = content_type.unwrap_or("").to_ascii_lowercase();
    let head = String::from_utf8_lossy(&body[..body.len().min(512)]).to_ascii_lowercase();
    let looks_feed = ct.contains("rss")
        || ct.contains("atom")
        || ct.contains("feed+json")
        || head.contains("<rss")
        || head.contains("<feed")
        || (ct.contains("xml") && !head.contains("<html"));
    if looks_feed && let Some(lines) = feed_lines(body) {
        return lines;
    }
    let text = String::from_utf8_lossy(body);
    if ct.contains("html")
        || head.trim_start().starts_with("<!doctype html")
        || head.contains("<html")
    {
        html_text(&text)
    } else {
        collapse(&text)
    }
}

/// A feed's title and its newest entries, one per line; `None` when the
/// body is not a feed.
fn feed_lines(body: &[u8]) -> Option<String> {
    let feed = feed_rs::parser::parse(body).ok()?;
    let mut entries = feed.entries;
    entries.sort_by_key(|e| std::cmp::Reverse(e.published.or(e.updated)));
    let mut out = Vec::new();
    if let Some(t) = feed.title {
        out.push(collapse(&t.content));
    }
    for e in entries.iter().take(MAX_FEED_ENTRIES) {
        let title = e
            .title
            .as_ref()
            .map(|t| collapse(&t.content))
            .unwrap_or_default();
        let date = e
            .published
            .or(e.updated)
            .map(|d| d.format("%Y-%m-%d").to_string());
        let link = e.links.first().map(|l| l.href.clone());
        let summary = e
            .summary
            .as_ref()
            .map(|s| clip(&html_text(&s.content), ENTRY_SUMMARY_CHARS));
        let mut line = format!("- {title}");
        if let Some(d) = date {
            line.push_str(&format!(" ({d})"));
        }
        if let Some(l) = link {
            line.push_str(&format!(" {l}"));
        }
        if let Some(s) = summary.filter(|s| !s.is_empty()) {
            line.push_str(&format!(": {s}"));
        }
        out.push(line);
    }
    if entries.len() > MAX_FEED_ENTRIES {
        out.push(format!("(+{} older)", entries.len() - MAX_FEED_ENTRIES));
    }
    Some(out.join("\n"))
}

/// The visible words of HTML.
fn html_text(html: &str) -> String {
    let mut out = String::with_capacity(html.len() / 2);
    let mut rest = html;
    while let Some(start) = rest.find('<') {
        out.push_str(&rest[..start]);
        rest = &rest[start..];
        let lower: String = rest
            .chars()
            .take(8)
            .collect::<String>()
            .to_ascii_lowercase();
        let skip_to = if lower.starts_with("<script") {
            Some("</script")
        } else if lower.starts_with("<style") {
            Some("</style")
        } else if lower.starts_with("<!--") {
            Some("-->")
        } else {
            None
        };
        if let Some(end_tag) = skip_to {
            match find_ci(rest, end_tag) {
                Some(i) => rest = &rest[i + end_tag.len()..],
                None => rest = "",
            }
        }
        match rest.find('>') {
            Some(i) => {
                out.push(' ');
                rest = &rest[i + 1..];
            }
            None => rest = "",
        }
    }
    out.push_str(rest);
    collapse(&decode_entities(&out))
}

/// Where `needle` (lower-case ASCII) starts in `hay`, ignoring ASCII case.
fn find_ci(hay: &str, needle: &str) -> Option<usize> {
    hay.to_ascii_lowercase().find(needle)
}

/// The entities pages use most; others stay as written.
fn decode_entities(s: &str) -> String {
    s.replace("&nbsp;", " ")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// Runs of whitespace as one space, blank lines dropped, lines kept.
fn collapse(s: &str) -> String {
    s.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(max).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const RSS: &str = r#"<?xml version="1.0"?>
<rss version="2.0"><channel><title>Village news</title>
<item><title>Old fair</title><link>http://x/1</link><pubDate>Mon, 01 Jan 2024 10:00:00 GMT</pubDate></item>
<item><title>New bridge &amp; road</title><link>http://x/2</link><pubDate>Tue, 02 Jan 2024 10:00:00 GMT</pubDate>
<description>&lt;p&gt;The bridge opens &lt;b&gt;today&lt;/b&gt;.&lt;/p&gt;</description></item>
</channel></rss>"#;

    #[test]
    fn a_feed_reads_as_its_title_and_entries_newest_first() {
        assert_eq!(
            readable(Some("application/rss+xml"), RSS.as_bytes()),
            "Village news\n- New bridge & road (2024-01-02) http://x/2: The bridge opens today .\n- Old fair (2024-01-01) http://x/1"
        );
        // Served as text/xml, or with no type at all, it is still a feed.
        assert!(readable(None, RSS.as_bytes()).starts_with("Village news\n- New bridge"));
    }

    #[test]
    fn an_atom_feed_reads_too_and_long_feeds_are_cut() {
        let entries: String = (0..15)
            .map(|i| {
                format!(
                    "<entry><title>E{i}</title><id>urn:{i}</id><updated>2024-01-{:02}T00:00:00Z</updated></entry>",
                    i + 1
                )
            })
            .collect();
        let atom = format!(
            r#"<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>A</title><id>urn:a</id><updated>2024-01-20T00:00:00Z</updated>{entries}</feed>"#
        );
        let text = readable(Some("application/atom+xml"), atom.as_bytes());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "A");
        assert_eq!(lines[1], "- E14 (2024-01-15)");
        assert_eq!(lines.len(), 1 + MAX_FEED_ENTRIES + 1);
        assert_eq!(lines.last().copied(), Some("(+5 older)"));
    }

    #[test]
    fn html_reads_as_its_visible_words() {
        let html = "<!DOCTYPE html><html><head><title>T</title><style>p{color:red}</style>\
            <script>var x = '<b>';</script></head><body><!-- hidden --><h1>Hello&nbsp;there</h1>\n\n\
            <p>Fish &amp; chips</p></body></html>";
        assert_eq!(
            readable(Some("text/html; charset=utf-8"), html.as_bytes()),
            "T Hello there\nFish & chips"
        );
    }

    #[test]
    fn other_text_is_kept_and_broken_markup_does_not_hang() {
        assert_eq!(readable(Some("text/plain"), b"a  b\n\n c"), "a b\nc");
        assert_eq!(
            readable(Some("text/html"), b"<p>open <script>never closed"),
            "open"
        );
        assert_eq!(readable(Some("text/html"), b"x <unclosed"), "x");
        // Bytes that are not UTF-8 are replaced, not refused.
        assert_eq!(readable(None, b"caf\xe9"), "caf\u{fffd}");
        // Something that says it is a feed but is not reads as text.
        assert_eq!(
            readable(Some("application/rss+xml"), b"not a feed"),
            "not a feed"
        );
    }
}

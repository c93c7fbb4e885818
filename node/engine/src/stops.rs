//! A request's stop texts ([`ModelRequest::stop`]) on the engine's own
//! output: the answer ends where the first stop text starts, and the stop
//! text is not part of it. While the text so far ends with the start of a
//! stop text, that end is held back (it may yet become the stop text), so
//! nothing of a stop text is ever streamed.
//!
//! [`ModelRequest::stop`]: porfiry_skills::ModelRequest::stop

/// Watches streamed text for stop texts.
#[derive(Debug, Default)]
pub(crate) struct Stops {
    stops: Vec<String>,
    held: String,
}

/// What one piece of text gave.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Scanned {
    /// Text now safe to send.
    pub(crate) text: String,
    /// A stop text was reached: the answer ends with `text`.
    pub(crate) stopped: bool,
}

impl Stops {
    /// Watches for `stops` (empty ones are ignored).
    pub(crate) fn new(stops: &[String]) -> Self {
        Self {
            stops: stops.iter().filter(|s| !s.is_empty()).cloned().collect(),
            held: String::new(),
        }
    }

    /// Adds `text` to what was held back; returns what may be sent now.
    pub(crate) fn push(&mut self, text: &str) -> Scanned {
        self.held.push_str(text);
        if let Some(at) = self.stops.iter().filter_map(|s| self.held.find(s)).min() {
            self.held.truncate(at);
            return Scanned {
                text: std::mem::take(&mut self.held),
                stopped: true,
            };
        }
        let keep = self.partial_stop_len();
        let send = self.held.len() - keep;
        let rest = self.held.split_off(send);
        Scanned {
            text: std::mem::replace(&mut self.held, rest),
            stopped: false,
        }
    }

    /// The text held back at the end of the answer (it never became a stop).
    pub(crate) fn finish(self) -> String {
        self.held
    }

    /// The length of the longest end of `held` that starts a stop text.
    fn partial_stop_len(&self) -> usize {
        let held = &self.held;
        let longest = self.stops.iter().map(String::len).max().unwrap_or(0);
        (1..longest.min(held.len() + 1))
            .rev()
            .find(|&k| {
                let start = held.len() - k;
                held.is_char_boundary(start)
                    && self.stops.iter().any(|s| s.starts_with(&held[start..]))
            })
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(stops: &[&str], pieces: &[&str]) -> (Vec<String>, bool, String) {
        let stops: Vec<String> = stops.iter().map(|s| (*s).to_owned()).collect();
        let mut watcher = Stops::new(&stops);
        let mut sent = Vec::new();
        for piece in pieces {
            let scanned = watcher.push(piece);
            sent.push(scanned.text);
            if scanned.stopped {
                return (sent, true, String::new());
            }
        }
        (sent, false, watcher.finish())
    }

    #[test]
    fn the_answer_ends_where_a_stop_text_starts_across_pieces() {
        let (sent, stopped, _) = scan(
            &["TOOL_RESULT"],
            &["TOOL_CALL: x\n", "TOOL_", "RES", "ULT y: z"],
        );
        assert!(stopped);
        assert_eq!(sent, ["TOOL_CALL: x\n", "", "", ""]);
        assert_eq!(sent.concat(), "TOOL_CALL: x\n");
    }

    #[test]
    fn a_held_start_that_does_not_become_a_stop_is_sent_later() {
        let (sent, stopped, rest) = scan(&["# End"], &["a #", " E", "xit"]);
        assert!(!stopped);
        assert_eq!(sent, ["a ", "", "# Exit"]);
        assert_eq!(rest, "");
        let (sent, stopped, rest) = scan(&["# End"], &["a #"]);
        assert_eq!(
            (sent.concat(), stopped, rest.as_str()),
            ("a ".into(), false, "#")
        );
    }

    #[test]
    fn the_first_of_several_stops_wins_and_none_changes_nothing() {
        let (sent, stopped, _) = scan(&["bb", "a"], &["xxbbya"]);
        assert_eq!((sent.concat(), stopped), ("xx".into(), true));
        let (sent, stopped, rest) = scan(&[], &["any", " text"]);
        assert_eq!(
            (sent.concat(), stopped, rest.as_str()),
            ("any text".into(), false, "")
        );
        let (sent, _, _) = scan(&[""], &["kept"]);
        assert_eq!(sent.concat(), "kept", "an empty stop text is ignored");
    }

    #[test]
    fn multibyte_text_is_held_on_character_boundaries() {
        let (sent, stopped, rest) = scan(&["ёж"], &["мёд ё", "лка"]);
        assert!(!stopped);
        assert_eq!(sent, ["мёд ", "ёлка"]);
        assert_eq!(rest, "");
    }
}

//! The token budget of the core's prompt: a conservative token estimate
//! that needs no tokenizer ([`estimate_tokens`]), the room left for the
//! answer, and the fitting of blocks of whole records into what is left
//! (`fit`).
//!
//! Fitting works in three passes so that no block starves the others: first
//! every block takes its newest record (in priority order, the caller's
//! slice order), then its newest records up to its share of the room, then
//! what is left goes to older records block by block in priority order. A block always keeps a contiguous newest run of
//! whole records, so what is cut is always its oldest. Records are rendered
//! lazily from the newest back and rendering stops at the first that does
//! not fit, so a block of 100,000 records costs what is kept, not what
//! exists.

/// The default context of the core's model in tokens (`--context-tokens`):
/// phone models run 1–4K contexts; 3K fits most of them.
pub const DEFAULT_CONTEXT_TOKENS: usize = 3_072;

/// The answer gets this share of the context (1/4): a tick's reply is a few
/// sentences of thought and a handful of commands.
pub const ANSWER_SHARE_DIVISOR: usize = 4;

/// ...but never more than this many tokens: past it a bigger context goes to
/// the prompt, where the records are.
pub const MAX_ANSWER_RESERVE_TOKENS: usize = 1_024;

/// Tokens the chat template adds around the two messages (role markers,
/// start and end tokens: 4 per message in the common templates, doubled for
/// safety).
pub const MESSAGE_OVERHEAD_TOKENS: usize = 16;

/// How many tokens of a `budget_tokens` context are kept for the answer.
pub fn answer_reserve(budget_tokens: usize) -> usize {
    (budget_tokens / ANSWER_SHARE_DIVISOR).min(MAX_ANSWER_RESERVE_TOKENS)
}

/// The most tokens the prompt (both messages and their overhead) may take.
pub fn prompt_limit(budget_tokens: usize) -> usize {
    budget_tokens - answer_reserve(budget_tokens)
}

/// A token count that is not below what the usual tokenizers produce (it is
/// checked against tiktoken's cl100k in the tests), without loading one.
/// Text is read in runs:
/// - a word of lower-case ASCII letters (or capitalised): 1 token + 1 per 6
///   letters after the first (common words are one token, long ones split);
/// - an all-caps word: 1 + 1 per 2 letters (acronyms split often);
/// - a run of ASCII letters and digits that mixes them, or mixes cases
///   inside (ids, base58 keys, `gemma3`): 1 + 4 per 5 characters;
/// - a run of digits: 1 per 3 digits (cl100k splits numbers so);
/// - a word of another script's letters (Cyrillic): 1 + 3 per 5 letters
///   (cl100k averages about 1 per 2 on Russian, with long words up to 2 per
///   3, and small models' vocabularies hold fewer Cyrillic merges);
/// - ASCII punctuation: 1 each; a newline: 1; spaces: free after the first
///   (they merge into the next word), a run of 2+ costs 1 per 4;
/// - any other character: its UTF-8 length (the byte-level worst case).
///
/// Runs end at spaces and punctuation, so the estimate of lines joined by
/// newlines is the sum of theirs plus the newlines: a budget kept line by
/// line holds for the whole.
pub fn estimate_tokens(text: &str) -> usize {
    let mut tokens = 0;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_alphanumeric() {
            tokens += ascii_run(c, &mut chars);
        } else if c == ' ' {
            let mut n: usize = 1;
            while chars.next_if_eq(&' ').is_some() {
                n += 1;
            }
            if n > 1 {
                tokens += n.div_ceil(4);
            }
        } else if c.is_ascii() {
            // Punctuation, newline, tab, control characters.
            tokens += 1;
        } else if c.is_alphabetic() {
            let mut n: usize = 1;
            while chars
                .next_if(|next| !next.is_ascii() && next.is_alphabetic())
                .is_some()
            {
                n += 1;
            }
            tokens += 1 + n * 3 / 5;
        } else {
            tokens += c.len_utf8();
        }
    }
    tokens
}

/// The tokens of a run of ASCII letters and digits starting with `first`.
fn ascii_run(first: char, chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> usize {
    let mut n: usize = 1;
    let (mut digits, mut letters) = (first.is_ascii_digit(), first.is_ascii_alphabetic());
    let (mut inner_upper, mut inner_lower) = (false, false);
    while let Some(c) = chars.next_if(char::is_ascii_alphanumeric) {
        n += 1;
        digits |= c.is_ascii_digit();
        letters |= c.is_ascii_alphabetic();
        inner_upper |= c.is_ascii_uppercase();
        inner_lower |= c.is_ascii_lowercase();
    }
    if !letters {
        n.div_ceil(3)
    } else if digits || (inner_upper && inner_lower) {
        1 + n * 4 / 5
    } else if inner_upper || (n == 1 && first.is_ascii_uppercase()) {
        1 + n / 2
    } else {
        1 + (n - 1) / 6
    }
}

/// What one rendered record costs in the prompt: its estimate and one
/// token for the newline or separator that joins it to the next.
pub fn record_cost(line: &str) -> usize {
    estimate_tokens(line) + 1
}

/// One block of whole records to fit.
pub(crate) struct Block<'a> {
    /// How many records exist.
    pub total: usize,
    /// Its guaranteed share of the room in the first pass, in percent.
    pub share_percent: usize,
    /// Renders record `i` (0 = oldest).
    render: Box<dyn Fn(usize) -> String + 'a>,
    /// The kept records, newest first.
    kept: Vec<String>,
    /// The next older record, rendered but not yet fitted, with its cost.
    pending: Option<(String, usize)>,
    /// Tokens the kept records cost.
    pub used: usize,
}

impl<'a> Block<'a> {
    /// A block of `total` records with a share of `share_percent` of the room.
    pub fn new(total: usize, share_percent: usize, render: impl Fn(usize) -> String + 'a) -> Self {
        Self {
            total,
            share_percent,
            render: Box::new(render),
            kept: Vec::new(),
            pending: None,
            used: 0,
        }
    }

    /// How many records were cut.
    #[cfg(test)]
    pub fn cut(&self) -> usize {
        self.total - self.kept.len()
    }

    /// The kept records, oldest first.
    pub fn into_kept(self) -> Vec<String> {
        let mut kept = self.kept;
        kept.reverse();
        kept
    }

    /// Takes the newest record if it fits in `allowance` and nothing is
    /// kept yet. Returns the tokens taken.
    pub fn take_newest(&mut self, allowance: usize) -> usize {
        if !self.kept.is_empty() || self.total == 0 {
            return 0;
        }
        // With nothing kept, a pending record is the newest: an earlier
        // `take_within` rendered it and it did not fit then.
        let (line, cost) = self.pending.take().unwrap_or_else(|| {
            let line = (self.render)(self.total - 1);
            let cost = record_cost(&line);
            (line, cost)
        });
        if cost > allowance {
            self.pending = Some((line, cost));
            return 0;
        }
        self.kept.push(line);
        self.used += cost;
        cost
    }

    /// Takes older records while they fit in `allowance` more tokens; stops
    /// at the first that does not (whole records, contiguous). Returns the
    /// tokens taken.
    pub fn take_within(&mut self, allowance: usize) -> usize {
        let mut taken = 0;
        while self.kept.len() < self.total {
            let (line, cost) = match self.pending.take() {
                Some(p) => p,
                None => {
                    let index = self.total - 1 - self.kept.len();
                    let line = (self.render)(index);
                    let cost = record_cost(&line);
                    (line, cost)
                }
            };
            if taken + cost > allowance {
                self.pending = Some((line, cost));
                break;
            }
            taken += cost;
            self.kept.push(line);
        }
        self.used += taken;
        taken
    }
}

/// Fits `blocks` (in priority order, most important first) into `room`
/// tokens: the newest record of each block by priority, then each block up
/// to its share, then the rest by priority. Linear in the records kept.
pub(crate) fn fit(blocks: &mut [Block<'_>], room: usize) {
    let mut left = room;
    for block in blocks.iter_mut() {
        left -= block.take_newest(left);
    }
    for block in blocks.iter_mut() {
        let share = room * block.share_percent / 100;
        left -= block.take_within(share.saturating_sub(block.used).min(left));
    }
    for block in blocks.iter_mut() {
        left -= block.take_within(left);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answer_keeps_a_quarter_up_to_its_cap() {
        assert_eq!(answer_reserve(DEFAULT_CONTEXT_TOKENS), 768);
        assert_eq!(prompt_limit(DEFAULT_CONTEXT_TOKENS), 2_304);
        assert_eq!(answer_reserve(32_768), MAX_ANSWER_RESERVE_TOKENS);
        assert_eq!(prompt_limit(0), 0);
    }

    #[test]
    fn the_estimate_counts_each_kind_of_run() {
        assert_eq!(estimate_tokens(""), 0);
        assert_eq!(estimate_tokens("the"), 1);
        assert_eq!(estimate_tokens("update"), 1);
        assert_eq!(estimate_tokens("Cognitive"), 2);
        assert_eq!(estimate_tokens("internationalization"), 4);
        assert_eq!(estimate_tokens("HMP"), 2, "acronyms");
        assert_eq!(estimate_tokens("KooWabc"), 6, "mixed case inside: ids");
        assert_eq!(estimate_tokens("12D3KooWRBy97kRLs7SNb"), 17);
        assert_eq!(estimate_tokens("gemma3"), 5, "letters and digits: ids");
        assert_eq!(estimate_tokens("2026"), 2);
        assert_eq!(estimate_tokens("a b"), 2, "a single space is free");
        assert_eq!(estimate_tokens("a    b"), 3);
        assert_eq!(estimate_tokens("ядро"), 3);
        assert_eq!(estimate_tokens("семантического"), 9);
        assert_eq!(estimate_tokens("#1:\n"), 4);
        assert_eq!(estimate_tokens("—"), 3);
        assert_eq!(estimate_tokens("🙂"), 4);
    }

    #[test]
    fn a_record_that_did_not_fit_once_is_taken_once_and_the_next_is_the_older() {
        let lines = ["old one", "the newest, a much longer record than the room"];
        let mut block = Block::new(lines.len(), 10, |i| lines[i].to_owned());
        assert_eq!(block.take_within(2), 0, "the newest does not fit");
        assert!(block.take_newest(1_000) > 0);
        assert!(block.take_within(1_000) > 0);
        assert_eq!(block.into_kept(), lines, "each once, oldest first");
    }

    #[test]
    fn the_estimate_is_subadditive() {
        let pieces = ["Trust ", "grows", " 12", "34 из", "вестных", "\n\n", "  x"];
        let whole: String = pieces.concat();
        let sum: usize = pieces.iter().map(|p| estimate_tokens(p)).sum();
        assert!(estimate_tokens(&whole) <= sum);
    }

    fn lines(n: usize) -> impl Fn(usize) -> String {
        move |i| {
            assert!(i < n);
            format!("record {i} z")
        }
    }

    #[test]
    fn blocks_keep_their_newest_whole_records_within_shares_then_by_priority() {
        // "record 7 z" costs 1 + 1 ("7") + 1 ("z") + 1 (newline) = 4 tokens.
        assert_eq!(record_cost("record 7 z"), 4);
        let mut blocks = vec![Block::new(10, 50, lines(10)), Block::new(10, 50, lines(10))];
        fit(&mut blocks, 20);
        // The newest of each (4 each), then shares: 10 tokens each → 2
        // records (8) each; the 4 left over go to the first block.
        assert_eq!(blocks[0].used, 12);
        assert_eq!(blocks[0].cut(), 7);
        assert_eq!(blocks[1].cut(), 8);
        let mut blocks = vec![Block::new(10, 50, lines(10)), Block::new(10, 50, lines(10))];
        fit(&mut blocks, 24);
        // Shares 12 → 3 records each, nothing left for the second pass.
        let first = blocks.remove(0);
        assert_eq!(
            first.into_kept(),
            ["record 7 z", "record 8 z", "record 9 z"]
        );
    }

    #[test]
    fn leftover_room_goes_to_the_first_block_in_priority_order() {
        let mut blocks = vec![
            Block::new(100, 10, lines(100)),
            Block::new(1, 80, lines(1)),
            Block::new(100, 10, lines(100)),
        ];
        fit(&mut blocks, 100);
        // The newest of each, then shares: 10 → 2 records (8); 80 → the
        // one record (4); 10 → 2.
        // Left: 100 − 20 = 80 → 20 more records to the first block.
        assert_eq!(blocks[0].cut(), 100 - 22);
        assert_eq!(blocks[1].cut(), 0);
        assert_eq!(blocks[2].cut(), 98);
    }

    #[test]
    fn an_empty_room_keeps_nothing_and_renders_one_record_at_most() {
        let mut blocks = vec![Block::new(5, 100, lines(5))];
        fit(&mut blocks, 0);
        assert_eq!(blocks[0].cut(), 5);
        assert!(blocks.remove(0).into_kept().is_empty());
    }
}

//! Free text as GBNF: any text that never holds one of a few words, in any
//! letter case, with extra alternatives offered at the start of every line.
//!
//! The chat's answer may not hold `tool_call` (the parser would read it as
//! a garbled call); the core's thinking may not hold the words that open a
//! commands block or a code fence either. A GBNF rule cannot say "not this
//! substring", so the text is the automaton that recognises texts free of
//! the words (Aho–Corasick: one rule per state, a state being the longest
//! start of a word the text now ends with); a character that would complete
//! a word has no transition. Each state may end the text. A newline leads to
//! the line-start rule, which offers the hooks (a `TOOL_CALL` line, a
//! commands block) besides more text.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::grammar::gbnf::{Member, Rules, class};

/// Free text avoiding `words`, with `hooks` at each line's start.
#[derive(Debug, Clone)]
pub struct Prose<'a> {
    /// The start rule's name (`root` for a whole reply).
    pub start: &'a str,
    /// The other rules' names start with it (`prose` → `prose-0`, `prose-line`).
    pub name: &'a str,
    /// Words the text never holds, matched without regard to case.
    pub avoid: &'a [&'a str],
    /// GBNF alternatives offered at the start of the text and of each line.
    pub hooks: Vec<String>,
}

/// One state of the automaton.
#[derive(Debug, Default)]
struct Node {
    next: BTreeMap<char, usize>,
    fail: usize,
    /// A word ends here (or at a suffix of here): the text may not reach it.
    forbidden: bool,
}

impl Prose<'_> {
    /// Adds the rules; returns the name of the start rule, which admits a
    /// hook or a text that does not start with a blank (never nothing).
    pub fn add(&self, rules: &mut Rules) -> String {
        let nodes = automaton(self.avoid);
        let symbols: BTreeSet<char> = nodes.iter().flat_map(|n| n.next.keys().copied()).collect();
        let start = self.start.to_owned();
        let line = format!("{}-line", self.name);
        let mut start_alts = self.hooks.clone();
        start_alts.extend(self.transitions(&nodes, &symbols, 0, true));
        rules.add(start.clone(), start_alts.join(" | "));
        let mut line_alts = self.hooks.clone();
        line_alts.push(self.state(0));
        rules.add(line.clone(), line_alts.join(" | "));
        for (id, node) in nodes.iter().enumerate() {
            if node.forbidden {
                continue;
            }
            let mut alts = vec![format!("\"\\n\" {line}")];
            alts.extend(self.transitions(&nodes, &symbols, id, false));
            rules.add(self.state(id), format!("( {} )?", alts.join(" | ")));
        }
        start
    }

    fn state(&self, id: usize) -> String {
        format!("{}-{id}", self.name)
    }

    /// From state `id`: one alternative per state a word's letter leads to
    /// (none to a forbidden one), and one for every other character, back
    /// to state 0. At the text's start (`first`), no blank and no newline.
    fn transitions(
        &self,
        nodes: &[Node],
        symbols: &BTreeSet<char>,
        id: usize,
        first: bool,
    ) -> Vec<String> {
        let mut by_target: BTreeMap<usize, Vec<Member>> = BTreeMap::new();
        let mut other = Vec::new();
        for &c in symbols {
            let target = step(nodes, id, c);
            if target == 0 {
                continue;
            }
            other.extend(cased(c));
            if !nodes[target].forbidden {
                by_target.entry(target).or_default().extend(cased(c));
            }
        }
        other.push(if first {
            Member::Range('\0', ' ')
        } else {
            Member::Char('\n')
        });
        let mut alts = vec![format!("{} {}", class(&other, true), self.state(0))];
        for (target, members) in by_target {
            alts.push(format!("{} {}", class(&members, false), self.state(target)));
        }
        alts
    }
}

/// The character and its capital, when it has a one-character one.
fn cased(c: char) -> Vec<Member> {
    let mut upper = c.to_uppercase();
    match (upper.next(), upper.next()) {
        (Some(u), None) if u != c => vec![Member::Char(c), Member::Char(u)],
        _ => vec![Member::Char(c)],
    }
}

/// The trie of the lower-cased words with failure links (Aho–Corasick).
fn automaton(words: &[&str]) -> Vec<Node> {
    let mut nodes = vec![Node::default()];
    for word in words {
        let mut at = 0;
        for c in word.to_lowercase().chars() {
            at = match nodes[at].next.get(&c) {
                Some(&next) => next,
                None => {
                    nodes.push(Node::default());
                    let new = nodes.len() - 1;
                    nodes[at].next.insert(c, new);
                    new
                }
            };
        }
        if at != 0 {
            nodes[at].forbidden = true;
        }
    }
    let mut queue: VecDeque<usize> = nodes[0].next.values().copied().collect();
    while let Some(at) = queue.pop_front() {
        let edges: Vec<(char, usize)> = nodes[at].next.iter().map(|(&c, &n)| (c, n)).collect();
        for (c, child) in edges {
            let fail = step(&nodes, nodes[at].fail, c);
            nodes[child].fail = if fail == child { 0 } else { fail };
            let inherited = nodes[nodes[child].fail].forbidden;
            nodes[child].forbidden |= inherited;
            queue.push_back(child);
        }
    }
    nodes
}

/// The state after reading `c` in state `at`.
fn step(nodes: &[Node], mut at: usize, c: char) -> usize {
    loop {
        if let Some(&next) = nodes[at].next.get(&c) {
            return next;
        }
        if at == 0 {
            return 0;
        }
        at = nodes[at].fail;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the automaton reads `text` without reaching a word, the way
    /// the rules do.
    fn admits(words: &[&str], text: &str) -> bool {
        let nodes = automaton(words);
        let mut at = 0;
        for c in text.chars() {
            at = step(&nodes, at, c.to_lowercase().next().unwrap_or(c));
            if nodes[at].forbidden {
                return false;
            }
        }
        true
    }

    #[test]
    fn texts_holding_a_word_in_any_case_are_refused() {
        let words = ["tool_call", "```", "команды"];
        assert!(admits(
            &words,
            "It is noon. Tools, calls and tool-calls are fine."
        ));
        assert!(!admits(&words, "Sure! TOOL_CALL: get_current_time"));
        assert!(!admits(&words, "a Tool_Call b"));
        assert!(!admits(&words, "``` code"));
        assert!(admits(&words, "`` ` ``"));
        assert!(!admits(&words, "Мои КОМАНДЫ:"));
        assert!(admits(&words, "tool_cal tool_calx ttool_cal"));
        assert!(!admits(&words, "ttool_call"), "a word after a false start");
    }

    #[test]
    fn a_word_inside_another_is_found_through_the_failure_links() {
        assert!(!admits(&["abcd", "bc"], "xabc"));
        assert!(admits(&["abcd", "bce"], "abcx"));
    }

    #[test]
    fn the_rules_of_one_short_word() {
        let mut rules = Rules::new();
        let prose = Prose {
            start: "p-start",
            name: "p",
            avoid: &["ab"],
            hooks: vec!["hook".into()],
        };
        assert_eq!(prose.add(&mut rules), "p-start");
        assert_eq!(
            rules.render(),
            "p-start ::= hook | [^aA\\x00- ] p-0 | [aA] p-1\n\
             p-line ::= hook | p-0\n\
             p-0 ::= ( \"\\n\" p-line | [^aA\\n] p-0 | [aA] p-1 )?\n\
             p-1 ::= ( \"\\n\" p-line | [^aAbB\\n] p-0 | [aA] p-1 )?\n"
        );
    }
}

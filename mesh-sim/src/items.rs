//! The items a scenario publishes: author, audience and time drawn from the
//! scenario's generator, each signed once, up front, by its author's key —
//! the run only moves the signed bytes.

use std::collections::BTreeSet;

use porfiry_protocol::{Audience, Body, NodeKey, Note, PayloadDraft, VerifiedItem, sign};
use rand::Rng;

use crate::clubs::SimClub;
use crate::error::SimError;
use crate::limits::EPOCH_MS;
use crate::scenario::ItemsSpec;

/// One item to publish.
#[derive(Debug, Clone)]
pub struct PlannedItem {
    /// Its position in the plan (publish order).
    pub index: usize,
    /// The node that publishes it.
    pub author: usize,
    /// When, in virtual ms from the start.
    pub at_ms: u64,
    /// Who may receive it.
    pub audience: Audience,
    /// The signed item.
    pub item: VerifiedItem,
    /// Nodes entitled to it, the author excluded.
    pub entitled: BTreeSet<usize>,
}

/// A group as the world holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// Its name.
    pub name: String,
    /// Its members.
    pub members: BTreeSet<usize>,
}

/// Draws when, by whom and for whom each item is published, then signs it.
/// `friends(author)` lists an author's friends (direct messages go to one
/// of them); `entitled(author, audience)` gives the nodes entitled to
/// receive it.
pub fn plan(
    spec: &ItemsSpec,
    keys: &[NodeKey],
    groups: &[Group],
    club: Option<&SimClub>,
    rng: &mut impl Rng,
    friends: impl Fn(usize) -> Vec<usize>,
    entitled: impl Fn(usize, &Audience) -> BTreeSet<usize>,
) -> Result<Vec<PlannedItem>, SimError> {
    let mix = &spec.audience;
    let total = mix.public + mix.friends + mix.group + mix.peer + mix.club;
    let anyone: Vec<usize> = (0..keys.len()).collect();
    let authors = if spec.authors.is_empty() {
        &anyone
    } else {
        &spec.authors
    };
    // Membership test for group authors: a set, not a scan of `authors`
    // (at 100,000 nodes a scan per member per group item took most of the
    // set-up).
    let is_author: BTreeSet<usize> = authors.iter().copied().collect();
    let mut drafts: Vec<(u64, usize, Audience)> = Vec::with_capacity(spec.count);
    for _ in 0..spec.count {
        let at_ms = rng.gen_range(spec.start_ms..=spec.end_ms);
        let pick = rng.gen_range(0.0..total);
        // Without direct messages the draws are exactly those of the
        // scenarios written before `peer` existed (same seed, same world).
        // Club items take the top of the range, so scenarios without them
        // draw exactly as before.
        let club_pick = club.filter(|_| pick >= total - mix.club && mix.club > 0.0);
        let (author, audience) = if let Some(c) = club_pick {
            let members: Vec<usize> = c.members.iter().copied().collect();
            (
                members[rng.gen_range(0..members.len())],
                Audience::Club(c.club.clone()),
            )
        } else if pick < mix.public || (mix.friends + mix.group + mix.peer) == 0.0 {
            (authors[rng.gen_range(0..authors.len())], Audience::Public)
        } else if pick < mix.public + mix.friends || (groups.is_empty() && mix.peer == 0.0) {
            (authors[rng.gen_range(0..authors.len())], Audience::Friends)
        } else if pick >= mix.public + mix.friends + mix.group || groups.is_empty() {
            let author = authors[rng.gen_range(0..authors.len())];
            let theirs = friends(author);
            if theirs.is_empty() {
                (author, Audience::Friends)
            } else {
                let to = theirs[rng.gen_range(0..theirs.len())];
                (author, Audience::Peer(keys[to].peer_id().to_string()))
            }
        } else {
            let g = &groups[rng.gen_range(0..groups.len())];
            let mut members: Vec<usize> = g
                .members
                .iter()
                .copied()
                .filter(|m| is_author.contains(m))
                .collect();
            if members.is_empty() {
                members = g.members.iter().copied().collect();
            }
            let author = members[rng.gen_range(0..members.len())];
            (author, Audience::Group(g.name.clone()))
        };
        drafts.push((at_ms, author, audience));
    }
    drafts.sort_by_key(|(at, _, _)| *at);
    drafts
        .into_iter()
        .enumerate()
        .map(|(index, (at_ms, author, audience))| {
            let draft = PayloadDraft {
                created_ms: EPOCH_MS + at_ms,
                audience: audience.clone(),
                // Club items travel as far as the club reaches.
                max_hops: match &audience {
                    Audience::Club(_) => porfiry_protocol::club::CLUB_MAX_HOPS,
                    _ => spec.max_hops,
                },
                expires_ms: None,
                replaces: None,
                body: Body::Note(Note::by_user(note_text(index, author, spec.text_bytes))),
            };
            let item =
                sign(&keys[author], &draft).map_err(|source| SimError::Sign { index, source })?;
            Ok(PlannedItem {
                index,
                author,
                at_ms,
                entitled: entitled(author, &audience),
                audience,
                item,
            })
        })
        .collect()
}

/// A note text of exactly `len` bytes that names the item and its author.
fn note_text(index: usize, author: usize, len: usize) -> String {
    let mut text = format!("item {index} by node {author}: ");
    let filler = b"the quick brown fox jumps over the lazy dog ";
    let mut i = 0;
    while text.len() < len {
        text.push(char::from(filler[i % filler.len()]));
        i += 1;
    }
    text.truncate(len);
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn note_text_has_the_asked_length() {
        assert_eq!(note_text(3, 1, 200).len(), 200);
        assert_eq!(note_text(3, 1, 5), "item ");
    }
}

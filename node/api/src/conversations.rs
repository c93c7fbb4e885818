//! Sessions for clients that name none (pure): the conversation is its own
//! key.
//!
//! Open WebUI and many SDK users send neither `user` nor
//! `X-Porfiry-Session`, but they resend the whole conversation every turn.
//! After each answered turn the node remembers a hash of the conversation
//! as it now stands — the scope, then every user message and answer the
//! client was shown, trimmed — under the session that answered it. The next
//! request's messages before its new one hash the same when the client went
//! on from there, and the same session answers: its active toolsets and its
//! tool results carry on. A regenerate or an edit of the last message goes
//! back to an earlier state, which was remembered too. A conversation the
//! node never saw (or forgot) gets a new session.
//!
//! The scope keeps clients apart: the request's `model` field, under the
//! node's one API token (every client of a node holds the same token, so
//! the token itself tells them apart no further). Two conversations with
//! the same messages so far are the same state; they share a session until
//! they differ.

use std::collections::{HashMap, VecDeque};

use sha2::{Digest, Sha256};

use crate::history::{Speaker, Turn};
use crate::limits::MAX_CONVERSATION_PREFIXES;

/// A conversation state's hash.
pub type StateKey = [u8; 32];

/// The hash of `turns` under `scope`.
pub fn state_key(scope: &str, turns: &[Turn]) -> StateKey {
    let mut hash = Sha256::new();
    hash.update((scope.len() as u64).to_be_bytes());
    hash.update(scope.as_bytes());
    for turn in turns {
        let text = turn.text.trim();
        hash.update([match turn.speaker {
            Speaker::User => b'u',
            Speaker::Assistant => b'a',
        }]);
        hash.update((text.len() as u64).to_be_bytes());
        hash.update(text.as_bytes());
    }
    hash.finalize().into()
}

/// Remembered conversation states → the session that reached them,
/// oldest dropped first at [`MAX_CONVERSATION_PREFIXES`].
#[derive(Debug, Default)]
pub struct Conversations {
    sessions: HashMap<StateKey, String>,
    order: VecDeque<StateKey>,
}

impl Conversations {
    /// Nothing remembered.
    pub fn new() -> Self {
        Self::default()
    }

    /// The session that reached `state`, if remembered.
    pub fn find(&self, state: &StateKey) -> Option<&str> {
        self.sessions.get(state).map(String::as_str)
    }

    /// Remembers that `session` reached `state`.
    pub fn remember(&mut self, state: StateKey, session: &str) {
        if self.sessions.insert(state, session.to_owned()).is_some() {
            self.order.retain(|k| *k != state);
        }
        self.order.push_back(state);
        while self.order.len() > MAX_CONVERSATION_PREFIXES {
            if let Some(oldest) = self.order.pop_front() {
                self.sessions.remove(&oldest);
            }
        }
    }

    /// States remembered.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.order.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_follows_texts_roles_and_scope_not_whitespace() {
        let a = [Turn::user("hi"), Turn::assistant("hello")];
        let spaced = [Turn::user(" hi\n"), Turn::assistant("hello ")];
        assert_eq!(state_key("porfiry", &a), state_key("porfiry", &spaced));
        assert_ne!(state_key("porfiry", &a), state_key("other", &a));
        let swapped = [Turn::assistant("hi"), Turn::user("hello")];
        assert_ne!(state_key("porfiry", &a), state_key("porfiry", &swapped));
        let joined = [Turn::user("hihello")];
        assert_ne!(state_key("porfiry", &a), state_key("porfiry", &joined));
        assert_ne!(state_key("p", &[]), state_key("p", &a[..1]));
    }

    #[test]
    fn a_state_finds_its_session_until_it_is_the_oldest_past_the_cap() {
        let mut c = Conversations::new();
        let first = state_key("s", &[Turn::user("q0")]);
        c.remember(first, "conv-0");
        assert_eq!(c.find(&first), Some("conv-0"));
        for i in 1..=MAX_CONVERSATION_PREFIXES {
            c.remember(state_key("s", &[Turn::user(format!("q{i}"))]), "conv-1");
        }
        assert_eq!(c.len(), MAX_CONVERSATION_PREFIXES);
        assert_eq!(c.find(&first), None);
        let second = state_key("s", &[Turn::user("q1")]);
        assert_eq!(c.find(&second), Some("conv-1"));
        // Remembered again: it moves to the back and survives the next one.
        c.remember(second, "conv-2");
        c.remember(state_key("s", &[Turn::user("new")]), "conv-3");
        assert_eq!(c.find(&second), Some("conv-2"));
        assert_eq!(c.len(), MAX_CONVERSATION_PREFIXES);
    }
}

//! Chat sessions kept in the node's database (`chat_messages`), so a
//! conversation comes back after [`crate::PorfiryNode::pause`] /
//! [`crate::PorfiryNode::resume`] and after the app is killed (seed 000 §8:
//! the history is the dialogue's memory and is never cleaned; toolset
//! activation is not kept, seed §5). A session's history is loaded before
//! its first turn in this process and written after each turn, answered or
//! not: only what was added since the last write, or the whole history when
//! it was rewritten.

use porfiry_mesh::node::NodeHandle;
use porfiry_skills::{ChatMessage, Role};

use crate::error::PorfiryError;

/// Messages kept per session, oldest dropped: months of daily conversation
/// (a turn is 2–6 messages), a few MB at most; the prompt shows only the
/// newest that fit anyway.
pub const MAX_KEPT_CHAT_MESSAGES: usize = 4_000;

/// Sessions kept, the least recently used dropped whole: an app's list of
/// conversations, with room; it bounds a buggy app that makes a session per
/// message.
pub const MAX_KEPT_CHAT_SESSIONS: usize = 256;

/// What of a session's history the database holds.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Saved {
    /// Messages of the history written.
    len: usize,
    /// The last of them, to tell an appended history from a rewritten one.
    last: Option<ChatMessage>,
}

/// How to bring the database in line with `history`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Write<'a> {
    /// Nothing new.
    Nothing,
    /// Append these.
    Append(&'a [ChatMessage]),
    /// The history was rewritten: replace what is kept with it.
    Replace(&'a [ChatMessage]),
}

impl Saved {
    /// What was loaded: `history` as the database holds it.
    pub(crate) fn of(history: &[ChatMessage]) -> Saved {
        Saved {
            len: history.len(),
            last: history.last().cloned(),
        }
    }

    /// The write that brings the database from `self` to `history`.
    pub(crate) fn plan<'a>(&self, history: &'a [ChatMessage]) -> Write<'a> {
        let appended = history.len() >= self.len
            && (self.len == 0 || history.get(self.len - 1) == self.last.as_ref());
        match (appended, history.len() == self.len) {
            (true, true) => Write::Nothing,
            (true, false) => Write::Append(&history[self.len..]),
            (false, _) => Write::Replace(history),
        }
    }
}

fn role_word(role: Role) -> &'static str {
    match role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

fn role_of(word: &str) -> Option<Role> {
    match word {
        "system" => Some(Role::System),
        "user" => Some(Role::User),
        "assistant" => Some(Role::Assistant),
        _ => None,
    }
}

fn internal(e: impl std::fmt::Display) -> PorfiryError {
    PorfiryError::Internal(e.to_string())
}

/// The kept history of `session`, oldest first.
pub(crate) async fn load(
    node: &NodeHandle,
    session: &str,
) -> Result<Vec<ChatMessage>, PorfiryError> {
    let name = session.to_owned();
    let lines = node
        .db()
        .read(move |s| s.chat_messages(&name, None))
        .await
        .map_err(internal)?
        .map_err(internal)?;
    Ok(lines
        .into_iter()
        .filter_map(|l| Some(ChatMessage::new(role_of(&l.role)?, l.content)))
        .collect())
}

/// Writes `history` of `session` as `saved` says it must be; returns what
/// the database holds after.
pub(crate) async fn save(
    node: &NodeHandle,
    session: &str,
    saved: &Saved,
    history: &[ChatMessage],
    now_ms: u64,
) -> Result<Saved, PorfiryError> {
    let (replace, messages) = match saved.plan(history) {
        Write::Nothing => return Ok(saved.clone()),
        Write::Append(new) => (false, new),
        Write::Replace(all) => (true, all),
    };
    let name = session.to_owned();
    let lines: Vec<(&'static str, String)> = messages
        .iter()
        .map(|m| (role_word(m.role), m.content.clone()))
        .collect();
    node.db()
        .write(move |s| {
            let lines: Vec<(&str, &str)> = lines.iter().map(|(r, c)| (*r, c.as_str())).collect();
            if replace {
                s.replace_chat_messages(
                    &name,
                    &lines,
                    now_ms,
                    MAX_KEPT_CHAT_MESSAGES,
                    MAX_KEPT_CHAT_SESSIONS,
                )
            } else {
                s.append_chat_messages(
                    &name,
                    &lines,
                    now_ms,
                    MAX_KEPT_CHAT_MESSAGES,
                    MAX_KEPT_CHAT_SESSIONS,
                )
            }
        })
        .await
        .map_err(internal)?
        .map_err(internal)?;
    Ok(Saved::of(history))
}

/// Now, in unix milliseconds (the bindings' edge reads the system clock).
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn history(n: usize) -> Vec<ChatMessage> {
        (0..n).map(|i| ChatMessage::user(format!("m{i}"))).collect()
    }

    #[test]
    fn an_appended_history_writes_only_its_new_messages() {
        let h = history(3);
        assert_eq!(Saved::default().plan(&h), Write::Append(&h[..]));
        let saved = Saved::of(&h[..2]);
        assert_eq!(saved.plan(&h), Write::Append(&h[2..]));
        assert_eq!(Saved::of(&h).plan(&h), Write::Nothing);
    }

    #[test]
    fn a_rewritten_or_shorter_history_replaces_what_is_kept() {
        let h = history(3);
        let saved = Saved::of(&h);
        let mut rewritten = h.clone();
        rewritten[2] = ChatMessage::assistant("other");
        rewritten.push(ChatMessage::user("m3"));
        assert_eq!(saved.plan(&rewritten), Write::Replace(&rewritten[..]));
        assert_eq!(saved.plan(&h[..1]), Write::Replace(&h[..1]));
    }

    #[test]
    fn every_role_has_a_word_and_back() {
        for role in [Role::System, Role::User, Role::Assistant] {
            assert_eq!(role_of(role_word(role)), Some(role));
        }
        assert_eq!(role_of("tool"), None);
    }
}

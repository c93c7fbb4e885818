//! Sign-in to the family page without typing a token: one-time login codes
//! (printed by `porfiry run` and `porfiry web` as a link) and the browser
//! sessions they open. A pure table over an injected "now": no clock, no
//! IO, so every expiry and every bound is tested exactly.

use std::collections::{HashMap, VecDeque};

/// How long a login link works after it is printed: long enough to copy it
/// from a terminal into a browser (or onto another device), short enough
/// that a link left in a scrollback or a shell history is dead soon.
pub const LOGIN_CODE_TTL_MS: u64 = 10 * 60 * 1_000;

/// Most login codes waiting at once; the oldest goes first. Each `porfiry
/// web` makes one and a person opens it within minutes: 16 is far above use
/// and bounds what a program holding the token can make the node keep.
pub const MAX_LOGIN_CODES: usize = 16;

/// Used codes remembered, so a replayed link says "already used" rather
/// than "unknown": as many as can be waiting.
pub const MAX_USED_CODES: usize = MAX_LOGIN_CODES;

/// How long a browser stays signed in: a family page is opened for months
/// on the same laptop; 30 days without a new link is the usual "remember
/// me" of self-hosted UIs, and `porfiry web` signs in again in one step.
pub const WEB_SESSION_TTL_MS: u64 = 30 * 24 * 60 * 60 * 1_000;

/// Most browser sessions kept; the one that expires first goes at the cap.
/// A family signs in from a few browsers each; 64 bounds the table.
pub const MAX_WEB_SESSIONS: usize = 64;

/// Random bytes in a code or session id (hex-encoded: twice as many
/// characters): 128 bits cannot be guessed.
const SECRET_BYTES: usize = 16;

/// Why a login code opened nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum LoginRefusal {
    /// Never issued here (or pushed out by newer ones, or the node restarted).
    #[error("this sign-in link is not known to this node")]
    Unknown,
    /// Issued, but more than [`LOGIN_CODE_TTL_MS`] ago.
    #[error("this sign-in link has expired")]
    Expired,
    /// Already opened once.
    #[error("this sign-in link was already used")]
    Used,
}

/// The waiting codes and the open sessions.
#[derive(Debug, Default)]
pub struct SignIns {
    /// Code → when it expires; in issue order.
    codes: VecDeque<(String, u64)>,
    used: VecDeque<String>,
    /// Session id → when it expires.
    sessions: HashMap<String, u64>,
}

impl SignIns {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// A new one-time code valid from `now_ms` for [`LOGIN_CODE_TTL_MS`].
    pub fn issue_code(&mut self, now_ms: u64) -> Result<String, getrandom::Error> {
        let code = random_hex()?;
        self.codes.retain(|(_, expires)| *expires > now_ms);
        if self.codes.len() >= MAX_LOGIN_CODES {
            self.codes.pop_front();
        }
        self.codes
            .push_back((code.clone(), now_ms.saturating_add(LOGIN_CODE_TTL_MS)));
        Ok(code)
    }

    /// Spends `code`: a new session id on success. The code never works again.
    pub fn redeem(&mut self, code: &str, now_ms: u64) -> Result<String, LoginRefusal> {
        let Some(at) = self.codes.iter().position(|(c, _)| c == code) else {
            return Err(if self.used.iter().any(|c| c == code) {
                LoginRefusal::Used
            } else {
                LoginRefusal::Unknown
            });
        };
        let (code, expires) = self.codes.remove(at).unwrap_or_default();
        if self.used.len() >= MAX_USED_CODES {
            self.used.pop_front();
        }
        self.used.push_back(code);
        if expires <= now_ms {
            return Err(LoginRefusal::Expired);
        }
        let session = random_hex().map_err(|_| LoginRefusal::Unknown)?;
        self.sessions.retain(|_, expires| *expires > now_ms);
        if self.sessions.len() >= MAX_WEB_SESSIONS {
            let soonest = self
                .sessions
                .iter()
                .min_by_key(|(_, expires)| **expires)
                .map(|(id, _)| id.clone());
            if let Some(id) = soonest {
                self.sessions.remove(&id);
            }
        }
        self.sessions
            .insert(session.clone(), now_ms.saturating_add(WEB_SESSION_TTL_MS));
        Ok(session)
    }

    /// Whether `session` is open at `now_ms`.
    pub fn is_signed_in(&self, session: &str, now_ms: u64) -> bool {
        self.sessions
            .get(session)
            .is_some_and(|expires| *expires > now_ms)
    }

    /// Codes waiting (expired ones included until the next issue).
    pub fn waiting_codes(&self) -> usize {
        self.codes.len()
    }

    /// Sessions held (expired ones included until the next sign-in).
    pub fn sessions(&self) -> usize {
        self.sessions.len()
    }
}

fn random_hex() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; SECRET_BYTES];
    getrandom::fill(&mut bytes)?;
    Ok(hex::encode(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_opens_one_session_once() {
        let mut s = SignIns::new();
        let code = s.issue_code(1_000).unwrap();
        assert_eq!(code.len(), 2 * SECRET_BYTES);
        let session = s.redeem(&code, 2_000).unwrap();
        assert!(s.is_signed_in(&session, 2_000));
        assert_eq!(s.redeem(&code, 2_001), Err(LoginRefusal::Used));
        assert_eq!(s.redeem("nope", 2_001), Err(LoginRefusal::Unknown));
        assert!(!s.is_signed_in("nope", 2_000));
    }

    #[test]
    fn a_code_expires_and_so_does_a_session() {
        let mut s = SignIns::new();
        let code = s.issue_code(0).unwrap();
        assert_eq!(
            s.redeem(&code, LOGIN_CODE_TTL_MS),
            Err(LoginRefusal::Expired)
        );
        let code = s.issue_code(0).unwrap();
        let session = s.redeem(&code, LOGIN_CODE_TTL_MS - 1).unwrap();
        let end = LOGIN_CODE_TTL_MS - 1 + WEB_SESSION_TTL_MS;
        assert!(s.is_signed_in(&session, end - 1));
        assert!(!s.is_signed_in(&session, end));
    }

    #[test]
    fn waiting_codes_are_bounded_and_the_oldest_goes() {
        let mut s = SignIns::new();
        let first = s.issue_code(0).unwrap();
        for _ in 0..MAX_LOGIN_CODES {
            s.issue_code(0).unwrap();
        }
        assert_eq!(s.waiting_codes(), MAX_LOGIN_CODES);
        assert_eq!(s.redeem(&first, 1), Err(LoginRefusal::Unknown));
    }

    #[test]
    fn sessions_are_bounded_and_the_one_ending_first_goes() {
        let mut s = SignIns::new();
        let mut ids = Vec::new();
        for t in 0..=MAX_WEB_SESSIONS as u64 {
            let code = s.issue_code(t).unwrap();
            ids.push(s.redeem(&code, t).unwrap());
        }
        let now = MAX_WEB_SESSIONS as u64;
        assert_eq!(s.sessions(), MAX_WEB_SESSIONS);
        assert!(!s.is_signed_in(&ids[0], now));
        assert!(ids[1..].iter().all(|id| s.is_signed_in(id, now)));
    }
}

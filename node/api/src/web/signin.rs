//! Sign-in to the family page without typing a token: one-time login codes
//! (printed by `porfiry run` and `porfiry web` as a link) and the browser
//! sessions they open. A pure table over an injected "now": no clock, no
//! IO, so every expiry and every bound is tested exactly. Sessions are held
//! by the SHA-256 of their id, never the id itself: what the node keeps for
//! a restart ([`SignIns::kept`], [`SignIns::restore`]) cannot be replayed
//! as a cookie by whoever reads the database.

use std::collections::{HashMap, VecDeque};

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

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
    /// SHA-256 of a session id (hex) → when it expires.
    sessions: HashMap<String, u64>,
}

/// One browser session as the node keeps it across restarts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeptSession {
    /// SHA-256 of the session id, hex (the cookie's value never leaves memory).
    pub hash: String,
    /// When it expires (Unix ms).
    pub expires_ms: u64,
}

/// The SHA-256 of a session id, hex: how the table and the database know it.
fn session_hash(session: &str) -> String {
    hex::encode(Sha256::digest(session.as_bytes()))
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
        self.sessions.insert(
            session_hash(&session),
            now_ms.saturating_add(WEB_SESSION_TTL_MS),
        );
        Ok(session)
    }

    /// Whether `session` is open at `now_ms`.
    pub fn is_signed_in(&self, session: &str, now_ms: u64) -> bool {
        self.sessions
            .get(&session_hash(session))
            .is_some_and(|expires| *expires > now_ms)
    }

    /// The sessions open at `now_ms`, to keep for a restart (hashes only),
    /// in expiry order.
    pub fn kept(&self, now_ms: u64) -> Vec<KeptSession> {
        let mut kept: Vec<KeptSession> = self
            .sessions
            .iter()
            .filter(|(_, expires)| **expires > now_ms)
            .map(|(hash, expires)| KeptSession {
                hash: hash.clone(),
                expires_ms: *expires,
            })
            .collect();
        kept.sort_by(|a, b| (a.expires_ms, &a.hash).cmp(&(b.expires_ms, &b.hash)));
        kept
    }

    /// Takes back sessions kept before a restart: those still open at
    /// `now_ms` whose hash is a SHA-256 in hex, at most [`MAX_WEB_SESSIONS`]
    /// (the ones ending last). A kept expiry past [`WEB_SESSION_TTL_MS`]
    /// from now is cut to it: a database edited by hand opens nothing
    /// for longer than a sign-in would. Returns how many were taken.
    pub fn restore(&mut self, kept: Vec<KeptSession>, now_ms: u64) -> usize {
        let latest = now_ms.saturating_add(WEB_SESSION_TTL_MS);
        let mut open: Vec<KeptSession> = kept
            .into_iter()
            .filter(|k| k.expires_ms > now_ms && is_sha256_hex(&k.hash))
            .collect();
        open.sort_by_key(|k| std::cmp::Reverse(k.expires_ms));
        open.truncate(MAX_WEB_SESSIONS);
        let taken = open.len();
        for k in open {
            self.sessions.insert(k.hash, k.expires_ms.min(latest));
        }
        taken
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

fn is_sha256_hex(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit())
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
    fn kept_sessions_are_hashes_and_open_the_same_cookies_after_a_restore() {
        let mut s = SignIns::new();
        let code = s.issue_code(0).unwrap();
        let session = s.redeem(&code, 1).unwrap();
        let other = s.issue_code(2).unwrap();
        let later = s.redeem(&other, 3).unwrap();
        let kept = s.kept(10);
        assert_eq!(kept.len(), 2);
        assert_eq!(kept[0].expires_ms, 1 + WEB_SESSION_TTL_MS, "expiry order");
        for k in &kept {
            assert!(is_sha256_hex(&k.hash));
            assert!(
                k.hash != session && k.hash != later,
                "never the cookie's value"
            );
        }
        let mut restarted = SignIns::new();
        assert_eq!(restarted.restore(kept.clone(), 10), 2);
        assert!(restarted.is_signed_in(&session, 10));
        assert!(restarted.is_signed_in(&later, 10));
        assert!(
            !restarted.is_signed_in(&kept[0].hash, 10),
            "a hash is no cookie"
        );
        // The 30 days run from the sign-in, not from the restart.
        assert!(!restarted.is_signed_in(&session, 1 + WEB_SESSION_TTL_MS));
        assert!(
            s.kept(1 + WEB_SESSION_TTL_MS).len() == 1,
            "expired ones are not kept"
        );
    }

    #[test]
    fn a_restore_drops_expired_malformed_and_surplus_sessions_and_caps_the_expiry() {
        let now = 1_000;
        let hash = |i: usize| format!("{i:064x}");
        let mut kept: Vec<KeptSession> = (0..MAX_WEB_SESSIONS + 2)
            .map(|i| KeptSession {
                hash: hash(i),
                expires_ms: now + 1 + i as u64,
            })
            .collect();
        kept.push(KeptSession {
            hash: hash(999),
            expires_ms: now,
        });
        kept.push(KeptSession {
            hash: "not a hash".into(),
            expires_ms: now + 5,
        });
        kept.push(KeptSession {
            hash: hash(1_000),
            expires_ms: u64::MAX,
        });
        let mut s = SignIns::new();
        assert_eq!(s.restore(kept, now), MAX_WEB_SESSIONS);
        assert_eq!(s.sessions(), MAX_WEB_SESSIONS);
        let held = s.kept(now);
        assert!(
            held.iter()
                .all(|k| k.hash != hash(999) && k.hash != hash(0))
        );
        let forever = held.iter().find(|k| k.hash == hash(1_000)).unwrap();
        assert_eq!(forever.expires_ms, now + WEB_SESSION_TTL_MS);
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

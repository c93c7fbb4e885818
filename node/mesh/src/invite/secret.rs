//! Invitation secrets: made from the OS random source, stored only as their
//! SHA-256, and judged against the stored row — hash compared in constant
//! time, then single use and expiry checked. Pure apart from [`new_secret`].
//!
//! The row is found by its hash (a UNIQUE index); the lookup's timing can
//! tell an attacker at most something about the hash of a 128-bit random
//! secret, which does not help guessing it. The comparison after the
//! lookup is constant-time all the same (`subtle`).

use porfiry_storage::{Invitation, InvitationKind};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::code::{SECRET_BYTES, Secret};

/// Why a presented secret was refused; the joiner is told which.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// No invitation has this secret.
    #[error("the invitation code is wrong (the inviter has no such invitation)")]
    Unknown,
    /// It was redeemed already.
    #[error("the invitation code was used already; ask for a new one")]
    Used,
    /// It expired.
    #[error("the invitation code has expired; ask for a new one")]
    Expired,
    /// Too many attempts; try later.
    #[error("the inviter refused: too many attempts, try again in a minute")]
    RateLimited,
    /// The inviter failed to check it (database error).
    #[error("the inviter could not check the code (its error); try again")]
    Failed,
    /// A friend's invitation presented to link a device.
    #[error(
        "this code invites a friend, it does not link a device: use `porfiry join CODE`, or ask for `porfiry devices link` on the other device"
    )]
    NotADeviceCode,
    /// A device link presented to become a friend.
    #[error(
        "this code links a device of the same person: use `porfiry devices join CODE`, or ask for `porfiry invite` to become a friend"
    )]
    DeviceCode,
    /// The device link was not countersigned properly (a bad signature).
    #[error("the device link's signatures do not verify; nothing was linked")]
    BadSignature,
}

/// A fresh secret from the OS random source.
pub fn new_secret() -> Result<Secret, getrandom::Error> {
    let mut s = [0u8; SECRET_BYTES];
    getrandom::fill(&mut s)?;
    Ok(s)
}

/// The SHA-256 that is stored instead of the secret. A plain hash is
/// enough: the secret is 128 random bits, not a password to stretch.
pub fn hash_secret(secret: &Secret) -> [u8; 32] {
    Sha256::digest(secret).into()
}

/// Judges `presented` (a hash), presented to become `wanted` (a friend or
/// a device), against the invitation found for it, at `now_ms`: the row id
/// to redeem, or why not. The kind is judged last, so a wrong code's
/// refusal says nothing about which kinds are open.
pub fn judge(
    found: Option<&Invitation>,
    presented: &[u8; 32],
    wanted: InvitationKind,
    now_ms: u64,
) -> Result<i64, Refusal> {
    let Some(inv) = found else {
        return Err(Refusal::Unknown);
    };
    if !bool::from(inv.secret_hash.ct_eq(presented)) {
        return Err(Refusal::Unknown);
    }
    if inv.used_ms.is_some() {
        return Err(Refusal::Used);
    }
    if inv.expires_ms <= now_ms {
        return Err(Refusal::Expired);
    }
    match (inv.kind, wanted) {
        (InvitationKind::Friend, InvitationKind::Device) => Err(Refusal::NotADeviceCode),
        (InvitationKind::Device, InvitationKind::Friend) => Err(Refusal::DeviceCode),
        _ => Ok(inv.id),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FRIEND: InvitationKind = InvitationKind::Friend;

    fn invitation(secret: &Secret) -> Invitation {
        Invitation {
            id: 4,
            secret_hash: hash_secret(secret),
            name: String::new(),
            groups: vec![],
            created_ms: 0,
            expires_ms: 1_000,
            used_ms: None,
            used_by: None,
            kind: InvitationKind::Friend,
        }
    }

    #[test]
    fn secrets_are_random_and_hashed() {
        let a = new_secret().unwrap();
        let b = new_secret().unwrap();
        assert_ne!(a, b);
        assert_ne!(hash_secret(&a), hash_secret(&b));
        assert_eq!(hash_secret(&a), hash_secret(&a));
        assert_ne!(hash_secret(&a).as_slice(), a.as_slice());
    }

    #[test]
    fn the_right_secret_before_expiry_is_accepted_once() {
        let s = [1; SECRET_BYTES];
        let inv = invitation(&s);
        assert_eq!(judge(Some(&inv), &hash_secret(&s), FRIEND, 999), Ok(4));
        let mut used = inv.clone();
        used.used_ms = Some(500);
        assert_eq!(
            judge(Some(&used), &hash_secret(&s), FRIEND, 600),
            Err(Refusal::Used)
        );
    }

    #[test]
    fn a_code_works_only_for_its_own_kind() {
        let s = [1; SECRET_BYTES];
        let friend = invitation(&s);
        let mut device = friend.clone();
        device.kind = InvitationKind::Device;
        let h = hash_secret(&s);
        assert_eq!(judge(Some(&device), &h, InvitationKind::Device, 9), Ok(4));
        assert_eq!(
            judge(Some(&friend), &h, InvitationKind::Device, 9),
            Err(Refusal::NotADeviceCode)
        );
        assert_eq!(
            judge(Some(&device), &h, FRIEND, 9),
            Err(Refusal::DeviceCode)
        );
        // A wrong secret says nothing of the kinds open.
        assert_eq!(
            judge(Some(&device), &hash_secret(&[2; SECRET_BYTES]), FRIEND, 9),
            Err(Refusal::Unknown)
        );
    }

    #[test]
    fn wrong_missing_and_expired_secrets_are_refused() {
        let s = [1; SECRET_BYTES];
        let inv = invitation(&s);
        assert_eq!(
            judge(None, &hash_secret(&s), FRIEND, 0),
            Err(Refusal::Unknown)
        );
        assert_eq!(
            judge(Some(&inv), &hash_secret(&[2; SECRET_BYTES]), FRIEND, 0),
            Err(Refusal::Unknown)
        );
        assert_eq!(
            judge(Some(&inv), &hash_secret(&s), FRIEND, 1_000),
            Err(Refusal::Expired)
        );
    }
}

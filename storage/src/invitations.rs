//! One-time invitations (`porfiry invite` / `porfiry join`): the SHA-256 of
//! each secret with the name and groups the joiner gets, its expiry and
//! whether it was used. The secret itself is never stored. Checking a
//! presented secret (constant-time comparison, rate limits) is the node's
//! job; this file only keeps the rows and makes redeeming single-use.

use rusqlite::{OptionalExtension, params};

use crate::error::{Result, StorageError};
use crate::peers::check_groups;
use crate::store::Store;

/// At most this many invitations may be open (unused, unexpired) at once:
/// each one keeps the stranger window of the mesh open and is compared on
/// every attempt, so the set must stay small; a person inviting friends by
/// hand never needs more.
pub const MAX_OPEN_INVITATIONS: u32 = 32;

/// Longest invitation name in bytes (it becomes a friend's local name).
pub const MAX_INVITATION_NAME_BYTES: usize = 64;

/// What redeeming an invitation makes of the joiner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InvitationKind {
    /// A friend (`porfiry invite` / `porfiry join`).
    #[default]
    Friend,
    /// A device of the same person (`porfiry devices link` / `devices join`).
    Device,
}

impl InvitationKind {
    /// The `invitations.kind` text: `friend` or `device`.
    pub const fn as_str(self) -> &'static str {
        match self {
            InvitationKind::Friend => "friend",
            InvitationKind::Device => "device",
        }
    }

    fn parse(text: &str) -> Option<InvitationKind> {
        match text {
            "friend" => Some(InvitationKind::Friend),
            "device" => Some(InvitationKind::Device),
            _ => None,
        }
    }
}

/// A new invitation to store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewInvitation {
    /// SHA-256 of the secret.
    pub secret_hash: [u8; 32],
    /// The local name the joiner will get (may be empty).
    pub name: String,
    /// The groups the joiner will be in.
    pub groups: Vec<String>,
    /// When it stops being valid (Unix ms).
    pub expires_ms: u64,
    /// A friend's or a device's.
    pub kind: InvitationKind,
}

/// A stored invitation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invitation {
    /// Row id.
    pub id: i64,
    /// SHA-256 of the secret.
    pub secret_hash: [u8; 32],
    /// The joiner's local name (may be empty).
    pub name: String,
    /// The joiner's groups.
    pub groups: Vec<String>,
    /// When it was made (Unix ms).
    pub created_ms: u64,
    /// When it expires (Unix ms).
    pub expires_ms: u64,
    /// When it was redeemed, if it was.
    pub used_ms: Option<u64>,
    /// Who redeemed it.
    pub used_by: Option<String>,
    /// A friend's or a device's.
    pub kind: InvitationKind,
}

const COLUMNS: &str =
    "id, secret_hash, name, groups, created_ms, expires_ms, used_ms, used_by, kind";

fn row_to_invitation(r: &rusqlite::Row<'_>) -> rusqlite::Result<(Invitation, String, Vec<u8>)> {
    let hash: Vec<u8> = r.get(1)?;
    let groups: String = r.get(3)?;
    let kind: String = r.get(8)?;
    // The column's CHECK allows only the two names.
    let kind = InvitationKind::parse(&kind).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            8,
            rusqlite::types::Type::Text,
            format!("unknown invitation kind {kind:?}").into(),
        )
    })?;
    Ok((
        Invitation {
            id: r.get(0)?,
            secret_hash: [0; 32],
            name: r.get(2)?,
            groups: Vec::new(),
            created_ms: r.get(4)?,
            expires_ms: r.get(5)?,
            used_ms: r.get(6)?,
            used_by: r.get(7)?,
            kind,
        },
        groups,
        hash,
    ))
}

fn finish(raw: (Invitation, String, Vec<u8>)) -> Result<Invitation> {
    let (mut inv, groups, hash) = raw;
    inv.secret_hash = hash
        .as_slice()
        .try_into()
        .map_err(|_| StorageError::BadColumn {
            table: "invitations",
            column: "secret_hash".into(),
            reason: format!("{} bytes, not 32", hash.len()),
        })?;
    inv.groups = serde_json::from_str(&groups).map_err(|e| StorageError::BadColumn {
        table: "invitations",
        column: "groups".into(),
        reason: e.to_string(),
    })?;
    Ok(inv)
}

impl Store {
    /// Stores a new invitation made at `now_ms`. Refuses a name that is too
    /// long, bad group names, an expiry not after `now_ms`, and a new one
    /// when [`MAX_OPEN_INVITATIONS`] are open already.
    pub fn add_invitation(&self, new: &NewInvitation, now_ms: u64) -> Result<i64> {
        if new.name.len() > MAX_INVITATION_NAME_BYTES {
            return Err(StorageError::TooLong {
                table: "invitations",
                column: "name",
                len: new.name.len(),
                max: MAX_INVITATION_NAME_BYTES,
            });
        }
        check_groups(&new.groups)?;
        if new.expires_ms <= now_ms {
            return Err(StorageError::invalid(
                "invitation expiry",
                "it must be later than now",
            ));
        }
        let groups = serde_json::to_string(&new.groups)
            .map_err(|e| StorageError::invalid("groups", e.to_string()))?;
        self.transaction(|s| {
            let open = s.open_invitations(now_ms)?.len();
            if open >= MAX_OPEN_INVITATIONS as usize {
                return Err(StorageError::invalid(
                    "invitation",
                    format!(
                        "{open} invitations are open already (the most is {MAX_OPEN_INVITATIONS}); wait for some to be used or expire"
                    ),
                ));
            }
            s.conn
                .prepare_cached(
                    "INSERT INTO invitations (secret_hash, name, groups, created_ms, expires_ms, kind) \
                     VALUES (?, ?, ?, ?, ?, ?)",
                )?
                .execute(params![
                    new.secret_hash.as_slice(),
                    new.name,
                    groups,
                    now_ms,
                    new.expires_ms,
                    new.kind.as_str()
                ])?;
            Ok(s.conn.last_insert_rowid())
        })
    }

    /// The invitations still open at `now_ms` (unused, unexpired), oldest
    /// first; never more than [`MAX_OPEN_INVITATIONS`].
    pub fn open_invitations(&self, now_ms: u64) -> Result<Vec<Invitation>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM invitations WHERE used_ms IS NULL AND expires_ms > ? \
             ORDER BY id LIMIT ?"
        ))?;
        let rows = stmt
            .query_map(params![now_ms, MAX_OPEN_INVITATIONS], row_to_invitation)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        rows.into_iter().map(finish).collect()
    }

    /// Whether any invitation is open at `now_ms`.
    pub fn has_open_invitations(&self, now_ms: u64) -> Result<bool> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT 1 FROM invitations WHERE used_ms IS NULL AND expires_ms > ? LIMIT 1",
            )?
            .query_row([now_ms], |_| Ok(()))
            .optional()?
            .is_some())
    }

    /// When the first invitation still open at `now_ms` expires (Unix ms);
    /// `None` when none is open.
    pub fn next_invitation_expiry(&self, now_ms: u64) -> Result<Option<u64>> {
        let min: Option<i64> = self
            .conn
            .prepare_cached(
                "SELECT MIN(expires_ms) FROM invitations WHERE used_ms IS NULL AND expires_ms > ?",
            )?
            .query_row([now_ms], |r| r.get(0))?;
        Ok(min.and_then(|ms| u64::try_from(ms).ok()))
    }

    /// One invitation by row id, or [`StorageError::NotFound`].
    pub fn invitation(&self, id: i64) -> Result<Invitation> {
        let raw = self
            .conn
            .prepare_cached(&format!("SELECT {COLUMNS} FROM invitations WHERE id = ?"))?
            .query_row([id], row_to_invitation)
            .optional()?
            .ok_or_else(|| StorageError::NotFound {
                table: "invitations",
                key: format!("invitation {id}"),
            })?;
        finish(raw)
    }

    /// The invitation whose secret hashes to `secret_hash`, in any state
    /// (open, used or expired), or `None`.
    pub fn invitation_by_hash(&self, secret_hash: &[u8; 32]) -> Result<Option<Invitation>> {
        self.conn
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM invitations WHERE secret_hash = ?"
            ))?
            .query_row([secret_hash.as_slice()], row_to_invitation)
            .optional()?
            .map(finish)
            .transpose()
    }

    /// Marks invitation `id` used by `peer_id` at `now_ms`, only if it is
    /// still open; returns false (changing nothing) if it was used or has
    /// expired meanwhile, so an invitation is redeemed at most once.
    pub fn redeem_invitation(&self, id: i64, peer_id: &str, now_ms: u64) -> Result<bool> {
        let n = self
            .conn
            .prepare_cached(
                "UPDATE invitations SET used_ms = ?, used_by = ? \
                 WHERE id = ? AND used_ms IS NULL AND expires_ms > ?",
            )?
            .execute(params![now_ms, peer_id, id, now_ms])?;
        Ok(n == 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DB_FILE_NAME;

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::create(dir.path().join(DB_FILE_NAME)).unwrap();
        (dir, store)
    }

    fn new(byte: u8, expires_ms: u64) -> NewInvitation {
        NewInvitation {
            secret_hash: [byte; 32],
            name: "anna".into(),
            groups: vec!["family".into()],
            expires_ms,
            kind: InvitationKind::Friend,
        }
    }

    #[test]
    fn an_invitation_round_trips_and_is_open_until_it_expires() {
        let (_d, s) = store();
        let id = s.add_invitation(&new(1, 1_000), 10).unwrap();
        let got = s.invitation(id).unwrap();
        assert_eq!(got.secret_hash, [1; 32]);
        assert_eq!(got.name, "anna");
        assert_eq!(got.groups, vec!["family".to_owned()]);
        assert_eq!((got.created_ms, got.expires_ms), (10, 1_000));
        assert_eq!(got.used_ms, None);
        assert_eq!(s.invitation_by_hash(&[1; 32]).unwrap(), Some(got));
        assert_eq!(s.invitation_by_hash(&[9; 32]).unwrap(), None);
        assert!(s.has_open_invitations(999).unwrap());
        assert_eq!(s.open_invitations(999).unwrap().len(), 1);
        assert!(!s.has_open_invitations(1_000).unwrap());
        assert!(s.open_invitations(1_000).unwrap().is_empty());
    }

    #[test]
    fn the_next_expiry_is_the_earliest_open_invitations() {
        let (_d, s) = store();
        assert_eq!(s.next_invitation_expiry(0).unwrap(), None);
        s.add_invitation(&new(1, 5_000), 10).unwrap();
        let soon = s.add_invitation(&new(2, 2_000), 10).unwrap();
        assert_eq!(s.next_invitation_expiry(100).unwrap(), Some(2_000));
        assert_eq!(s.next_invitation_expiry(2_000).unwrap(), Some(5_000));
        // A used invitation no longer counts.
        assert!(s.redeem_invitation(soon, "12D3KooWx", 150).unwrap());
        assert_eq!(s.next_invitation_expiry(150).unwrap(), Some(5_000));
        assert_eq!(s.next_invitation_expiry(5_000).unwrap(), None);
    }

    #[test]
    fn redeeming_is_single_use_and_refused_after_expiry() {
        let (_d, s) = store();
        let a = s.add_invitation(&new(1, 1_000), 10).unwrap();
        let b = s.add_invitation(&new(2, 1_000), 10).unwrap();
        assert!(s.redeem_invitation(a, "peer-a", 500).unwrap());
        assert!(!s.redeem_invitation(a, "peer-b", 501).unwrap());
        let used = s.invitation(a).unwrap();
        assert_eq!(used.used_ms, Some(500));
        assert_eq!(used.used_by.as_deref(), Some("peer-a"));
        assert!(!s.redeem_invitation(b, "peer-b", 1_000).unwrap());
        assert_eq!(s.invitation(b).unwrap().used_ms, None);
        let open: Vec<i64> = s
            .open_invitations(600)
            .unwrap()
            .iter()
            .map(|i| i.id)
            .collect();
        assert_eq!(open, vec![b]);
    }

    #[test]
    fn bad_input_is_refused_and_stores_nothing() {
        let (_d, s) = store();
        let mut long = new(1, 1_000);
        long.name = "x".repeat(MAX_INVITATION_NAME_BYTES + 1);
        assert!(matches!(
            s.add_invitation(&long, 10),
            Err(StorageError::TooLong { .. })
        ));
        let mut bad_group = new(2, 1_000);
        bad_group.groups = vec!["no spaces allowed".into()];
        assert!(s.add_invitation(&bad_group, 10).is_err());
        assert!(matches!(
            s.add_invitation(&new(3, 10), 10),
            Err(StorageError::Invalid { .. })
        ));
        let id = s.add_invitation(&new(4, 1_000), 10).unwrap();
        // The same secret twice is refused by the UNIQUE hash.
        assert!(s.add_invitation(&new(4, 1_000), 10).is_err());
        assert_eq!(s.open_invitations(11).unwrap().len(), 1);
        assert!(matches!(
            s.invitation(id + 1),
            Err(StorageError::NotFound { .. })
        ));
    }

    #[test]
    fn open_invitations_are_capped() {
        let (_d, s) = store();
        for i in 0..MAX_OPEN_INVITATIONS {
            s.add_invitation(&new(u8::try_from(i).unwrap(), 1_000), 10)
                .unwrap();
        }
        let err = s.add_invitation(&new(200, 1_000), 10).unwrap_err();
        assert!(err.to_string().contains("open already"), "{err}");
        assert_eq!(
            s.open_invitations(11).unwrap().len(),
            MAX_OPEN_INVITATIONS as usize
        );
        // Once they expire, a new one fits again.
        s.add_invitation(&new(201, 5_000), 2_000).unwrap();
    }
}

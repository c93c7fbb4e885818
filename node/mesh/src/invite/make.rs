//! Making an invitation: a fresh secret, stored only hashed with the new
//! friend's name, groups and expiry, and the one-line code that carries this
//! node's peer id, the addresses to dial and the secret. `porfiry invite`
//! prints it; an app (the phone bindings) shows it.

use std::time::Duration;

use porfiry_storage::{
    InvitationKind, MAX_INVITATION_NAME_BYTES, NewInvitation, StorageError, Store, check_groups,
};

use super::code::{CodeError, InviteCode, MAX_CODE_ADDRESSES};
use super::secret::{hash_secret, new_secret};
use crate::friends::{FriendsError, parse_address};
use crate::net::{Multiaddr, PeerId, Protocol, without_peer_suffix};

/// What the new invitation says.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InvitationRequest {
    /// The name the new friend gets here (local, never sent); may be empty.
    pub name: String,
    /// Groups the new friend joins.
    pub groups: Vec<String>,
    /// How long the code works.
    pub valid_for: Duration,
    /// Addresses the other node should dial (`<addr>[/p2p/<us>]`).
    pub addresses: Vec<String>,
    /// A friend's invitation, or a device link's (`porfiry devices link`).
    pub kind: InvitationKind,
}

/// Why no invitation was made.
#[derive(Debug, thiserror::Error)]
pub enum MakeError {
    /// The name is too long.
    #[error("the name is {0} bytes; at most {MAX_INVITATION_NAME_BYTES}")]
    NameTooLong(usize),
    /// No address to put in the code.
    #[error(
        "no address to put in the code: start the daemon (`porfiry run`, which listens) once, or pass --address"
    )]
    NoAddress,
    /// The OS random source failed.
    #[error("cannot make a secret: {0}")]
    Random(String),
    /// An address is not one of this node's.
    #[error(transparent)]
    Friends(#[from] FriendsError),
    /// The database refused (a bad group name among them).
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// The code could not be made.
    #[error(transparent)]
    Code(#[from] CodeError),
}

/// Stores a one-time invitation of `us` at `now_ms` and returns its code.
/// Relay circuit addresses go first, so the cut to [`MAX_CODE_ADDRESSES`]
/// never drops the only way to reach a node that cannot be dialled.
pub fn make_invitation(
    store: &Store,
    us: &PeerId,
    request: &InvitationRequest,
    now_ms: u64,
) -> Result<String, MakeError> {
    if request.name.len() > MAX_INVITATION_NAME_BYTES {
        return Err(MakeError::NameTooLong(request.name.len()));
    }
    check_groups(&request.groups)?;
    let mut addresses: Vec<Multiaddr> = Vec::new();
    for a in &request.addresses {
        let m = parse_address(a, us)?;
        // The code names the peer once; drop a trailing /p2p/<id> (a relay
        // circuit address keeps its relay's /p2p/<relay>/p2p-circuit).
        let bare = without_peer_suffix(m, us);
        if !addresses.contains(&bare) {
            addresses.push(bare);
        }
    }
    addresses.sort_by_key(|a| !a.iter().any(|p| p == Protocol::P2pCircuit));
    addresses.truncate(MAX_CODE_ADDRESSES);
    if addresses.is_empty() {
        return Err(MakeError::NoAddress);
    }
    let secret = new_secret().map_err(|e| MakeError::Random(e.to_string()))?;
    let code = InviteCode {
        peer: *us,
        addresses,
        secret,
    }
    .encode()?;
    let valid_ms = u64::try_from(request.valid_for.as_millis()).unwrap_or(u64::MAX);
    store.add_invitation(
        &NewInvitation {
            secret_hash: hash_secret(&secret),
            name: request.name.clone(),
            groups: request.groups.clone(),
            expires_ms: now_ms.saturating_add(valid_ms),
            kind: request.kind,
        },
        now_ms,
    )?;
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data_dir::DataDir;
    use crate::init::open_or_init;

    fn node() -> (tempfile::TempDir, PeerId, Store) {
        let tmp = tempfile::tempdir().unwrap();
        let (key, store) = open_or_init(&DataDir::new(tmp.path())).unwrap();
        (tmp, key.peer_id(), store)
    }

    #[test]
    fn a_code_carries_a_relay_circuit_address_first_and_at_most_the_cap() {
        let (_tmp, me, store) = node();
        let relay = crate::net::Keypair::generate_ed25519()
            .public()
            .to_peer_id();
        let mut addresses: Vec<String> = (1..=8)
            .map(|port| format!("/ip4/10.0.0.1/tcp/{port}/p2p/{me}"))
            .collect();
        let circuit = format!("/ip4/192.0.2.1/tcp/4001/p2p/{relay}/p2p-circuit");
        addresses.push(format!("{circuit}/p2p/{me}"));
        let request = InvitationRequest {
            addresses,
            valid_for: Duration::from_secs(3600),
            ..Default::default()
        };
        let code = InviteCode::decode(&make_invitation(&store, &me, &request, 1).unwrap()).unwrap();
        assert_eq!(code.peer, me);
        assert_eq!(code.addresses.len(), MAX_CODE_ADDRESSES);
        assert_eq!(code.addresses[0].to_string(), circuit);
    }

    #[test]
    fn no_address_a_long_name_or_a_bad_group_store_nothing() {
        let (_tmp, me, store) = node();
        let none = InvitationRequest::default();
        assert!(matches!(
            make_invitation(&store, &me, &none, 1),
            Err(MakeError::NoAddress)
        ));
        let long = InvitationRequest {
            name: "x".repeat(MAX_INVITATION_NAME_BYTES + 1),
            addresses: vec!["/ip4/127.0.0.1/tcp/1".into()],
            ..Default::default()
        };
        let e = make_invitation(&store, &me, &long, 1).unwrap_err();
        assert!(e.to_string().contains("bytes"), "{e}");
        let bad_group = InvitationRequest {
            groups: vec![String::new()],
            addresses: vec!["/ip4/127.0.0.1/tcp/1".into()],
            ..Default::default()
        };
        assert!(make_invitation(&store, &me, &bad_group, 1).is_err());
        assert!(store.open_invitations(1).unwrap().is_empty());
    }
}

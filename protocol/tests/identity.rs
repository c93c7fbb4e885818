//! Node identity: key files on a real temp dir (create-new, 0600, refuse to
//! overwrite, clear errors), and the PeerId agreeing with libp2p's own.

// These tests read and write key files on purpose; the ban on `std::fs`
// (protocol/clippy.toml) is for the engine.
#![allow(clippy::disallowed_methods)]

use porfiry_protocol::{AuthorKey, IdentityError, NodeKey};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

#[test]
fn our_peer_id_is_the_one_libp2p_derives_from_the_same_key() {
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    for _ in 0..20 {
        let key = NodeKey::generate(&mut rng);
        let libp2p_id = key.to_libp2p_keypair().public().to_peer_id();
        assert_eq!(key.peer_id(), libp2p_id);
        assert_eq!(key.author().peer_id_string(), libp2p_id.to_string());
        assert!(libp2p_id.to_string().starts_with("12D3KooW"));
        assert_eq!(AuthorKey::from_peer_id(&libp2p_id), Some(key.author()));
        // The libp2p keypair signs with the same secret.
        let pk = key.to_libp2p_keypair().public().try_into_ed25519().unwrap();
        assert_eq!(pk.to_bytes(), key.author().0);
    }
}

#[test]
fn non_ed25519_peer_ids_have_no_author_key() {
    // A sha256-multihash PeerId (as RSA keys get) holds no inlined key.
    let hashed: libp2p_identity::PeerId = "QmYyQSo1c1Ym7orWxLYvCrM2EmxFTANf8wXmmE7DWjhx5N"
        .parse()
        .unwrap();
    assert_eq!(AuthorKey::from_peer_id(&hashed), None);
}

#[test]
fn generate_uses_the_given_rng() {
    let a = NodeKey::generate(&mut ChaCha20Rng::seed_from_u64(1));
    let b = NodeKey::generate(&mut ChaCha20Rng::seed_from_u64(1));
    let c = NodeKey::generate(&mut ChaCha20Rng::seed_from_u64(2));
    assert_eq!(a.seed(), b.seed());
    assert_ne!(a.seed(), c.seed());
}

#[test]
fn save_then_load_gives_the_same_key_in_a_private_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("node.key");
    let key = NodeKey::from_seed([9; 32]);
    key.save(&path).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), vec![9; 32]);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
    let back = NodeKey::load(&path).unwrap();
    assert_eq!(back.seed(), key.seed());
    assert_eq!(back.peer_id(), key.peer_id());
}

#[test]
fn save_refuses_to_overwrite_and_leaves_the_old_key() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("node.key");
    NodeKey::from_seed([1; 32]).save(&path).unwrap();
    let err = NodeKey::from_seed([2; 32]).save(&path).unwrap_err();
    assert!(
        matches!(&err, IdentityError::AlreadyExists(p) if p == &path),
        "{err}"
    );
    assert!(err.to_string().contains("already exists"));
    assert_eq!(NodeKey::load(&path).unwrap().seed(), [1; 32]);
}

#[test]
fn save_into_a_missing_directory_is_an_io_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nope").join("node.key");
    let err = NodeKey::from_seed([1; 32]).save(&path).unwrap_err();
    assert!(matches!(err, IdentityError::Io { .. }), "{err}");
    assert!(err.to_string().contains("node.key"));
}

#[test]
fn load_names_missing_files_and_wrong_lengths() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none.key");
    let err = NodeKey::load(&missing).unwrap_err();
    assert!(
        matches!(&err, IdentityError::NotFound(p) if p == &missing),
        "{err}"
    );
    assert!(err.to_string().contains("none.key"));

    for len in [0usize, 31, 33, 64] {
        let path = dir.path().join(format!("bad{len}.key"));
        std::fs::write(&path, vec![1u8; len]).unwrap();
        let err = NodeKey::load(&path).unwrap_err();
        assert!(
            matches!(err, IdentityError::BadLength { len: l, .. } if l == len as u64),
            "{err}"
        );
        assert!(err.to_string().contains(&format!("is {len} bytes")));
        // Loading never changes the file.
        assert_eq!(std::fs::read(&path).unwrap(), vec![1u8; len]);
    }
    let err = NodeKey::load(dir.path()).unwrap_err();
    assert!(
        matches!(
            err,
            IdentityError::BadLength { .. } | IdentityError::Io { .. }
        ),
        "{err}"
    );
}

#[cfg(unix)]
#[test]
fn an_open_key_file_still_loads() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("node.key");
    std::fs::write(&path, [4u8; 32]).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert_eq!(NodeKey::load(&path).unwrap().seed(), [4; 32]);
}

#[test]
fn debug_never_shows_the_secret() {
    let key = NodeKey::from_seed([0xab; 32]);
    let shown = format!("{key:?}");
    assert!(!shown.contains("abab"), "{shown}");
    assert!(!shown.contains("171, 171"), "{shown}");
    assert!(shown.contains(&key.peer_id().to_string()));
}

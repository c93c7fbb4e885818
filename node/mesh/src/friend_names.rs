//! Friend names as commands take and show them: [`resolve_friend`] turns
//! what the user typed (a peer id, or a friend's name in any case) into a
//! peer id for every command that takes a friend (`friends remove|offload|
//! rename`, `notes post --audience peer:anna`, `@anna` in a note, `run
//! --llm-peer`, the `NodeHandle` friend methods and so the API), and
//! [`friend_names`] gives the listings their names.

use std::collections::HashMap;

use porfiry_storage::{Store, check_friend_name};

use crate::friend_ids::{FriendsError, parse_peer_id};
use crate::net::PeerId;

/// The peer id `given` stands for: itself when it is a peer id (friend or
/// not: the caller says "not a friend" in its own words), else the friend
/// whose name it is, ignoring case. Text that can be neither a name nor a
/// peer id (too long, with spaces or '@') gets the peer id error.
pub fn resolve_friend(store: &Store, given: &str) -> Result<PeerId, FriendsError> {
    let not_an_id = match parse_peer_id(given) {
        Ok(peer) => return Ok(peer),
        Err(e) => e,
    };
    if check_friend_name(given).is_err() {
        return Err(not_an_id);
    }
    let found = store.friends_named(given)?;
    let one = match found.as_slice() {
        [] => return Err(FriendsError::NoFriendNamed(given.to_owned())),
        [one] => one,
        several => match several
            .iter()
            .filter(|f| f.row.name == given)
            .collect::<Vec<_>>()[..]
        {
            [exact] => exact,
            _ => {
                return Err(FriendsError::Ambiguous {
                    name: given.to_owned(),
                    peers: several.iter().map(|f| f.row.peer_id.clone()).collect(),
                });
            }
        },
    };
    parse_peer_id(&one.row.peer_id)
}

/// Every named friend: peer id → name, for listings that show names.
pub fn friend_names(store: &Store) -> Result<HashMap<String, String>, FriendsError> {
    Ok(store
        .friends()?
        .into_iter()
        .filter(|f| !f.row.name.is_empty())
        .map(|f| (f.row.peer_id, f.row.name))
        .collect())
}

#[cfg(test)]
mod tests {
    use porfiry_protocol::NodeKey;
    use porfiry_storage::{DB_FILE_NAME, Friend};

    use super::*;

    fn peer(seed: u8) -> String {
        NodeKey::from_seed([seed; 32]).peer_id().to_string()
    }

    fn store_with(friends: &[(String, &str)]) -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::create(dir.path().join(DB_FILE_NAME)).unwrap();
        for (id, name) in friends {
            let f = Friend {
                peer_id: id.clone(),
                name: (*name).to_owned(),
                ..Default::default()
            };
            store.add_friend(&f, 1).unwrap();
        }
        (dir, store)
    }

    #[test]
    fn a_name_in_any_case_or_a_peer_id_resolves() {
        let (_d, store) = store_with(&[(peer(1), "Anna"), (peer(2), "")]);
        for given in ["Anna", "anna", "ANNA"] {
            assert_eq!(resolve_friend(&store, given).unwrap().to_string(), peer(1));
        }
        assert_eq!(
            resolve_friend(&store, &peer(2)).unwrap().to_string(),
            peer(2)
        );
        // A peer id that is no friend still resolves: callers say "not a friend".
        assert_eq!(
            resolve_friend(&store, &peer(3)).unwrap().to_string(),
            peer(3)
        );
        let names = friend_names(&store).unwrap();
        assert_eq!(names.len(), 1);
        assert_eq!(names[&peer(1)], "Anna");
    }

    #[test]
    fn unknown_names_and_garbage_say_what_is_wrong() {
        let (_d, store) = store_with(&[(peer(1), "anna")]);
        let e = resolve_friend(&store, "bob").unwrap_err();
        assert!(
            matches!(e, FriendsError::NoFriendNamed(ref n) if n == "bob"),
            "{e}"
        );
        assert_eq!(
            e.to_string(),
            "no friend named \"bob\" (and it is not a peer id)"
        );
        for garbage in ["has@at", " spaced", &"x".repeat(60)] {
            let e = resolve_friend(&store, garbage).unwrap_err();
            assert!(
                matches!(e, FriendsError::BadPeerId { .. }),
                "{garbage:?}: {e}"
            );
        }
    }

    #[test]
    fn repeats_from_a_hand_edited_file_are_ambiguous_unless_one_matches_exactly() {
        let (_d, store) = store_with(&[(peer(1), ""), (peer(2), ""), (peer(3), "")]);
        let raw = rusqlite::Connection::open(store.path()).unwrap();
        // Past the check and the index, as a hand edit or an old file might.
        raw.execute_batch("DROP INDEX agent_peers_name").unwrap();
        for (id, name) in [(peer(1), "anna"), (peer(2), "Anna"), (peer(3), "ANNA")] {
            raw.execute(
                "UPDATE agent_peers SET name = ?1 WHERE peer_id = ?2",
                [name, id.as_str()],
            )
            .unwrap();
        }
        assert_eq!(resolve_friend(&store, "Anna").unwrap().to_string(), peer(2));
        let e = resolve_friend(&store, "aNNa").unwrap_err();
        let FriendsError::Ambiguous { peers, .. } = &e else {
            panic!("{e}")
        };
        assert_eq!(peers.len(), 3);
        assert!(e.to_string().contains("ambiguous"), "{e}");
    }
}

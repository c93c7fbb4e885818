//! Friend names: what the user calls a friend on this node (`anna`), kept
//! in `agent_peers.name` and never sent anywhere. A name picks one friend,
//! so names are unique ignoring case (Unicode case folding here, ASCII in
//! the `agent_peers_name` index of migration 4); an empty name is "no name".

use porfiry_protocol::item::audience::valid_peer_id;

use crate::error::{Result, StorageError};
use crate::record::Stored;
use crate::store::Store;

use super::peers::Friend;

/// Longest friend name, in characters: long enough for "grandma's tablet",
/// short enough to fit a `notes list` line beside the note.
pub const MAX_FRIEND_NAME_CHARS: usize = 32;

/// Checks a friend name: 1 to [`MAX_FRIEND_NAME_CHARS`] characters, no
/// whitespace at either end, no control characters, no `@` (it marks a
/// mention), and not a peer id itself (a name must never be mistaken for
/// another friend's id).
pub fn check_friend_name(name: &str) -> Result<()> {
    let bad = |why: &str| {
        Err(StorageError::invalid(
            "friend name",
            format!("{name:?}: {why}"),
        ))
    };
    if valid_peer_id(name) {
        return bad("is a peer id; a name must not look like one");
    }
    let chars = name.chars().count();
    if chars == 0 || chars > MAX_FRIEND_NAME_CHARS {
        return bad(&format!("1 to {MAX_FRIEND_NAME_CHARS} characters"));
    }
    if name.trim() != name {
        return bad("whitespace at the start or end");
    }
    if name.contains('@') {
        return bad("no '@' (it marks a mention)");
    }
    if name.chars().any(char::is_control) {
        return bad("no control characters");
    }
    Ok(())
}

/// Whether two names are the same name (ignoring case).
pub fn same_name(a: &str, b: &str) -> bool {
    a.to_lowercase() == b.to_lowercase()
}

impl Store {
    /// Friends whose name is `name` ignoring case: none or one, unless the
    /// file was edited by hand.
    pub fn friends_named(&self, name: &str) -> Result<Vec<Stored<Friend>>> {
        if name.is_empty() {
            return Ok(Vec::new());
        }
        Ok(self
            .friends()?
            .into_iter()
            .filter(|f| same_name(&f.row.name, name))
            .collect())
    }

    /// Refuses `name` when a friend other than `peer_id` has it
    /// ([`StorageError::NameTaken`], naming that friend).
    pub(crate) fn check_name_free(&self, name: &str, peer_id: &str) -> Result<()> {
        match self
            .friends_named(name)?
            .into_iter()
            .find(|f| f.row.peer_id != peer_id)
        {
            Some(holder) => Err(StorageError::NameTaken {
                name: name.to_owned(),
                holder: holder.row.name,
                peer_id: holder.row.peer_id,
            }),
            None => Ok(()),
        }
    }

    /// Names (or with `""` un-names) a friend: the name is checked
    /// ([`check_friend_name`]) and must be free ([`StorageError::NameTaken`]);
    /// an unknown friend is [`StorageError::NotFound`].
    pub fn set_friend_name(&self, peer_id: &str, name: &str, now_ms: u64) -> Result<()> {
        if !name.is_empty() {
            check_friend_name(name)?;
        }
        self.transaction(|s| {
            if !name.is_empty() {
                s.check_name_free(name, peer_id)?;
            }
            s.set_columns_by::<Friend>(
                "peer_id",
                &peer_id,
                || format!("peer {peer_id}"),
                "name = ?",
                &[&name],
                now_ms,
            )
        })
    }
}

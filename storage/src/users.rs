//! `users` (people who talk to the agent) and `users_group`.

use std::collections::BTreeMap;

use rusqlite::types::Value;

use crate::error::{Result, StorageError};
use crate::query::Filter;
use crate::record::{Stored, record};
use crate::store::Store;

record! {
    /// A user of the agent.
    pub struct User in "users" search ["username", "did", "mail"] check check_user {
        /// Display name (not unique).
        pub username: String,
        /// Decentralised identifier, unique when set.
        pub did: Option<String>,
        /// E-mail, unique when set.
        pub mail: Option<String>,
        /// Password hash (never the password).
        pub password_hash: Option<String>,
        /// Free-form information.
        pub info: BTreeMap<String, serde_json::Value> as json,
        /// Other contacts (matrix, telegram, …).
        pub contacts: Vec<String> as json,
        /// Preferred languages, most preferred first (`ru`, `en`).
        pub languages: Vec<String> as json,
        /// May operate the agent.
        pub operator: bool,
        /// Banned until this time (Unix ms), if banned.
        pub banned_until: Option<u64>,
    }
}

fn check_user(u: &User) -> Result<()> {
    if u.username.trim().is_empty() && u.did.is_none() && u.mail.is_none() {
        return Err(StorageError::invalid(
            "user",
            "needs a username, did or mail",
        ));
    }
    Ok(())
}

record! {
    /// A named group of users.
    pub struct UserGroup in "users_group" search ["name", "description"] check check_group {
        /// Unique name.
        pub name: String,
        /// What the group is.
        pub description: String,
        /// Member user ids.
        pub members: Vec<i64> as json,
    }
}

fn check_group(g: &UserGroup) -> Result<()> {
    if g.name.trim().is_empty() {
        return Err(StorageError::invalid("user group", "name is empty"));
    }
    Ok(())
}

impl Store {
    /// The user with this DID, if any.
    pub fn user_by_did(&self, did: &str) -> Result<Option<Stored<User>>> {
        let mut f = Filter::default();
        f.and("did = ?", [Value::Text(did.to_owned())]);
        Ok(self.select::<User>(&f, "id", 1, 0)?.pop())
    }

    /// The groups `user_id` belongs to, by name.
    pub fn groups_of_user(&self, user_id: i64) -> Result<Vec<Stored<UserGroup>>> {
        let mut f = Filter::default();
        f.and(
            "EXISTS (SELECT 1 FROM json_each(members) WHERE json_each.value = ?)",
            [Value::Integer(user_id)],
        );
        self.select::<UserGroup>(&f, "name", u32::MAX, 0)
    }
}

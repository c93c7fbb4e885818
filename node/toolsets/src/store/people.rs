//! The people the agent knows (seed 003: "для управления пользователями
//! `users` и группами пользователей `users_group`"): `users` and `groups`
//! list, add and delete. The model never sets a password hash or makes
//! anyone an operator: those are the owner's (CLI, API), so a user added
//! here is an ordinary one. A group's members are user ids (`#1, #2`).

use porfiry_skills::{ArgSpec, Args, Language};
use porfiry_storage::{User, UserGroup};

use super::parse;
use super::records::{FromArgs, Shown, list_add_delete_set};
use super::set::{Fail, StoreSet};
use crate::StoreTools;
use crate::texts::store_replies as texts;

/// Members one group may list when added: a family or a team, not a city.
pub const MAX_GROUP_MEMBERS: usize = 64;

impl Shown for User {
    /// Name, DID, mail and languages; never the password hash.
    fn line(&self, _lang: Language) -> String {
        let mut out = self.username.clone();
        for extra in [&self.did, &self.mail].into_iter().flatten() {
            out.push_str(&format!(" <{extra}>"));
        }
        if !self.languages.is_empty() {
            out.push_str(&format!(" [{}]", self.languages.join(", ")));
        }
        if self.operator {
            out.push_str(" (operator)");
        }
        out
    }
}

impl Shown for UserGroup {
    fn line(&self, _lang: Language) -> String {
        let members: Vec<String> = self.members.iter().map(|m| format!("#{m}")).collect();
        format!(
            "{} — {} [{}]",
            self.name,
            self.description,
            members.join(", ")
        )
    }
}

/// The `users` set.
pub(crate) fn users(deps: &StoreTools) -> StoreSet {
    let add = vec![
        ArgSpec::word("name"),
        ArgSpec::word("mail").optional(),
        ArgSpec::text("languages").optional(),
    ];
    list_add_delete_set::<User>("users", deps, add)
}

impl FromArgs for User {
    fn from_args(lang: Language, args: &Args) -> Result<Self, Fail> {
        Ok(User {
            username: parse::non_empty(lang, "name", args.text("name"))?,
            mail: parse::opt(args, "mail"),
            languages: parse::tags(args.text("languages"))?,
            ..Default::default()
        })
    }
}

/// The `groups` set (`users_group`).
pub(crate) fn groups(deps: &StoreTools) -> StoreSet {
    let add = vec![
        ArgSpec::word("name"),
        ArgSpec::text("description").optional(),
        ArgSpec::text("members").optional(),
    ];
    list_add_delete_set::<UserGroup>("groups", deps, add)
}

impl FromArgs for UserGroup {
    fn from_args(lang: Language, args: &Args) -> Result<Self, Fail> {
        let mut members = Vec::new();
        for item in args
            .text("members")
            .split([',', ' '])
            .map(str::trim)
            .filter(|s| !s.is_empty())
        {
            let id = item
                .trim_start_matches('#')
                .parse::<i64>()
                .ok()
                .filter(|id| *id > 0)
                .ok_or_else(|| Fail::Bad(texts::bad_number(lang, "members", item)))?;
            if !members.contains(&id) {
                members.push(id);
            }
        }
        if members.len() > MAX_GROUP_MEMBERS {
            return Err(Fail::Bad(texts::too_many(
                lang,
                "members",
                MAX_GROUP_MEMBERS,
            )));
        }
        Ok(UserGroup {
            name: parse::non_empty(lang, "name", args.text("name"))?,
            description: args.text("description").trim().to_owned(),
            members,
        })
    }
}

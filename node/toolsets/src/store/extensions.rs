//! What the agent extends itself with, as metadata only: `scripts`
//! (`agent_scripts`, kept as text and never run), `tables` (`agent_tables`,
//! definitions never executed), `services` (`external_services`) and
//! `accounts` (`external_accounts`, whose secret is only ever named by its
//! `secret_ref`, never stored or shown). Each lists, adds and deletes.

use porfiry_skills::{ArgSpec, Args, Language};
use porfiry_storage::{AgentScript, AgentTable, ExternalAccount, ExternalService};

use super::parse;
use super::records::{FromArgs, Shown, list_add_delete_set, tag_suffix};
use super::set::{Fail, StoreSet};
use crate::StoreTools;
use crate::texts::store_replies as texts;

/// The version a script added by a tool gets (`name` + version is unique).
const FIRST_VERSION: &str = "1";

/// Longest `secret_ref`: an env var or keyring entry name, not a secret.
pub const MAX_SECRET_REF_CHARS: usize = 64;

impl Shown for AgentScript {
    fn line(&self, _lang: Language) -> String {
        format!(
            "{} v{} ({}) — {}{}",
            self.name,
            self.version,
            self.language,
            self.description,
            tag_suffix(&self.tags)
        )
    }

    fn set_author(&mut self, llm: Option<String>) {
        self.llm_id = llm;
    }
}

impl Shown for AgentTable {
    fn line(&self, _lang: Language) -> String {
        format!("{} — {}", self.table_name, self.description)
    }

    fn set_author(&mut self, llm: Option<String>) {
        self.llm_id = llm;
    }
}

impl Shown for ExternalService {
    /// Name, kind, address and description; its settings stay out.
    fn line(&self, _lang: Language) -> String {
        format!(
            "{} ({}) {} — {}",
            self.name, self.kind, self.url, self.description
        )
    }
}

impl Shown for ExternalAccount {
    /// Login and service, and only the *name* of where its secret is.
    fn line(&self, lang: Language) -> String {
        let secret = self
            .secret_ref
            .as_ref()
            .map(|r| format!(", secret_ref {r}"))
            .unwrap_or_default();
        format!(
            "{} @ {} #{}{secret} — {}",
            self.login,
            texts::noun(lang, "external_services"),
            self.service_id,
            self.description
        )
    }
}

/// The `scripts` set.
pub(crate) fn scripts(deps: &StoreTools) -> StoreSet {
    let add = vec![
        ArgSpec::word("name"),
        ArgSpec::word("language"),
        ArgSpec::text("description"),
        ArgSpec::text("code"),
    ];
    list_add_delete_set::<AgentScript>("scripts", deps, add)
}

impl FromArgs for AgentScript {
    fn from_args(lang: Language, args: &Args) -> Result<Self, Fail> {
        Ok(AgentScript {
            name: parse::non_empty(lang, "name", args.text("name"))?,
            version: FIRST_VERSION.to_owned(),
            language: parse::non_empty(lang, "language", args.text("language"))?,
            description: args.text("description").trim().to_owned(),
            code: parse::non_empty(lang, "code", args.text("code"))?,
            ..Default::default()
        })
    }
}

/// The `tables` set.
pub(crate) fn tables(deps: &StoreTools) -> StoreSet {
    let add = vec![
        ArgSpec::word("name"),
        ArgSpec::text("description"),
        ArgSpec::text("schema"),
    ];
    list_add_delete_set::<AgentTable>("tables", deps, add)
}

impl FromArgs for AgentTable {
    fn from_args(lang: Language, args: &Args) -> Result<Self, Fail> {
        Ok(AgentTable {
            table_name: parse::non_empty(lang, "name", args.text("name"))?,
            description: args.text("description").trim().to_owned(),
            schema: parse::non_empty(lang, "schema", args.text("schema"))?,
            ..Default::default()
        })
    }
}

/// The `services` set.
pub(crate) fn services(deps: &StoreTools) -> StoreSet {
    let add = vec![
        ArgSpec::word("name"),
        ArgSpec::word("kind"),
        ArgSpec::word("url"),
        ArgSpec::text("description").optional(),
    ];
    list_add_delete_set::<ExternalService>("services", deps, add)
}

impl FromArgs for ExternalService {
    fn from_args(lang: Language, args: &Args) -> Result<Self, Fail> {
        Ok(ExternalService {
            name: parse::non_empty(lang, "name", args.text("name"))?,
            kind: args.text("kind").trim().to_owned(),
            url: args.text("url").trim().to_owned(),
            description: args.text("description").trim().to_owned(),
            ..Default::default()
        })
    }
}

/// The `accounts` set.
pub(crate) fn accounts(deps: &StoreTools) -> StoreSet {
    let add = vec![
        ArgSpec::int("service"),
        ArgSpec::word("login"),
        ArgSpec::word("secret_ref").optional(),
        ArgSpec::text("description").optional(),
    ];
    list_add_delete_set::<ExternalAccount>("accounts", deps, add)
}

/// Whether `r` looks like the name of a place (`MAIL_PASSWORD`,
/// `keyring:mail/bob`) rather than a secret with spaces or symbols.
fn is_reference(r: &str) -> bool {
    !r.is_empty()
        && r.chars().count() <= MAX_SECRET_REF_CHARS
        && r.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '/' | '-'))
}

impl FromArgs for ExternalAccount {
    fn from_args(lang: Language, args: &Args) -> Result<Self, Fail> {
        let secret_ref = parse::opt(args, "secret_ref");
        if secret_ref.as_deref().is_some_and(|r| !is_reference(r)) {
            return Err(Fail::Bad(texts::secret_ref_bad(lang).to_owned()));
        }
        Ok(ExternalAccount {
            service_id: parse::id(lang, args, "service")?,
            login: parse::non_empty(lang, "login", args.text("login"))?,
            secret_ref,
            description: args.text("description").trim().to_owned(),
        })
    }
}

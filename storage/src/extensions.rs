//! What the agent extends itself with: `external_services`, the
//! `external_accounts` on them (secrets referenced, never stored),
//! `agent_scripts` and `agent_tables`.

use std::collections::BTreeMap;

use rusqlite::types::Value;

use crate::error::{Result, StorageError};
use crate::query::Filter;
use crate::record::{Stored, record};
use crate::store::Store;

fn non_empty(what: &str, fields: &[&str]) -> Result<()> {
    if fields.iter().any(|f| f.trim().is_empty()) {
        return Err(StorageError::invalid(what, "required text is empty"));
    }
    Ok(())
}

record! {
    /// An external service (search API, mail server, messenger bridge).
    pub struct ExternalService in "external_services" search ["name", "kind", "description"] check check_service {
        /// Unique name.
        pub name: String,
        /// Kind (`search`, `mail`, `rss`, …).
        pub kind: String,
        /// Where it is.
        pub url: String,
        /// What it offers.
        pub description: String,
        /// Settings (no secrets).
        pub config: BTreeMap<String, serde_json::Value> as json,
    }
}

fn check_service(s: &ExternalService) -> Result<()> {
    non_empty("external service", &[&s.name])
}

record! {
    /// An account on an external service (must exist; deleted with it).
    pub struct ExternalAccount in "external_accounts" search ["login", "description"] check check_account {
        /// The service's id.
        pub service_id: i64,
        /// Login name.
        pub login: String,
        /// Where the secret is (env var, keyring entry), never the secret.
        pub secret_ref: Option<String>,
        /// Notes.
        pub description: String,
    }
}

fn check_account(a: &ExternalAccount) -> Result<()> {
    non_empty("external account", &[&a.login])
}

record! {
    /// A script or utility the agent wrote; unique per (name, version).
    pub struct AgentScript in "agent_scripts" search ["name", "description", "code"] marks [Tagged] check check_script {
        /// Name.
        pub name: String,
        /// Version.
        pub version: String,
        /// Language (`python`, `bash`, …).
        pub language: String,
        /// The code.
        pub code: String,
        /// What it does.
        pub description: String,
        /// Tags.
        pub tags: Vec<String> as tags,
        /// The LLM that wrote it.
        pub llm_id: Option<String>,
    }
}

fn check_script(s: &AgentScript) -> Result<()> {
    non_empty("agent script", &[&s.name, &s.version, &s.language, &s.code])
}

record! {
    /// An extra table the agent defined: its name and schema text. This crate
    /// records the definition only; it never runs the schema.
    pub struct AgentTable in "agent_tables" search ["table_name", "description"] check check_table {
        /// Unique table name.
        pub table_name: String,
        /// What it holds.
        pub description: String,
        /// Its SQL schema text.
        pub schema: String,
        /// The LLM that defined it.
        pub llm_id: Option<String>,
    }
}

fn check_table(t: &AgentTable) -> Result<()> {
    non_empty("agent table", &[&t.table_name, &t.schema])
}

impl Store {
    /// The accounts on one service, oldest first.
    pub fn accounts_of_service(&self, service_id: i64) -> Result<Vec<Stored<ExternalAccount>>> {
        let mut f = Filter::default();
        f.and("service_id = ?", [Value::Integer(service_id)]);
        self.select::<ExternalAccount>(&f, "created, id", u32::MAX, 0)
    }
}

//! `porfiry llm add|remove`: the models in this node's `llm_registry` —
//! the cognitive core's main model (`--main`), its validators
//! (`--validator`, seed 003 §6) and others the core may switch to or hand
//! tasks to. The key is never stored: `--api-key-env` names the variable
//! that holds it. `llm list` shows these rows too.

use clap::Args;
use porfiry_storage::{LlmConfig, LlmEntry, Store, Stored};
use serde::Serialize;

/// Arguments of `llm add`.
#[derive(Debug, Clone, Args)]
pub struct AddArgs {
    /// A unique name for the model in this node.
    #[arg(value_name = "NAME")]
    pub name: String,
    /// Base URL of an OpenAI-compatible server, or a friend's peer id.
    #[arg(long, value_name = "URL")]
    pub url: String,
    /// Model name as the server knows it.
    #[arg(long, value_name = "MODEL")]
    pub model: String,
    /// Asks the seed's validation question about each reply of the core.
    #[arg(long)]
    pub validator: bool,
    /// The cognitive core's main model (the previous main one is unselected).
    #[arg(long)]
    pub main: bool,
    /// The env var holding the API key, if the server needs one.
    #[arg(long, value_name = "VAR")]
    pub api_key_env: Option<String>,
    /// A line on what the model is good at.
    #[arg(long, default_value = "")]
    pub description: String,
}

/// A registry row as `llm list` shows it (never a key).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct RegistryModel {
    /// Its name.
    pub name: String,
    /// URL or peer id.
    pub endpoint: String,
    /// The model name.
    pub model: String,
    /// The core's main model.
    pub main: bool,
    /// A validator.
    pub validator: bool,
}

impl From<Stored<LlmEntry>> for RegistryModel {
    fn from(r: Stored<LlmEntry>) -> Self {
        Self {
            name: r.row.name,
            endpoint: r.row.endpoint,
            model: r.row.model,
            main: r.row.is_main,
            validator: r.row.is_validator,
        }
    }
}

/// Adds a model; what to print.
pub fn add(store: &Store, args: &AddArgs, now_ms: u64) -> porfiry_storage::Result<String> {
    let entry = LlmEntry {
        name: args.name.clone(),
        endpoint: args.url.clone(),
        model: args.model.clone(),
        description: args.description.clone(),
        is_validator: args.validator,
        config: LlmConfig {
            api_key_env: args.api_key_env.clone(),
            ..Default::default()
        },
        ..Default::default()
    };
    let id = store.transaction(|s| {
        let id = s.add(&entry, now_ms)?;
        if args.main {
            s.llm_select_main(id, now_ms)?;
        }
        Ok(id)
    })?;
    let mut roles = Vec::new();
    if args.main {
        roles.push("main");
    }
    if args.validator {
        roles.push("validator");
    }
    let roles = if roles.is_empty() {
        String::new()
    } else {
        format!(" ({})", roles.join(", "))
    };
    Ok(format!(
        "added model {} #{id}: {} at {}{roles}",
        args.name, args.model, args.url
    ))
}

/// Why `llm remove` changed nothing.
#[derive(Debug, thiserror::Error)]
pub enum RemoveError {
    /// No row has that name.
    #[error("no model named {0:?} (see `porfiry llm list`)")]
    Unknown(String),
    /// The database failed.
    #[error(transparent)]
    Storage(#[from] porfiry_storage::StorageError),
}

/// Removes the model named `name`; what to print.
pub fn remove(store: &Store, name: &str) -> Result<String, RemoveError> {
    match store.llm_by_name(name)? {
        Some(row) => {
            store.delete::<LlmEntry>(row.id)?;
            Ok(format!("removed model {name}"))
        }
        None => Err(RemoveError::Unknown(name.to_owned())),
    }
}

/// The registry's rows, by name.
pub fn registry(store: &Store) -> porfiry_storage::Result<Vec<RegistryModel>> {
    let mut rows: Vec<RegistryModel> = store
        .list::<LlmEntry>(&porfiry_storage::ListQuery {
            limit: Some(porfiry_storage::limits::MAX_LIST_LIMIT),
            ..Default::default()
        })?
        .into_iter()
        .map(RegistryModel::from)
        .collect();
    rows.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(rows)
}

/// One line per registry row.
pub fn registry_lines(rows: &[RegistryModel]) -> Vec<String> {
    if rows.is_empty() {
        return vec!["registry: empty (porfiry llm add NAME --url URL --model M)".to_owned()];
    }
    rows.iter()
        .map(|r| {
            let mut roles = Vec::new();
            if r.main {
                roles.push("main");
            }
            if r.validator {
                roles.push("validator");
            }
            format!(
                "registry {}  model: {}  at: {}{}",
                r.name,
                r.model,
                r.endpoint,
                if roles.is_empty() {
                    String::new()
                } else {
                    format!("  [{}]", roles.join(", "))
                }
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(name: &str, main: bool, validator: bool) -> AddArgs {
        AddArgs {
            name: name.into(),
            url: "http://127.0.0.1:9/v1".into(),
            model: "m".into(),
            validator,
            main,
            api_key_env: None,
            description: String::new(),
        }
    }

    #[test]
    fn add_main_moves_the_main_mark_and_remove_deletes_by_name() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::create(tmp.path().join("n.db")).unwrap();
        assert_eq!(
            add(&store, &args("a", true, false), 1).unwrap(),
            "added model a #1: m at http://127.0.0.1:9/v1 (main)"
        );
        add(&store, &args("b", true, true), 2).unwrap();
        let rows = registry(&store).unwrap();
        assert_eq!(
            rows.iter()
                .map(|r| (r.name.as_str(), r.main, r.validator))
                .collect::<Vec<_>>(),
            [("a", false, false), ("b", true, true)]
        );
        assert!(registry_lines(&rows)[1].ends_with("[main, validator]"));
        assert_eq!(remove(&store, "a").unwrap(), "removed model a");
        let err = remove(&store, "a").unwrap_err().to_string();
        assert!(err.contains("no model named \"a\""), "{err}");
        assert_eq!(registry(&store).unwrap().len(), 1);
    }

    #[test]
    fn a_duplicate_name_is_refused_and_nothing_changes() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::create(tmp.path().join("n.db")).unwrap();
        add(&store, &args("a", true, false), 1).unwrap();
        assert!(add(&store, &args("a", false, true), 2).is_err());
        let rows = registry(&store).unwrap();
        assert_eq!(rows.len(), 1);
        assert!(rows[0].main && !rows[0].validator);
    }
}

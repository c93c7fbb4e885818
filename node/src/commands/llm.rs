//! `porfiry llm list [--json]`: the model this node would use itself (from
//! `--llm-url`/`--llm-model` or their env vars) and the models friends
//! offer it (their `LlmAddress` advertisements, with the friend's peer id),
//! each with whether the friend is reachable now. Reachability comes from
//! the running daemon (`GET /api/status` at the address it wrote to
//! `<data-dir>/api-address`, with the token in `<data-dir>/api-token`);
//! without a daemon it is "unknown (node not running)". It also lists the
//! node's registry, which `porfiry llm add|remove` edit
//! ([`crate::commands::llm_registry`]).

use std::collections::BTreeSet;
use std::time::Duration;

use clap::Subcommand;
use serde::Serialize;

use crate::commands::api_start::api_address_path;
use crate::commands::llm_flags::{HalfConfiguredModel, OptionalLlmArgs};
use crate::commands::llm_registry::{self, AddArgs, RegistryModel};
use porfiry_api::token::token_path;
use porfiry_mesh::data_dir::DataDir;
use porfiry_mesh::friends::{FriendsError, friend_names, open};
use porfiry_mesh::sharing::SharingError;
use porfiry_mesh::sharing::offload::{Candidate, offload_candidates};

/// How long `llm list` waits for the daemon's status: a local process
/// answers in milliseconds; a hung one must not hang the command.
pub const STATUS_TIMEOUT: Duration = Duration::from_secs(3);

/// What `llm list` says about reachability when no daemon answers.
pub const NOT_RUNNING: &str = "unknown (node not running)";

/// `porfiry llm …`
#[derive(Debug, Subcommand)]
pub enum LlmCommand {
    /// List the local model and the models friends offer, with the
    /// friend's peer id and whether it is reachable now.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// The local model (same flags as `porfiry run`).
        #[command(flatten)]
        llm: OptionalLlmArgs,
    },
    /// Add a model to this node's registry (the cognitive core's main
    /// model, a validator, or one it may switch to).
    Add(AddArgs),
    /// Remove a model from the registry by name.
    Remove {
        /// Its name.
        #[arg(value_name = "NAME")]
        name: String,
    },
}

/// Why an `llm` command failed.
#[derive(Debug, thiserror::Error)]
pub enum LlmListError {
    /// The node could not be opened.
    #[error(transparent)]
    Friends(#[from] FriendsError),
    /// Only one of the model flags.
    #[error(transparent)]
    Flags(#[from] HalfConfiguredModel),
    /// `--model-file` with a server's flags.
    #[error(transparent)]
    ModelFile(#[from] crate::commands::model_file_flags::ModelFileConflict),
    /// The advertisements could not be read.
    #[error(transparent)]
    Sharing(#[from] SharingError),
    /// JSON output failed.
    #[error("cannot print JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// The registry refused the change (a duplicate name, a bad row).
    #[error(transparent)]
    Registry(#[from] porfiry_storage::StorageError),
    /// `llm add` refused the row (a bad `--file`, a duplicate name).
    #[error(transparent)]
    Add(#[from] llm_registry::AddError),
    /// `llm remove` of a name the registry lacks.
    #[error(transparent)]
    Remove(#[from] llm_registry::RemoveError),
}

/// The local model as listed.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct LocalModel {
    /// The model name.
    pub model: String,
    /// The server's base URL.
    pub url: String,
}

/// A friend's model as listed.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct FriendModel {
    /// The advertisement.
    #[serde(flatten)]
    pub candidate: Candidate,
    /// What this node calls the friend, if it named it.
    pub name: Option<String>,
    /// Connected now; `None` when no daemon answered.
    pub reachable: Option<bool>,
}

/// What `llm list --json` prints.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct LlmList {
    /// The local model, if the flags name one.
    pub local: Option<LocalModel>,
    /// Friends' models.
    pub friends: Vec<FriendModel>,
    /// Whether a running daemon answered.
    pub node_running: bool,
    /// The models in this node's registry (`llm add`).
    pub registry: Vec<RegistryModel>,
}

/// Runs one `llm` command; returns what to print.
pub fn llm(dir: &DataDir, command: &LlmCommand) -> Result<String, LlmListError> {
    let (json, llm) = match command {
        LlmCommand::List { json, llm } => (json, llm),
        LlmCommand::Add(args) => {
            let (_, store) = open(dir)?;
            return Ok(llm_registry::add(
                &store,
                args,
                porfiry_mesh::clock::now_ms(),
            )?);
        }
        LlmCommand::Remove { name } => {
            let (_, store) = open(dir)?;
            return Ok(llm_registry::remove(&store, name)?);
        }
    };
    let list = list(dir, llm)?;
    if *json {
        return Ok(serde_json::to_string_pretty(&list)?);
    }
    Ok(to_text(&list))
}

/// The listing.
pub fn list(dir: &DataDir, llm: &OptionalLlmArgs) -> Result<LlmList, LlmListError> {
    let local = match llm.model_file()? {
        Some(path) => {
            let entry = crate::commands::model_file_flags::file_entry(path);
            Some(LocalModel {
                model: entry.model,
                url: entry.endpoint,
            })
        }
        None => llm.target()?.map(|t| LocalModel {
            model: t.model.clone(),
            url: t.base_url.clone(),
        }),
    };
    let (_, store) = open(dir)?;
    let candidates = offload_candidates(&store)?;
    let registry = llm_registry::registry(&store)?;
    let names = friend_names(&store)?;
    drop(store);
    let connected = connected_friends(dir);
    let friends = candidates
        .into_iter()
        .map(|candidate| FriendModel {
            name: names.get(&candidate.peer).cloned(),
            reachable: connected.as_ref().map(|c| c.contains(&candidate.peer)),
            candidate,
        })
        .collect();
    Ok(LlmList {
        local,
        friends,
        node_running: connected.is_some(),
        registry,
    })
}

fn to_text(list: &LlmList) -> String {
    let mut lines = vec![match &list.local {
        Some(l) => format!("local: {} at {}", l.model, l.url),
        None => "local: none (no --llm-url and --llm-model, no --model-file)".to_owned(),
    }];
    if list.friends.is_empty() {
        lines.push("friends: none offer a model".to_owned());
    }
    for f in &list.friends {
        let c = &f.candidate;
        let context = c.context.map_or("-".to_owned(), |n| n.to_string());
        let reachable = match f.reachable {
            Some(true) => "yes",
            Some(false) => "no",
            None => NOT_RUNNING,
        };
        let who = match &f.name {
            Some(name) => format!("{name} ({})", c.peer),
            None => c.peer.clone(),
        };
        lines.push(format!(
            "friend {who}  model: {}  context: {context}  concurrency: {}  reachable: {reachable}",
            c.model, c.concurrency
        ));
    }
    lines.extend(llm_registry::registry_lines(&list.registry));
    lines.extend(validator_advice(&list.registry));
    lines.join("\n")
}

/// The core's validator warning for this registry (none with two or more).
fn validator_advice(registry: &[llm_registry::RegistryModel]) -> Option<String> {
    let validators: Vec<&str> = registry
        .iter()
        .filter(|m| m.validator)
        .map(|m| m.name.as_str())
        .collect();
    let main = registry.iter().find(|m| m.main).map(|m| m.name.as_str());
    porfiry_agent::cognition::advice::validator_advice(&validators, main)
}

/// Peer ids of the friends the running daemon is connected to; `None`
/// when no daemon answers (no address file, no token, refused, timeout).
fn connected_friends(dir: &DataDir) -> Option<BTreeSet<String>> {
    let addr = std::fs::read_to_string(api_address_path(dir)).ok()?;
    let token = std::fs::read_to_string(token_path(dir)).ok()?;
    let url = format!("http://{}/api/status", addr.trim());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .ok()?;
    let status: serde_json::Value = rt.block_on(async {
        let client = reqwest::Client::builder()
            .timeout(STATUS_TIMEOUT)
            .build()
            .ok()?;
        let response = client
            .get(url)
            .bearer_auth(token.trim())
            .send()
            .await
            .ok()?;
        if !response.status().is_success() {
            return None;
        }
        response.json().await.ok()
    })?;
    let friends = status.get("friends")?.as_array()?;
    Some(
        friends
            .iter()
            .filter(|f| f.get("connected").and_then(serde_json::Value::as_bool) == Some(true))
            .filter_map(|f| f.get("peer_id")?.as_str().map(str::to_owned))
            .collect(),
    )
}

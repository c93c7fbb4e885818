//! The offload flags of `porfiry run`: whether this node offers its model
//! to friends (`--offload`, `--offload-capacity`, `--offload-per-friend`),
//! and which model the node itself uses (`--llm-url`/`--llm-model`, a local
//! GGUF with `--model-file`, a friend's with `--llm-peer` /
//! `PORFIRY_LLM_PEER`, the registry's main model, or one learned from
//! friends' advertisements). Parsed and checked before anything starts,
//! like `--api`; the result ([`OffloadPlan`]) is what `run` hands to the
//! offload server and the model choice.

use clap::Args;

use std::path::PathBuf;

use crate::commands::llm_flags::{HalfConfiguredModel, OptionalLlmArgs};
use crate::commands::model_file_flags::ModelFileConflict;
use porfiry_agent::llm::LlmTarget;
use porfiry_agent::llm::constrained::{Backend, CannotConstrain, ConstrainedMode};
use porfiry_agent::llm::local::{EngineOptions, endpoint_file};
use porfiry_agent::llm::registry_models::parse_endpoint;
use porfiry_mesh::data_dir::DataDir;
use porfiry_mesh::friends::{FriendsError, open, parse_peer_id, resolve_friend};
use porfiry_mesh::net::PeerId;
use porfiry_mesh::sharing::offload::OfferedModel;
use porfiry_storage::LlmEntry;

/// Requests served at once for all friends together, by default: one, what
/// a local model server (Ollama, llama.cpp) runs in parallel out of the box.
pub const DEFAULT_OFFLOAD_CAPACITY: u32 = 1;

/// Requests served at once for one friend, by default: one, so a single
/// friend cannot take every slot.
pub const DEFAULT_OFFLOAD_PER_FRIEND: u32 = 1;

/// Flags of `porfiry run` about offload.
#[derive(Debug, Clone, Args)]
pub struct OffloadArgs {
    /// Use this friend's model (its peer id, `12D3KooW…`, or its name)
    /// instead of a local one; excludes --llm-url.
    #[arg(long, env = "PORFIRY_LLM_PEER", value_name = "PEER")]
    pub llm_peer: Option<String>,
    /// Offer this node's model (--llm-url and --llm-model) to friends
    /// allowed to offload (`porfiry friends offload PEER on`), and advertise
    /// it to friends. Off by default.
    #[arg(long)]
    pub offload: bool,
    /// With --offload: requests served at once, all friends together.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_OFFLOAD_CAPACITY,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub offload_capacity: u32,
    /// With --offload: requests served at once for one friend.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_OFFLOAD_PER_FRIEND,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub offload_per_friend: u32,
}

impl Default for OffloadArgs {
    fn default() -> Self {
        OffloadArgs {
            llm_peer: None,
            offload: false,
            offload_capacity: DEFAULT_OFFLOAD_CAPACITY,
            offload_per_friend: DEFAULT_OFFLOAD_PER_FRIEND,
        }
    }
}

/// Whether and how much this node serves friends' requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OffloadSettings {
    /// Serve allowed friends (and advertise the model).
    pub enabled: bool,
    /// Requests at once, all friends together.
    pub capacity: u32,
    /// Requests at once, per friend.
    pub per_friend: u32,
}

/// Which model the node itself uses.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelChoice {
    /// A local (or remote HTTP) OpenAI-compatible server.
    Url(LlmTarget),
    /// A local GGUF run by the embedded engine (`--model-file`).
    File(PathBuf),
    /// This friend's model over `/porfiry/offload/1`.
    Peer(PeerId),
    /// No model flags, and the registry has a main model (a URL, a file or
    /// a friend's peer id): that one.
    Registry(LlmEntry),
    /// No model flags and no registry main model: a model learned from
    /// friends' advertisements
    /// (`porfiry_mesh::sharing::offload::offload_candidates`), if any.
    Learned,
}

impl ModelChoice {
    /// Where the model runs, as `/api/status` and the family page show it.
    pub fn source(&self) -> porfiry_api::backend::ModelSource {
        let (kind, detail) = match self {
            ModelChoice::Url(target) => ("server", target.base_url.clone()),
            ModelChoice::File(path) => (
                "file",
                path.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| path.display().to_string()),
            ),
            ModelChoice::Peer(peer) => ("friend", peer.to_string()),
            ModelChoice::Registry(entry) => ("registry", entry.name.clone()),
            ModelChoice::Learned => ("friends", String::new()),
        };
        porfiry_api::backend::ModelSource { kind, detail }
    }

    /// Which model this is and where it came from, for `porfiry run`'s
    /// `model: …` line.
    pub fn describe(&self) -> String {
        match self {
            ModelChoice::Url(t) => format!("{} at {} (from --llm-url)", t.model, t.base_url),
            ModelChoice::File(path) => {
                format!("{} (embedded, from --model-file)", path.display())
            }
            ModelChoice::Peer(peer) => format!("friend {peer}'s (from --llm-peer)"),
            ModelChoice::Registry(entry) => format!(
                "{} ({} at {}; the registry's main model)",
                entry.name, entry.model, entry.endpoint
            ),
            ModelChoice::Learned => {
                "whichever friend offers one (no model flags, no main model in the registry)"
                    .to_owned()
            }
        }
    }

    /// The kind of backend it is, for `--constrained` (a registry row with
    /// an unusable endpoint counts as a server: it fails when called).
    pub fn backend(&self) -> Backend {
        match self {
            ModelChoice::Url(_) => Backend::Http,
            ModelChoice::File(_) => Backend::Engine,
            ModelChoice::Registry(entry) => {
                parse_endpoint(&entry.endpoint).map_or(Backend::Http, |e| e.backend())
            }
            ModelChoice::Peer(_) | ModelChoice::Learned => Backend::Friend,
        }
    }

    /// The local file this model runs from, if it is one.
    pub fn file(&self) -> Option<PathBuf> {
        match self {
            ModelChoice::File(path) => Some(path.clone()),
            ModelChoice::Registry(entry) => endpoint_file(&entry.endpoint),
            _ => None,
        }
    }

    /// Whether this node runs the model itself (a server it reaches, or a
    /// file): what `--offload` can offer.
    pub fn is_own(&self) -> bool {
        match self {
            ModelChoice::Url(_) | ModelChoice::File(_) => true,
            ModelChoice::Registry(entry) => {
                let e = entry.endpoint.trim().to_ascii_lowercase();
                e.starts_with("http://") || e.starts_with("https://") || e.starts_with("file:")
            }
            ModelChoice::Peer(_) | ModelChoice::Learned => false,
        }
    }
}

/// The offload flags, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct OffloadPlan {
    /// The node's own model.
    pub model: ModelChoice,
    /// Serving friends.
    pub settings: OffloadSettings,
    /// How a local model file is run.
    pub engine: EngineOptions,
    /// `--constrained`.
    pub constrained: ConstrainedMode,
}

/// Why the model or offload flags are unusable.
#[derive(Debug, thiserror::Error)]
pub enum OffloadFlagsError {
    /// Only one of --llm-url and --llm-model.
    #[error(transparent)]
    HalfConfigured(#[from] HalfConfiguredModel),
    /// Both a local model and a friend's.
    #[error(
        "--llm-peer and --llm-url both name a model: pick one (a friend's model or a local one)"
    )]
    PeerAndUrl,
    /// A bad peer id after --llm-peer.
    #[error("--llm-peer: {0}")]
    BadPeer(#[from] FriendsError),
    /// --offload without a local model to offer.
    #[error(
        "--offload offers this node's model to friends: give --llm-url and --llm-model, or \
         --model-file, or set a main model with `porfiry llm add … --main`"
    )]
    NothingToOffer,
    /// --model-file with another model.
    #[error(transparent)]
    ModelFile(#[from] ModelFileConflict),
    /// --constrained on with a model that cannot follow a grammar.
    #[error(transparent)]
    Constrained(#[from] CannotConstrain),
}

impl OffloadArgs {
    /// These flags with a friend's name after --llm-peer replaced by its
    /// peer id, read from the node in `dir`. A peer id, or no --llm-peer,
    /// needs no database; a name without a node there is an error.
    pub fn with_peer_resolved(&self, dir: &DataDir) -> Result<OffloadArgs, OffloadFlagsError> {
        let Some(given) = &self.llm_peer else {
            return Ok(self.clone());
        };
        if parse_peer_id(given).is_ok() {
            return Ok(self.clone());
        }
        let (_, store) = open(dir)?;
        let peer = resolve_friend(&store, given)?;
        Ok(OffloadArgs {
            llm_peer: Some(peer.to_string()),
            ..self.clone()
        })
    }
}

impl OffloadPlan {
    /// Checks the flags together.
    pub fn from_args(
        llm: &OptionalLlmArgs,
        offload: &OffloadArgs,
    ) -> Result<OffloadPlan, OffloadFlagsError> {
        let target = llm.target()?;
        let file = llm.model_file()?;
        let model = match (file, target, &offload.llm_peer) {
            (Some(_), _, Some(_)) => {
                return Err(ModelFileConflict::with("llm-peer", "PORFIRY_LLM_PEER").into());
            }
            // `model_file()` has refused a file together with --llm-url.
            (Some(path), _, None) => ModelChoice::File(path.to_owned()),
            (None, Some(_), Some(_)) => return Err(OffloadFlagsError::PeerAndUrl),
            (None, Some(t), None) => ModelChoice::Url(t),
            (None, None, Some(p)) => ModelChoice::Peer(parse_peer_id(p)?),
            (None, None, None) => ModelChoice::Learned,
        };
        if offload.offload && matches!(model, ModelChoice::Peer(_)) {
            return Err(OffloadFlagsError::NothingToOffer);
        }
        Ok(OffloadPlan {
            model,
            settings: OffloadSettings {
                enabled: offload.offload,
                capacity: offload.offload_capacity,
                per_friend: offload.offload_per_friend,
            },
            engine: llm.file.engine_options(),
            constrained: llm.constrained.mode(),
        })
    }

    /// With no model flags, the registry's main model (`main`) when there
    /// is one; then `--offload` needs a model of this node's own, and
    /// `--constrained on` one that can follow a grammar.
    pub fn with_registry_main(
        mut self,
        main: Option<LlmEntry>,
    ) -> Result<OffloadPlan, OffloadFlagsError> {
        if let (ModelChoice::Learned, Some(entry)) = (&self.model, main) {
            self.model = ModelChoice::Registry(entry);
        }
        if self.settings.enabled && !self.model.is_own() {
            return Err(OffloadFlagsError::NothingToOffer);
        }
        let model = match &self.model {
            ModelChoice::Learned => "a model learned from friends".to_owned(),
            ModelChoice::Peer(peer) => format!("friend {peer}'s model"),
            other => other.describe(),
        };
        self.constrained.check(self.model.backend(), &model)?;
        Ok(self)
    }

    /// `constrained decoding: …`, the line `porfiry run` prints after its model's.
    pub fn describe_constrained(&self) -> String {
        format!(
            "constrained decoding: {}",
            self.constrained.describe(self.model.backend())
        )
    }

    /// What to advertise to friends: the local model when offload is on;
    /// `None` (retract any earlier advertisement) otherwise.
    pub fn offer(&self) -> Option<OfferedModel> {
        if !self.settings.enabled || !self.model.is_own() {
            return None;
        }
        let model = match &self.model {
            ModelChoice::Url(t) => t.model.clone(),
            ModelChoice::File(path) => path
                .file_stem()
                .map_or_else(|| "model".to_owned(), |s| s.to_string_lossy().into_owned()),
            ModelChoice::Registry(entry) => entry.model.clone(),
            ModelChoice::Peer(_) | ModelChoice::Learned => return None,
        };
        Some(OfferedModel {
            model,
            features: vec!["chat".to_owned()],
            context_tokens: None,
            concurrency: self.settings.capacity,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::llm_flags::LlmCallArgs;

    const PEER: &str = "12D3KooWD3eckifWpRn9wQpMG9R9hX3sD158z7EqHWmweQAJU5SA";

    #[test]
    fn each_choice_says_where_its_model_runs() {
        let url = ModelChoice::Url(LlmTarget::new("http://127.0.0.1:11434/v1", "qwen"));
        let file = ModelChoice::File(PathBuf::from("/models/smollm2.gguf"));
        let peer = ModelChoice::Peer(PEER.parse().unwrap());
        let seen: Vec<(&str, String)> = [url, file, peer, ModelChoice::Learned]
            .iter()
            .map(|c| {
                let s = c.source();
                (s.kind, s.detail)
            })
            .collect();
        assert_eq!(
            seen,
            [
                ("server", "http://127.0.0.1:11434/v1".to_owned()),
                ("file", "smollm2.gguf".to_owned()),
                ("friend", PEER.to_owned()),
                ("friends", String::new()),
            ]
        );
    }

    fn llm(url: Option<&str>, model: Option<&str>) -> OptionalLlmArgs {
        OptionalLlmArgs {
            llm_url: url.map(str::to_owned),
            llm_model: model.map(str::to_owned),
            call: LlmCallArgs {
                llm_timeout_secs: 7,
                llm_retries: 1,
            },
            file: Default::default(),
            constrained: Default::default(),
        }
    }

    fn off(peer: Option<&str>, on: bool) -> OffloadArgs {
        OffloadArgs {
            llm_peer: peer.map(str::to_owned),
            offload: on,
            ..OffloadArgs::default()
        }
    }

    #[test]
    fn the_model_is_a_url_a_peer_or_learned_and_never_both() {
        let p =
            OffloadPlan::from_args(&llm(Some("http://h/v1"), Some("m")), &off(None, true)).unwrap();
        assert!(matches!(p.model, ModelChoice::Url(_)));
        assert_eq!(p.offer().unwrap().model, "m");
        assert_eq!(p.offer().unwrap().concurrency, DEFAULT_OFFLOAD_CAPACITY);
        let p = OffloadPlan::from_args(&llm(None, None), &off(Some(PEER), false)).unwrap();
        assert_eq!(p.model, ModelChoice::Peer(PEER.parse().unwrap()));
        assert!(p.offer().is_none());
        let p = OffloadPlan::from_args(&llm(None, None), &off(None, false)).unwrap();
        assert_eq!(p.model, ModelChoice::Learned);
        let e = OffloadPlan::from_args(
            &llm(Some("http://h/v1"), Some("m")),
            &off(Some(PEER), false),
        )
        .unwrap_err();
        assert!(e.to_string().contains("pick one"), "{e}");
        let e = OffloadPlan::from_args(&llm(None, None), &off(Some("nope"), false)).unwrap_err();
        assert!(e.to_string().contains("--llm-peer"), "{e}");
        let e = OffloadPlan::from_args(&llm(None, None), &off(None, true))
            .unwrap()
            .with_registry_main(None)
            .unwrap_err();
        assert!(e.to_string().contains("--llm-url"), "{e}");
        let e = OffloadPlan::from_args(&llm(None, None), &off(Some(PEER), true)).unwrap_err();
        assert!(e.to_string().contains("--offload"), "{e}");
        let p = OffloadPlan::from_args(&llm(Some("http://h/v1"), Some("m")), &off(None, false))
            .unwrap();
        assert!(p.offer().is_none(), "offload off: nothing advertised");
    }

    #[test]
    fn a_model_file_is_the_model_offered_and_excludes_a_peer() {
        let mut with_file = llm(None, None);
        with_file.file.model_file = Some("/m/smol.gguf".into());
        let p = OffloadPlan::from_args(&with_file, &off(None, true)).unwrap();
        assert_eq!(p.model, ModelChoice::File("/m/smol.gguf".into()));
        assert_eq!(p.model.file(), Some("/m/smol.gguf".into()));
        assert_eq!(p.offer().unwrap().model, "smol");
        assert!(p.model.describe().contains("--model-file"));
        let e = OffloadPlan::from_args(&with_file, &off(Some(PEER), false)).unwrap_err();
        assert!(e.to_string().contains("--model-file and --llm-peer"), "{e}");
    }

    #[test]
    fn without_model_flags_the_registry_main_model_is_used_and_says_so() {
        let main = LlmEntry {
            name: "smol".into(),
            endpoint: "file:/m/smol.gguf".into(),
            model: "smol".into(),
            ..Default::default()
        };
        let p = OffloadPlan::from_args(&llm(None, None), &off(None, true))
            .unwrap()
            .with_registry_main(Some(main.clone()))
            .unwrap();
        assert_eq!(p.model, ModelChoice::Registry(main));
        assert_eq!(p.model.file(), Some("/m/smol.gguf".into()));
        assert!(p.model.describe().contains("registry's main model"));
        assert_eq!(p.offer().unwrap().model, "smol");
        // Flags win over the registry.
        let p = OffloadPlan::from_args(&llm(Some("http://h/v1"), Some("m")), &off(None, false))
            .unwrap()
            .with_registry_main(Some(LlmEntry::default()))
            .unwrap();
        assert!(matches!(p.model, ModelChoice::Url(_)));
        // A friend's model in the registry cannot be offered on.
        let friend = LlmEntry {
            endpoint: PEER.into(),
            ..Default::default()
        };
        let e = OffloadPlan::from_args(&llm(None, None), &off(None, true))
            .unwrap()
            .with_registry_main(Some(friend))
            .unwrap_err();
        assert!(e.to_string().contains("--offload"), "{e}");
    }

    #[test]
    fn llm_peer_takes_a_friends_name() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::new(tmp.path().join("node"));
        // A name needs the node's friends; there is no node yet.
        let e = off(Some("anna"), false)
            .with_peer_resolved(&dir)
            .unwrap_err();
        assert!(e.to_string().contains("no node"), "{e}");
        // A peer id needs no node at all.
        let same = off(Some(PEER), false).with_peer_resolved(&dir).unwrap();
        assert_eq!(same.llm_peer.as_deref(), Some(PEER));
        porfiry_mesh::init::init(&dir, porfiry_skills::Language::default()).unwrap();
        let (_, store) = porfiry_mesh::friends::open(&dir).unwrap();
        let anna = porfiry_storage::Friend {
            peer_id: PEER.to_owned(),
            name: "Anna".to_owned(),
            ..Default::default()
        };
        store.add_friend(&anna, 1).unwrap();
        let resolved = off(Some("anna"), false).with_peer_resolved(&dir).unwrap();
        assert_eq!(resolved.llm_peer.as_deref(), Some(PEER));
        let p = OffloadPlan::from_args(&llm(None, None), &resolved).unwrap();
        assert_eq!(p.model, ModelChoice::Peer(PEER.parse().unwrap()));
        let e = off(Some("bob"), false)
            .with_peer_resolved(&dir)
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("--llm-peer: no friend named \"bob\""),
            "{e}"
        );
    }

    #[test]
    fn constrained_on_is_refused_for_a_friends_model_and_kept_for_a_server() {
        let mut on = llm(None, None);
        on.constrained.constrained = ConstrainedMode::On;
        let peer = OffloadPlan::from_args(&on, &off(Some(PEER), false)).unwrap();
        let e = peer.with_registry_main(None).unwrap_err().to_string();
        assert!(
            e.contains(&format!("friend {PEER}'s model cannot be constrained")),
            "{e}"
        );
        let learned = OffloadPlan::from_args(&on, &off(None, false)).unwrap();
        assert!(learned.with_registry_main(None).is_err());
        let mut served = llm(Some("http://h/v1"), Some("m"));
        served.constrained.constrained = ConstrainedMode::On;
        let plan = OffloadPlan::from_args(&served, &off(None, false))
            .unwrap()
            .with_registry_main(None)
            .unwrap();
        let ModelChoice::Url(target) = &plan.model else {
            panic!("{:?}", plan.model);
        };
        assert!(target.send_grammar, "on sends the grammar to the server");
        assert!(
            plan.describe_constrained()
                .starts_with("constrained decoding: on")
        );
        let auto = OffloadPlan::from_args(&llm(None, None), &off(Some(PEER), false))
            .unwrap()
            .with_registry_main(None)
            .unwrap();
        assert_eq!(
            auto.describe_constrained(),
            "constrained decoding: off (a friend's model gets no grammar over offload)"
        );
    }

    #[test]
    fn each_model_choice_is_its_kind_of_backend() {
        let row = |endpoint: &str| {
            ModelChoice::Registry(LlmEntry {
                endpoint: endpoint.to_owned(),
                ..LlmEntry::default()
            })
        };
        let kinds = [
            ModelChoice::Url(LlmTarget::new("http://h/v1", "m")),
            ModelChoice::File("/m.gguf".into()),
            ModelChoice::Peer(PEER.parse().unwrap()),
            ModelChoice::Learned,
            row("file:/m.gguf"),
            row(PEER),
            row("not an endpoint"),
        ]
        .map(|m| m.backend());
        use Backend::*;
        assert_eq!(kinds, [Http, Engine, Friend, Friend, Engine, Friend, Http]);
    }
}

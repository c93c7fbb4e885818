//! What an app passes to [`crate::PorfiryNode::start`]: [`NodeSettings`],
//! checked before anything is created, so a bad setting leaves no data dir
//! behind and says which setting was wrong.

use std::path::PathBuf;
use std::time::Duration;

use porfiry_agent::llm::constrained::{Backend, ConstrainedMode};

use porfiry_mesh::data_dir::DataDir;
use porfiry_mesh::net::{Multiaddr, Profile};
use porfiry_skills::Language;
use porfiry_toolsets::CatalogSource;

use crate::error::PorfiryError;
use crate::think_policy::{DEFAULT_THINK_TICKS_PER_HOUR, MAX_THINK_TICKS_PER_HOUR};

/// Where the node runs as on the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum NodeProfile {
    /// Never listens, dials its friends, sleeps between uses.
    Phone,
    /// Listens (at `listen`) and stays up.
    Server,
}

/// The model the node's agent chats with.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Enum)]
pub enum ModelSource {
    /// A GGUF file on the device, run by the embedded llama.cpp engine.
    File {
        /// The file's path.
        path: String,
    },
    /// An OpenAI-compatible server (`http://host:port/v1`).
    Url {
        /// The base URL `/chat/completions` is appended to.
        url: String,
        /// The model's name on that server.
        model: String,
    },
    /// A friend's model, by the friend's peer id (it must allow us).
    Friend {
        /// The friend's peer id.
        peer_id: String,
    },
}

/// How to start a node.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct NodeSettings {
    /// The node's folder (created when missing); one node per folder.
    pub data_dir: String,
    /// Phone or server.
    pub profile: NodeProfile,
    /// Addresses a server listens on (`/ip4/127.0.0.1/tcp/0`); a phone none.
    pub listen: Vec<String>,
    /// The chat model; `None`: chat answers that no model is set.
    pub model: Option<ModelSource>,
    /// `en` or `ru`: the language of every text the model sees.
    pub language: String,
    /// How the model's replies are decoded: `auto` (the reply grammar for
    /// a model file, as `porfiry chat --model-file`; none for a server or
    /// a friend), `on` (a server is sent the grammar too; refused for a
    /// friend's model, which cannot follow one) or `off`. `None`: `auto`.
    #[uniffi(default = None)]
    pub constrained: Option<String>,
    /// Seconds a toolset stays active after its last use. `None`: 600
    /// (seed 000 §5: ten minutes).
    #[uniffi(default = None)]
    pub toolset_idle_secs: Option<u64>,
    /// The `media` toolset's films: `sample` (the built-in sample
    /// catalogue) or the path of a JSON catalogue file. `None`: the chat
    /// has no media set (a phone's player is the app's own).
    #[uniffi(default = None)]
    pub media_catalog: Option<String>,
    /// The thinking budget: cognitive-core ticks an hour, 0 to
    /// [`MAX_THINK_TICKS_PER_HOUR`] (0: the phone does not think). `None`:
    /// [`DEFAULT_THINK_TICKS_PER_HOUR`]. The core ticks only once the app
    /// has said the phone's conditions (`set_conditions`) and they allow it.
    #[uniffi(default = None)]
    pub think_ticks_per_hour: Option<u32>,
}

/// The longest a toolset may stay active after its last use: a day; a
/// longer time keeps every set's tools in every prompt.
pub const MAX_TOOLSET_IDLE_SECS: u64 = 24 * 3600;

/// [`NodeSettings`] checked.
#[derive(Debug, Clone)]
pub(crate) struct Checked {
    pub dir: DataDir,
    pub profile: Profile,
    pub listen: Vec<Multiaddr>,
    pub model: Option<ModelSource>,
    pub language: Language,
    pub constrained: ConstrainedMode,
    pub toolset_idle: Duration,
    pub media_catalog: Option<CatalogSource>,
    pub think_ticks_per_hour: u32,
}

impl NodeSettings {
    /// Every setting checked; nothing is created.
    pub(crate) fn check(&self) -> Result<Checked, PorfiryError> {
        let bad = |m: String| Err(PorfiryError::Config(m));
        if self.data_dir.trim().is_empty() {
            return bad("data_dir is empty: give the folder the node keeps its data in".into());
        }
        let profile = match self.profile {
            NodeProfile::Phone => Profile::Phone,
            NodeProfile::Server => Profile::Server,
        };
        let mut listen = Vec::new();
        for a in &self.listen {
            match a.parse::<Multiaddr>() {
                Ok(m) => listen.push(m),
                Err(e) => return bad(format!("listen address {a:?} is not a multiaddr: {e}")),
            }
        }
        if profile == Profile::Phone && !listen.is_empty() {
            return bad(
                "a phone never listens: leave listen empty or use the server profile".into(),
            );
        }
        let language = match self.language.parse::<Language>() {
            Ok(l) => l,
            Err(e) => return bad(format!("language {:?}: {e}", self.language)),
        };
        let constrained = match self.constrained.as_deref() {
            None => ConstrainedMode::Auto,
            Some(word) => match word.parse::<ConstrainedMode>() {
                Ok(mode) => mode,
                Err(_) => return bad(format!("constrained {word:?}: use auto, on or off")),
            },
        };
        if let Some(model) = &self.model {
            let backend = match model {
                ModelSource::File { .. } => Backend::Engine,
                ModelSource::Url { .. } => Backend::Http,
                ModelSource::Friend { .. } => Backend::Friend,
            };
            if let Err(e) = constrained.check(backend, "this model") {
                return bad(format!("constrained on: {e}"));
            }
        }
        let toolset_idle = match self.toolset_idle_secs {
            None => Duration::from_millis(porfiry_skills::limits::DEFAULT_TOOLSET_IDLE_MS),
            Some(secs @ 1..=MAX_TOOLSET_IDLE_SECS) => Duration::from_secs(secs),
            Some(secs) => {
                return bad(format!(
                    "toolset_idle_secs {secs}: 1 to {MAX_TOOLSET_IDLE_SECS} seconds"
                ));
            }
        };
        let think_ticks_per_hour = match self.think_ticks_per_hour {
            None => DEFAULT_THINK_TICKS_PER_HOUR,
            Some(n @ 0..=MAX_THINK_TICKS_PER_HOUR) => n,
            Some(n) => {
                return bad(format!(
                    "think_ticks_per_hour {n}: 0 to {MAX_THINK_TICKS_PER_HOUR}"
                ));
            }
        };
        let media_catalog = match self.media_catalog.as_deref() {
            None => None,
            Some("sample") => Some(CatalogSource::Sample),
            Some(path) if PathBuf::from(path).is_file() => {
                Some(CatalogSource::File(PathBuf::from(path)))
            }
            Some(path) => {
                return bad(format!(
                    "media_catalog {path:?}: give `sample` or an existing JSON file"
                ));
            }
        };
        match &self.model {
            Some(ModelSource::File { path }) if !PathBuf::from(path).is_file() => {
                return bad(format!("model file {path} does not exist"));
            }
            Some(ModelSource::Url { url, .. })
                if !(url.starts_with("http://") || url.starts_with("https://")) =>
            {
                return bad(format!("model url {url:?} is not http(s)"));
            }
            Some(ModelSource::Friend { peer_id })
                if peer_id.parse::<porfiry_mesh::PeerId>().is_err() =>
            {
                return bad(format!("model friend {peer_id:?} is not a peer id"));
            }
            _ => {}
        }
        Ok(Checked {
            dir: DataDir::new(PathBuf::from(&self.data_dir)),
            profile,
            listen,
            model: self.model.clone(),
            language,
            constrained,
            toolset_idle,
            media_catalog,
            think_ticks_per_hour,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> NodeSettings {
        NodeSettings {
            data_dir: "/tmp/x".into(),
            profile: NodeProfile::Phone,
            listen: Vec::new(),
            model: None,
            language: "en".into(),
            constrained: None,
            toolset_idle_secs: None,
            media_catalog: None,
            think_ticks_per_hour: None,
        }
    }

    #[test]
    fn each_bad_setting_is_named() {
        let cases: Vec<(NodeSettings, &str)> = vec![
            (
                NodeSettings {
                    data_dir: " ".into(),
                    ..settings()
                },
                "data_dir",
            ),
            (
                NodeSettings {
                    listen: vec!["/ip4/127.0.0.1/tcp/0".into()],
                    ..settings()
                },
                "phone never listens",
            ),
            (
                NodeSettings {
                    profile: NodeProfile::Server,
                    listen: vec!["tcp:1".into()],
                    ..settings()
                },
                "tcp:1",
            ),
            (
                NodeSettings {
                    language: "xx".into(),
                    ..settings()
                },
                "language",
            ),
            (
                NodeSettings {
                    model: Some(ModelSource::File {
                        path: "/nope.gguf".into(),
                    }),
                    ..settings()
                },
                "/nope.gguf",
            ),
            (
                NodeSettings {
                    model: Some(ModelSource::Url {
                        url: "ftp://h".into(),
                        model: "m".into(),
                    }),
                    ..settings()
                },
                "ftp://h",
            ),
            (
                NodeSettings {
                    model: Some(ModelSource::Friend {
                        peer_id: "anna".into(),
                    }),
                    ..settings()
                },
                "anna",
            ),
            (
                NodeSettings {
                    constrained: Some("maybe".into()),
                    ..settings()
                },
                "maybe",
            ),
            (
                NodeSettings {
                    constrained: Some("on".into()),
                    model: Some(ModelSource::Friend {
                        peer_id: "12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN".into(),
                    }),
                    ..settings()
                },
                "constrained on",
            ),
            (
                NodeSettings {
                    toolset_idle_secs: Some(0),
                    ..settings()
                },
                "toolset_idle_secs",
            ),
            (
                NodeSettings {
                    media_catalog: Some("/no/films.json".into()),
                    ..settings()
                },
                "/no/films.json",
            ),
            (
                NodeSettings {
                    think_ticks_per_hour: Some(61),
                    ..settings()
                },
                "think_ticks_per_hour",
            ),
        ];
        for (s, needle) in cases {
            let e = s.check().unwrap_err();
            assert!(matches!(e, PorfiryError::Config(_)), "{e:?}");
            assert!(e.to_string().contains(needle), "{e} lacks {needle}");
        }
        let checked = settings().check().unwrap();
        assert_eq!(checked.constrained, ConstrainedMode::Auto);
        assert_eq!(checked.toolset_idle, Duration::from_secs(600));
        let checked = NodeSettings {
            constrained: Some("off".into()),
            toolset_idle_secs: Some(30),
            ..settings()
        }
        .check()
        .unwrap();
        assert_eq!(checked.constrained, ConstrainedMode::Off);
        assert_eq!(checked.toolset_idle, Duration::from_secs(30));
    }
}

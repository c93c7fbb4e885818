//! What an app passes to [`crate::PorfiryNode::start`]: [`NodeSettings`],
//! checked before anything is created, so a bad setting leaves no data dir
//! behind and says which setting was wrong.

use std::path::PathBuf;

use porfiry_mesh::data_dir::DataDir;
use porfiry_mesh::net::{Multiaddr, Profile};
use porfiry_skills::Language;

use crate::error::PorfiryError;

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
}

/// [`NodeSettings`] checked.
#[derive(Debug, Clone)]
pub(crate) struct Checked {
    pub dir: DataDir,
    pub profile: Profile,
    pub listen: Vec<Multiaddr>,
    pub model: Option<ModelSource>,
    pub language: Language,
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
        ];
        for (s, needle) in cases {
            let e = s.check().unwrap_err();
            assert!(matches!(e, PorfiryError::Config(_)), "{e:?}");
            assert!(e.to_string().contains(needle), "{e} lacks {needle}");
        }
        assert!(settings().check().is_ok());
    }
}

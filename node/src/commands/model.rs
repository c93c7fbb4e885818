//! `porfiry model pull|list`: getting a GGUF onto this machine without a
//! browser. `pull NAME` takes a model from the built-in catalogue
//! (`porfiry_engine::pull::catalogue`, hashes pinned), `pull [NAME] --url URL
//! --sha256 HEX` any other file; either downloads into `<data-dir>/models/`
//! with a progress bar on stderr, resumes an interrupted download, keeps the
//! file only when its hash matches, and registers it (`llm add --file`) —
//! as the main model `porfiry run` uses when the registry has none. `pull
//! NAME --from FRIEND` takes the file from a friend's node instead
//! (`model_from_friend`).

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use porfiry_engine::pull::{
    self, CATALOGUE, CatalogueModel, HF_ENDPOINT, HF_ENDPOINT_ENV, Progress, Pulled, Sha256Digest,
    Source,
};
use porfiry_mesh::data_dir::DataDir;
use porfiry_mesh::init::{InitError, open_or_init};
use porfiry_storage::Store;
use serde::Serialize;

use crate::commands::llm_registry::{self, AddArgs};
use crate::commands::model_file_flags::file_entry;

/// `porfiry model …`
#[derive(Debug, Subcommand)]
pub enum ModelCommand {
    /// Download a model into `<data-dir>/models/` (resumed if interrupted,
    /// kept only if its SHA-256 matches) and register it; the main model
    /// when none is set.
    Pull(PullArgs),
    /// The catalogue `model pull` takes names from, and which are here.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Score a model on this node's tools: the built-in requests (English
    /// and Russian, with and without a tool to call) or a JSONL cases file,
    /// each in a fresh session of the API's agent.
    Score(crate::commands::model_score::ScoreArgs),
    /// Teach a local model this node's tools on this machine's CPU: the node
    /// writes the training data from its own agent (or reads --data),
    /// trains the top layers with llama.cpp's own training API, and
    /// registers the result (resumable; Ctrl-C saves a checkpoint).
    #[cfg(feature = "engine")]
    Teach(crate::commands::model_teach::TeachArgs),
}

/// Arguments of `model pull`.
#[derive(Debug, Clone, Args)]
pub struct PullArgs {
    /// A catalogue name (`porfiry model list`); with --url, the name to
    /// register the file under (default: the file's name).
    #[arg(value_name = "NAME", required_unless_present = "url")]
    pub name: Option<String>,
    /// Any other GGUF file's http(s) URL; needs --sha256.
    #[arg(long, value_name = "URL", requires = "sha256")]
    pub url: Option<String>,
    /// The file's SHA-256 (64 hex digits, as `sha256sum` prints it).
    #[arg(long, value_name = "HEX", requires = "url")]
    pub sha256: Option<String>,
    /// Take the model NAME from this friend's node (its peer id or name)
    /// instead of the Hub: the friend runs `porfiry run --share-models` and
    /// allows this node (`porfiry friends models PEER on`).
    #[arg(long, value_name = "FRIEND", requires = "name", conflicts_with_all = ["url", "sha256"])]
    pub from: Option<String>,
    /// Where catalogue models are fetched from: the Hugging Face Hub or a
    /// mirror of it.
    #[arg(long, value_name = "URL", env = HF_ENDPOINT_ENV, default_value = HF_ENDPOINT)]
    pub hf_endpoint: String,
}

/// Why a `model` command failed.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// A name the catalogue lacks.
    #[error(
        "no model {0:?} in the catalogue (see `porfiry model list`); for another file: porfiry model pull NAME --url URL --sha256 HEX"
    )]
    Unknown(String),
    /// A `--url` that is no download.
    #[error("--url {url}: {why}")]
    BadUrl {
        /// The URL.
        url: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// A `--sha256` that is no hash.
    #[error("--sha256: {0}")]
    BadDigest(#[from] pull::BadDigest),
    /// The download failed.
    #[error(transparent)]
    Pull(#[from] pull::PullError),
    /// The node's files could not be opened.
    #[error(transparent)]
    Node(#[from] InitError),
    /// The registry refused the row.
    #[error(transparent)]
    Register(#[from] llm_registry::AddError),
    /// The registry could not be read.
    #[error(transparent)]
    Storage(#[from] porfiry_storage::StorageError),
    /// JSON output failed.
    #[error("cannot print JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// A pull from a friend failed (boxed: its errors are large).
    #[error(transparent)]
    FromFriend(Box<crate::commands::model_from_friend::FromFriendError>),
}

impl From<crate::commands::model_from_friend::FromFriendError> for ModelError {
    fn from(e: crate::commands::model_from_friend::FromFriendError) -> Self {
        ModelError::FromFriend(Box::new(e))
    }
}

/// What to fetch, where to, and under which registry name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wanted {
    /// The download.
    pub source: Source,
    /// Its file name in `<data-dir>/models/`.
    pub file: String,
    /// Its registry name.
    pub name: String,
}

/// Resolves the arguments to a download, before anything is fetched.
pub fn wanted(args: &PullArgs) -> Result<Wanted, ModelError> {
    let Some(url) = &args.url else {
        let name = args.name.clone().unwrap_or_default();
        let model = pull::catalogue::find(&name).ok_or(ModelError::Unknown(name))?;
        return Ok(Wanted {
            source: Source {
                url: model.url(&args.hf_endpoint),
                sha256: model.digest(),
                bytes: model.bytes,
            },
            file: model.file.to_owned(),
            name: model.name.to_owned(),
        });
    };
    let bad = |why| ModelError::BadUrl {
        url: url.clone(),
        why,
    };
    let parsed = reqwest::Url::parse(url).map_err(|_| bad("not a URL"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(bad("only http:// and https:// downloads are supported"));
    }
    let sha256 = Sha256Digest::parse(args.sha256.as_deref().unwrap_or_default())?;
    let last = parsed
        .path_segments()
        .and_then(|mut s| s.next_back())
        .unwrap_or_default();
    let file = match (safe_file_name(last), &args.name) {
        (Some(file), _) => file,
        (None, Some(name)) => safe_file_name(&format!("{name}.gguf"))
            .ok_or_else(|| bad("NAME cannot be a file name"))?,
        (None, None) => {
            return Err(bad(
                "its path does not end in a .gguf file name; give a NAME",
            ));
        }
    };
    let name = args.name.clone().unwrap_or_else(|| {
        Path::new(&file)
            .file_stem()
            .map_or_else(|| file.clone(), |s| s.to_string_lossy().into_owned())
    });
    Ok(Wanted {
        source: Source {
            url: url.clone(),
            sha256,
            bytes: None,
        },
        file,
        name,
    })
}

/// `name` when it is a plain `.gguf` file name (no folders, no dots first).
fn safe_file_name(name: &str) -> Option<String> {
    let ok = name.len() > ".gguf".len()
        && name.to_ascii_lowercase().ends_with(".gguf")
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
    ok.then(|| name.to_owned())
}

/// `porfiry model pull`: downloads, verifies, registers; what to print.
pub async fn pull(dir: &DataDir, args: &PullArgs) -> Result<String, ModelError> {
    if let (Some(from), Some(name)) = (&args.from, &args.name) {
        return crate::commands::model_from_friend::pull_from(dir, name, from).await;
    }
    let wanted = wanted(args)?;
    let (_, store) = open_or_init(dir)?;
    let path = dir.models_dir().join(&wanted.file);
    let bar = progress_bar(&wanted.file);
    let mut on_progress = |p: Progress| match p {
        Progress::Started { total, from } => {
            if let Some(total) = total {
                bar.set_length(total);
            }
            bar.set_position(from);
        }
        Progress::Received(n) => bar.set_position(n),
    };
    let client = pull::client()?;
    let pulled = pull::pull(&client, &wanted.source, &path, &mut on_progress).await;
    bar.finish_and_clear();
    let pulled = pulled?;
    let mut lines = vec![pulled_line(&wanted, &pulled)];
    lines.push(register(&store, &wanted.name, &pulled.path)?);
    Ok(lines.join("\n"))
}

/// A bar on stderr (drawn only on a terminal): bytes, rate, time left.
pub(crate) fn progress_bar(file: &str) -> ProgressBar {
    let bar = ProgressBar::new(0);
    if let Ok(style) = ProgressStyle::with_template(
        "{msg} {bar:30} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
    ) {
        bar.set_style(style);
    }
    bar.set_message(file.to_owned());
    bar
}

/// How a pull got its file: `already here, hash verified`, `resumed from
/// 33 MB, sha256 verified` or `sha256 verified`.
pub(crate) fn how_pulled(already_here: bool, resumed_from: u64) -> String {
    if already_here {
        "already here, hash verified".to_owned()
    } else if resumed_from > 0 {
        format!(
            "resumed from {} MB, sha256 verified",
            resumed_from / 1_000_000
        )
    } else {
        "sha256 verified".to_owned()
    }
}

/// `pulled NAME: 98 MB into PATH (sha256 …)`.
fn pulled_line(wanted: &Wanted, pulled: &Pulled) -> String {
    let mb = pulled.bytes.div_ceil(1_000_000);
    let how = how_pulled(pulled.already_here, pulled.resumed_from);
    format!(
        "pulled {}: {mb} MB into {} ({how})",
        wanted.name,
        pulled.path.display()
    )
}

/// Registers the file under `name` unless that name is taken; main when
/// the registry has no main model.
pub(crate) fn register(store: &Store, name: &str, path: &Path) -> Result<String, ModelError> {
    let endpoint = file_entry(path).endpoint;
    if let Some(row) = store.llm_by_name(name)? {
        return Ok(if row.row.endpoint == endpoint {
            format!("model {name} is already registered")
        } else {
            format!(
                "a model named {name} is already registered (at {}); not registered again: porfiry llm add OTHER_NAME --file {}",
                row.row.endpoint,
                path.display()
            )
        });
    }
    let main = store.llm_main()?.is_none();
    let args = AddArgs {
        name: name.to_owned(),
        url: None,
        model: None,
        file: Some(path.to_owned()),
        chat_template: None,
        validator: false,
        main,
        api_key_env: None,
        description: String::new(),
        taught: None,
    };
    let mut said = llm_registry::add(store, &args, porfiry_mesh::clock::now_ms())?;
    if main {
        said.push_str("\nporfiry run now uses it as its main model (porfiry llm list)");
    }
    Ok(said)
}

/// A catalogue row as `model list` shows it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Listed {
    /// Its name.
    pub name: &'static str,
    /// What it is.
    pub about: &'static str,
    /// Its file name.
    pub file: &'static str,
    /// Where a pull fetches it from (at the default endpoint).
    pub url: String,
    /// The pinned hash.
    pub sha256: &'static str,
    /// Its size in MB, rounded.
    pub approx_mb: u32,
    /// The weights' licence.
    pub license: &'static str,
    /// Where it is, when a file of that name is in `<data-dir>/models/`.
    pub path: Option<PathBuf>,
}

/// The catalogue with what is here.
pub fn listing(dir: &DataDir) -> Vec<Listed> {
    CATALOGUE
        .iter()
        .map(|m: &CatalogueModel| {
            let path = dir.models_dir().join(m.file);
            Listed {
                name: m.name,
                about: m.about,
                file: m.file,
                url: m.url(HF_ENDPOINT),
                sha256: m.sha256,
                approx_mb: m.approx_mb,
                license: m.license,
                path: path.is_file().then_some(path),
            }
        })
        .collect()
}

/// Runs `model list`; what to print.
pub fn list(dir: &DataDir, json: bool) -> Result<String, ModelError> {
    let rows = listing(dir);
    if json {
        return Ok(serde_json::to_string_pretty(&rows)?);
    }
    Ok(rows
        .iter()
        .map(|r| {
            format!(
                "{:<14} {:>5} MB  {:<18} {:<10} {}",
                r.name,
                r.approx_mb,
                r.license,
                if r.path.is_some() { "downloaded" } else { "-" },
                r.about
            )
        })
        .collect::<Vec<_>>()
        .join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(name: Option<&str>, url: Option<&str>, sha: Option<&str>) -> PullArgs {
        PullArgs {
            name: name.map(str::to_owned),
            url: url.map(str::to_owned),
            sha256: sha.map(str::to_owned),
            from: None,
            hf_endpoint: "http://127.0.0.1:9".into(),
        }
    }

    const SHA: &str = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53";

    #[test]
    fn a_catalogue_name_resolves_at_the_endpoint_with_its_pinned_hash_and_size() {
        let w = wanted(&args(Some("smollm2-135m"), None, None)).unwrap();
        assert_eq!(w.name, "smollm2-135m");
        assert_eq!(w.file, "SmolLM2-135M-Instruct.Q4_1.gguf");
        assert!(w.source.url.starts_with("http://127.0.0.1:9/QuantFactory/"));
        assert_eq!(w.source.sha256.to_string(), SHA);
        assert_eq!(w.source.bytes, Some(98_362_432));
        let e = wanted(&args(Some("llama-70b"), None, None))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no model \"llama-70b\"") && e.contains("--url"),
            "{e}"
        );
    }

    #[test]
    fn a_url_gives_its_file_name_and_bad_urls_names_and_hashes_are_refused() {
        let w = wanted(&args(
            None,
            Some("https://x.org/a/Tiny-Q4.gguf?dl=1"),
            Some(SHA),
        ))
        .unwrap();
        assert_eq!(
            (w.file.as_str(), w.name.as_str()),
            ("Tiny-Q4.gguf", "Tiny-Q4")
        );
        let w = wanted(&args(
            Some("mine"),
            Some("https://x.org/get?id=3"),
            Some(SHA),
        ))
        .unwrap();
        assert_eq!((w.file.as_str(), w.name.as_str()), ("mine.gguf", "mine"));
        for (name, url, sha, says) in [
            (None, "https://x.org/get", SHA, "give a NAME"),
            (None, "ftp://x.org/a.gguf", SHA, "only http:// and https://"),
            (None, "not a url", SHA, "not a URL"),
            (None, "https://x.org/a.gguf", "abc", "64 hex digits"),
            (
                Some("../up"),
                "https://x.org/get",
                SHA,
                "NAME cannot be a file name",
            ),
            (None, "https://x.org/..%2F..%2Fa.gguf", SHA, "give a NAME"),
        ] {
            let e = wanted(&args(name, Some(url), Some(sha)))
                .unwrap_err()
                .to_string();
            assert!(e.contains(says), "{url}: {e}");
        }
    }

    #[test]
    fn a_pulled_file_is_registered_as_main_only_when_there_is_none_and_never_twice() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::create(tmp.path().join("n.db")).unwrap();
        let gguf = |name: &str| {
            use porfiry_engine::gguf::write::{Kv, file};
            let path = tmp.path().join(name);
            std::fs::write(
                &path,
                file(
                    &[
                        ("general.architecture", Kv::Str("llama")),
                        ("tokenizer.chat_template", Kv::Str("{{ messages }}")),
                    ],
                    4,
                    16,
                ),
            )
            .unwrap();
            path
        };
        let a = gguf("a.gguf");
        let said = register(&store, "a", &a).unwrap();
        assert!(
            said.contains("(main)") && said.contains("now uses it"),
            "{said}"
        );
        let said = register(&store, "b", &gguf("b.gguf")).unwrap();
        assert!(!said.contains("main"), "{said}");
        assert_eq!(
            register(&store, "a", &a).unwrap(),
            "model a is already registered"
        );
        let said = register(&store, "a", &gguf("c.gguf")).unwrap();
        assert!(
            said.contains("already registered (at file:") && said.contains("OTHER_NAME"),
            "{said}"
        );
        assert_eq!(store.llm_main().unwrap().unwrap().row.name, "a");
    }

    #[test]
    fn the_listing_marks_what_is_in_the_models_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::new(tmp.path());
        std::fs::create_dir_all(dir.models_dir()).unwrap();
        std::fs::write(dir.models_dir().join(CATALOGUE[0].file), b"x").unwrap();
        let rows = listing(&dir);
        assert_eq!(rows.len(), CATALOGUE.len());
        assert!(rows[0].path.is_some() && rows[1..].iter().all(|r| r.path.is_none()));
        let text = list(&dir, false).unwrap();
        assert!(
            text.lines().next().unwrap().contains("downloaded"),
            "{text}"
        );
        let json: serde_json::Value = serde_json::from_str(&list(&dir, true).unwrap()).unwrap();
        assert_eq!(json[0]["name"], "smollm2-135m");
        assert!(
            json[0]["url"]
                .as_str()
                .unwrap()
                .starts_with("https://huggingface.co/")
        );
    }
}

//! `porfiry llm add|remove`: the models in this node's `llm_registry` —
//! the cognitive core's main model (`--main`), its validators
//! (`--validator`, seed 003 §6) and others the core may switch to or hand
//! tasks to. The key is never stored: `--api-key-env` names the variable
//! that holds it. A local GGUF (`--file PATH.gguf`) is checked when added
//! and stored as `file:<absolute path>` (with `--chat-template`, the
//! template its prompts are formatted with); `llm list` shows these rows
//! too, a file's with its size, architecture, trained context and chat
//! template with where it came from (the file, its architecture, the flag).

use std::path::{Path, PathBuf};

use clap::Args;
use porfiry_agent::llm::local::{GgufError, GgufInfo, endpoint_file};
use porfiry_engine::template_choice::{Template, TemplateError, choose_template};
use porfiry_storage::{LlmConfig, LlmEntry, Store, Stored};
use serde::Serialize;

/// Arguments of `llm add`.
#[derive(Debug, Clone, Args)]
pub struct AddArgs {
    /// A unique name for the model in this node.
    #[arg(value_name = "NAME")]
    pub name: String,
    /// Base URL of an OpenAI-compatible server, or a friend's peer id.
    #[arg(
        long,
        value_name = "URL",
        required_unless_present = "file",
        conflicts_with = "file"
    )]
    pub url: Option<String>,
    /// Model name as the server knows it (with --file: default the file's name).
    #[arg(long, value_name = "MODEL", required_unless_present = "file")]
    pub model: Option<String>,
    /// A local GGUF model, run by the embedded engine; excludes --url.
    #[arg(long, value_name = "PATH.gguf")]
    pub file: Option<PathBuf>,
    /// With --file: the chat template (a llama.cpp name such as gemma or
    /// chatml, or a Jinja file) instead of the file's own, or for a file
    /// that has none and whose architecture decides none.
    #[arg(long, value_name = "NAME|FILE", requires = "file")]
    pub chat_template: Option<String>,
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
    /// Set by `model teach`, never a flag: where the model came from.
    #[arg(skip)]
    pub taught: Option<porfiry_storage::Taught>,
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
    /// For a local GGUF (`file:` endpoint): what its header says now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<FileModel>,
    /// For a model this node taught: its base, the data's hash, the date.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub taught: Option<porfiry_storage::Taught>,
}

/// A local model file as `llm list` shows it, read from its header.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct FileModel {
    /// The file's size in bytes (0 when unreadable).
    pub bytes: u64,
    /// `general.architecture`.
    pub architecture: Option<String>,
    /// The context it was trained for, in tokens.
    pub context: Option<u64>,
    /// The chat template its prompts are formatted with (`own`, a
    /// llama.cpp name such as `gemma`, or a Jinja file's path).
    pub template: Option<String>,
    /// Where that template came from: `file`, `architecture` or `flag`.
    pub template_source: Option<String>,
    /// Why the file is unusable now (moved, truncated, no template, …).
    pub problem: Option<String>,
}

impl FileModel {
    /// The file at `path` under the row's template flag, if any.
    fn read(path: &Path, template_flag: Option<&str>) -> Self {
        match porfiry_engine::inspect(path) {
            Ok(info) => Self::from_info(path, &info, template_flag),
            Err(e) => Self {
                bytes: std::fs::metadata(path).map_or(0, |m| m.len()),
                architecture: None,
                context: None,
                template: None,
                template_source: None,
                problem: Some(e.to_string()),
            },
        }
    }

    fn from_info(path: &Path, info: &GgufInfo, template_flag: Option<&str>) -> Self {
        let choice = choose_template(path, info, template_flag);
        let (template, template_source, problem) = match choice {
            Ok(c) => {
                let name = match &c.template {
                    Template::Own => "own".to_owned(),
                    Template::Named(name) => name.clone(),
                    Template::Jinja { path, .. } => path.display().to_string(),
                };
                (Some(name), Some(c.source.as_str().to_owned()), None)
            }
            Err(e) => (None, None, Some(e.to_string())),
        };
        Self {
            bytes: info.file_bytes,
            architecture: Some(info.architecture.clone()),
            context: info.context_length,
            template,
            template_source,
            problem,
        }
    }

    /// `size: 98 MB  arch: llama  context: 8192`, or the problem.
    fn describe(&self) -> String {
        if let Some(problem) = &self.problem {
            return format!("unusable: {problem}");
        }
        format!(
            "size: {} MB  arch: {}  context: {}  template: {} ({})",
            self.bytes.div_ceil(1_000_000),
            self.architecture.as_deref().unwrap_or("-"),
            self.context.map_or("-".to_owned(), |n| n.to_string()),
            self.template.as_deref().unwrap_or("-"),
            self.template_source.as_deref().unwrap_or("-"),
        )
    }
}

impl From<Stored<LlmEntry>> for RegistryModel {
    fn from(r: Stored<LlmEntry>) -> Self {
        let flag = r.row.config.chat_template.as_deref();
        let file = endpoint_file(&r.row.endpoint).map(|path| FileModel::read(&path, flag));
        Self {
            name: r.row.name,
            endpoint: r.row.endpoint,
            model: r.row.model,
            main: r.row.is_main,
            validator: r.row.is_validator,
            file,
            taught: r.row.config.taught,
        }
    }
}

/// Why `llm add` changed nothing.
#[derive(Debug, thiserror::Error)]
pub enum AddError {
    /// The `--file` is not a usable GGUF.
    #[error(transparent)]
    File(#[from] GgufError),
    /// No chat template can format the file's prompts.
    #[error(transparent)]
    Template(#[from] TemplateError),
    /// The registry refused the row (a duplicate name, a bad setting).
    #[error(transparent)]
    Storage(#[from] porfiry_storage::StorageError),
}

/// Adds a model; what to print.
pub fn add(store: &Store, args: &AddArgs, now_ms: u64) -> Result<String, AddError> {
    let (endpoint, model, file) = match &args.file {
        Some(path) => {
            let info = porfiry_engine::inspect(path)?;
            choose_template(path, &info, args.chat_template.as_deref())?;
            let entry = crate::commands::model_file_flags::file_entry(path);
            let model = args.model.clone().unwrap_or(entry.model);
            let file = FileModel::from_info(path, &info, args.chat_template.as_deref());
            (entry.endpoint, model, Some(file))
        }
        None => (
            args.url.clone().unwrap_or_default(),
            args.model.clone().unwrap_or_default(),
            None,
        ),
    };
    let entry = LlmEntry {
        name: args.name.clone(),
        endpoint: endpoint.clone(),
        model: model.clone(),
        description: args.description.clone(),
        is_validator: args.validator,
        config: LlmConfig {
            api_key_env: args.api_key_env.clone(),
            chat_template: args.chat_template.clone(),
            taught: args.taught.clone(),
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
    let details = file.map_or_else(String::new, |f| format!(" ({})", f.describe()));
    Ok(format!(
        "added model {} #{id}: {model} at {endpoint}{details}{roles}",
        args.name
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

/// `taught from BASE on 2026-12-06 (120 steps on 1,400 examples, data
/// sha256 0123abcd…)`.
pub fn taught_line(t: &porfiry_storage::Taught) -> String {
    let day = time::OffsetDateTime::from_unix_timestamp((t.at_ms / 1000) as i64)
        .map(|d| d.date().to_string())
        .unwrap_or_else(|_| "?".to_owned());
    let hash: String = t.data_sha256.chars().take(12).collect();
    format!(
        "taught from {} on {day} ({} steps on {} examples, data sha256 {hash}…)",
        t.base, t.steps, t.examples
    )
}

/// One line per registry row.
pub fn registry_lines(rows: &[RegistryModel]) -> Vec<String> {
    if rows.is_empty() {
        return vec![
            "registry: empty (porfiry llm add NAME --url URL --model M, or --file PATH.gguf)"
                .to_owned(),
        ];
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
            let mut file = r
                .file
                .as_ref()
                .map_or_else(String::new, |f| format!("  {}", f.describe()));
            if let Some(t) = &r.taught {
                file.push_str(&format!("  {}", taught_line(t)));
            }
            format!(
                "registry {}  model: {}  at: {}{file}{}",
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
            url: Some("http://127.0.0.1:9/v1".into()),
            model: Some("m".into()),
            file: None,
            chat_template: None,
            validator,
            main,
            api_key_env: None,
            description: String::new(),
            taught: None,
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

    /// A minimal GGUF header: architecture, context, a chat template, one
    /// F32 tensor (its data cut short unless `whole`).
    fn tiny_gguf(path: &Path, whole: bool) {
        tiny_gguf_of(path, "llama", true, whole);
    }

    /// Like [`tiny_gguf`] for `arch`, with or without a template.
    fn tiny_gguf_of(path: &Path, arch: &'static str, template: bool, whole: bool) {
        use porfiry_engine::gguf::write::{Kv, file};
        let context_key = format!("{arch}.context_length");
        let mut kv = vec![
            ("general.architecture", Kv::Str(arch)),
            (context_key.as_str(), Kv::U32(8192)),
        ];
        if template {
            kv.push(("tokenizer.chat_template", Kv::Str("{{ messages }}")));
        }
        std::fs::write(path, file(&kv, 4, if whole { 16 } else { 8 })).unwrap();
    }

    /// Issue 43 §1: a file without a template gets its architecture's, or
    /// needs `--chat-template`; `llm list` says which and whence.
    #[test]
    fn a_files_template_comes_from_it_its_architecture_or_the_flag() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::create(tmp.path().join("n.db")).unwrap();
        let add_file = |name: &str, path: &Path, template: Option<&str>| AddArgs {
            url: None,
            model: None,
            file: Some(path.to_owned()),
            chat_template: template.map(str::to_owned),
            ..args(name, false, false)
        };
        let gemma = tmp.path().join("gemma.gguf");
        tiny_gguf_of(&gemma, "gemma3", false, true);
        let said = add(&store, &add_file("g", &gemma, None), 1).unwrap();
        assert!(said.contains("template: gemma (architecture)"), "{said}");

        let base = tmp.path().join("base.gguf");
        tiny_gguf_of(&base, "llama", false, true);
        let e = add(&store, &add_file("b", &base, None), 2)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("base.gguf") && e.contains("--chat-template") && !e.contains('\n'),
            "{e}"
        );
        assert_eq!(registry(&store).unwrap().len(), 1, "nothing stored");
        let e = add(&store, &add_file("b", &base, Some("chatmlx")), 2).unwrap_err();
        assert!(e.to_string().contains("chatmlx"), "{e}");

        add(&store, &add_file("b", &base, Some("chatml")), 2).unwrap();
        let rows = registry(&store).unwrap();
        let lines = registry_lines(&rows);
        assert!(lines[0].contains("template: chatml (flag)"), "{}", lines[0]);
        assert!(
            lines[1].contains("template: gemma (architecture)"),
            "{}",
            lines[1]
        );
        let json = serde_json::to_value(&rows[0]).unwrap();
        assert_eq!(json["file"]["template"], "chatml");
        assert_eq!(json["file"]["template_source"], "flag");
    }

    #[test]
    fn a_file_model_is_checked_stored_as_file_endpoint_and_listed_with_its_header() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::create(tmp.path().join("n.db")).unwrap();
        let gguf = tmp.path().join("tiny.gguf");
        tiny_gguf(&gguf, true);
        let add_file = |name: &str, path: &Path| AddArgs {
            url: None,
            model: None,
            file: Some(path.to_owned()),
            ..args(name, true, false)
        };
        let said = add(&store, &add_file("tiny", &gguf), 1).unwrap();
        assert!(said.contains("tiny #1: tiny at file:/"), "{said}");
        assert!(said.contains("arch: llama  context: 8192"), "{said}");
        let rows = registry(&store).unwrap();
        let file = rows[0].file.as_ref().unwrap();
        assert_eq!(
            (file.architecture.as_deref(), file.context),
            (Some("llama"), Some(8192))
        );
        let line = &registry_lines(&rows)[0];
        assert!(
            line.contains("size: 1 MB  arch: llama  context: 8192  template: own (file)  [main]"),
            "{line}"
        );
        // A truncated file is refused and nothing is stored.
        let cut = tmp.path().join("cut.gguf");
        tiny_gguf(&cut, false);
        let e = add(&store, &add_file("cut", &cut), 2)
            .unwrap_err()
            .to_string();
        assert!(e.contains("cut.gguf") && e.contains("truncated"), "{e}");
        assert_eq!(registry(&store).unwrap().len(), 1);
        // A file that went away later is listed as unusable, not hidden.
        std::fs::remove_file(&gguf).unwrap();
        let line = &registry_lines(&registry(&store).unwrap())[0];
        assert!(
            line.contains("unusable: model file") && line.contains("does not exist"),
            "{line}"
        );
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

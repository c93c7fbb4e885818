//! `porfiry run`'s config file: TOML whose keys are `run`'s flags by their
//! long names (`listen = ["/ip4/0.0.0.0/tcp/4001"]`, `api = "127.0.0.1:4580"`,
//! `offload = true`, `data-dir = "/var/lib/porfiry"`), read from
//! `--config PATH` or, when it exists, [`DEFAULT_CONFIG_PATH`].
//!
//! The mapping is generic: every key becomes the flag of the same name
//! (`key = "v"` → `--key=v`, `key = true` → `--key`, `key = [a, b]` →
//! `--key=a --key=b`), checked by that flag's own parser, so a flag added to
//! `run` is a config key with no code here. A flag given on the command
//! line (or by its environment variable) wins over the file: the file's key,
//! and any file key that conflicts with it, is dropped. An unknown key or a
//! bad value is one line naming the file and the key; nothing starts.

use std::ffi::OsString;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use clap::parser::ValueSource;
use clap::{ArgAction, ArgMatches, Command};

/// Where a packaged node keeps its settings (the Debian package installs a
/// commented one there); read when it exists and no `--config` is given.
pub const DEFAULT_CONFIG_PATH: &str = "/etc/porfiry/porfiry.toml";

/// Largest config file read: 1 MiB. A settings file is a few hundred bytes;
/// anything near this is not one, and is refused rather than parsed.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// Flags that are not settings: clap's own and `--config` itself.
const NOT_KEYS: &[&str] = &["help", "version", "config"];

/// A config file that cannot be used: one line naming the file (and key).
#[derive(Debug, thiserror::Error)]
#[error("{file}: {what}")]
pub struct ConfigError {
    /// The config file.
    pub file: String,
    /// What is wrong, naming the key where one is to blame.
    pub what: String,
}

impl ConfigError {
    fn new(file: &Path, what: impl Into<String>) -> Self {
        Self {
            file: file.display().to_string(),
            what: what.into(),
        }
    }

    fn key(file: &Path, key: &str, what: impl std::fmt::Display) -> Self {
        Self::new(file, format!("key {key:?}: {what}"))
    }
}

/// The config file `run` reads: `--config`'s, or the default one when it
/// exists (`default` is [`DEFAULT_CONFIG_PATH`] outside tests).
pub fn config_path(run: &ArgMatches, default: &Path) -> Option<PathBuf> {
    match run.try_get_one::<PathBuf>("config") {
        Ok(Some(given)) => Some(given.clone()),
        _ => default.exists().then(|| default.to_path_buf()),
    }
}

/// Reads and parses the file (at most [`MAX_CONFIG_BYTES`]).
pub fn read_table(file: &Path) -> Result<toml::Table, ConfigError> {
    let opened = std::fs::File::open(file).map_err(|e| ConfigError::new(file, e.to_string()))?;
    let mut text = String::new();
    opened
        .take(MAX_CONFIG_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| ConfigError::new(file, e.to_string()))?;
    if text.len() as u64 > MAX_CONFIG_BYTES {
        return Err(ConfigError::new(
            file,
            format!("larger than {MAX_CONFIG_BYTES} bytes; not a settings file"),
        ));
    }
    text.parse::<toml::Table>().map_err(|e| {
        let line = e
            .span()
            .map(|s| text[..s.start.min(text.len())].lines().count().max(1));
        let message = e.message().trim().replace('\n', " ");
        match line {
            Some(line) => ConfigError::new(file, format!("line {line}: {message}")),
            None => ConfigError::new(file, message),
        }
    })
}

/// Whether the user gave flag `id` on the command line or by its
/// environment variable (both win over the file).
pub fn given_outside_file(matches: &ArgMatches, id: &str) -> bool {
    matches!(
        matches
            .try_get_raw(id)
            .ok()
            .and_then(|_| matches.value_source(id)),
        Some(ValueSource::CommandLine | ValueSource::EnvVariable)
    )
}

/// The flags the file's `table` stands for, for `run` (a built [`Command`]);
/// keys whose flag (or a flag conflicting with it) `given` says the user
/// gave are left out. Each value is checked by its flag's own parser.
pub fn file_args(
    run: &Command,
    table: &toml::Table,
    given: &dyn Fn(&str) -> bool,
    file: &Path,
) -> Result<Vec<OsString>, ConfigError> {
    let mut out = Vec::new();
    for (key, value) in table {
        let arg = run
            .get_arguments()
            .find(|a| a.get_long() == Some(key.as_str()) && !NOT_KEYS.contains(&key.as_str()))
            .ok_or_else(|| ConfigError::new(file, format!("unknown key {key:?}")))?;
        let id = arg.get_id().as_str();
        let overridden = given(id)
            || run.get_arguments().any(|other| {
                given(other.get_id().as_str())
                    && (run.get_arg_conflicts_with(arg).contains(&other)
                        || run.get_arg_conflicts_with(other).contains(&arg))
            });
        if overridden {
            continue;
        }
        let switch = !arg.get_action().takes_values();
        let many = matches!(arg.get_action(), ArgAction::Append);
        let values: Vec<String> = match value {
            toml::Value::Boolean(on) if switch => {
                let sets = matches!(arg.get_action(), ArgAction::SetTrue | ArgAction::SetFalse);
                if *on && sets {
                    out.push(OsString::from(format!("--{key}")));
                }
                continue;
            }
            _ if switch => return Err(ConfigError::key(file, key, "is a switch: true or false")),
            toml::Value::Array(items) if many => items
                .iter()
                .map(|item| {
                    scalar(item)
                        .ok_or_else(|| ConfigError::key(file, key, "a list of plain values only"))
                })
                .collect::<Result<_, _>>()?,
            toml::Value::Array(_) => {
                return Err(ConfigError::key(file, key, "takes one value, not a list"));
            }
            other => {
                vec![scalar(other).ok_or_else(|| {
                    ConfigError::key(file, key, "takes a plain value, not a table")
                })?]
            }
        };
        let flags: Vec<OsString> = values
            .iter()
            .map(|v| OsString::from(format!("--{key}={v}")))
            .collect();
        // The key alone through `run`'s parser: its own value checks, and
        // an error that can only be this key's.
        run.clone()
            .try_get_matches_from(
                std::iter::once(OsString::from("run")).chain(flags.iter().cloned()),
            )
            .map_err(|e| ConfigError::key(file, key, first_line(&e)))?;
        out.extend(flags);
    }
    Ok(out)
}

/// A TOML scalar as the text its flag takes.
fn scalar(value: &toml::Value) -> Option<String> {
    match value {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Integer(n) => Some(n.to_string()),
        toml::Value::Float(x) => Some(x.to_string()),
        toml::Value::Boolean(b) => Some(b.to_string()),
        toml::Value::Datetime(d) => Some(d.to_string()),
        toml::Value::Array(_) | toml::Value::Table(_) => None,
    }
}

/// The gist of a clap error on one line, without its `error: ` prefix and
/// usage hints.
pub fn first_line(e: &clap::Error) -> String {
    let text = e.to_string();
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    line.trim().trim_start_matches("error: ").to_owned()
}

#[cfg(test)]
#[path = "run_config_tests.rs"]
mod tests;

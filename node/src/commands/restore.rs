//! `porfiry restore FILE --data-dir DIR`: makes the node of a backup again
//! — the same identity key (so the same peer id, and its friends still know
//! it), the same database (friends, memory, settings), the person's skills,
//! and the settings file it ran with, as `DIR/porfiry.toml`.
//! Started with `porfiry run`, it catches up with its friends for what it
//! missed, as any node back online does.
//!
//! Nothing is written unless the whole backup opens: a first pass reads and
//! authenticates every byte and checks every name in the archive; only then
//! is it unpacked into a staging folder beside DIR, checked (the key's peer
//! id against the manifest, the database's integrity and schema), and
//! renamed into place. DIR must not exist or be empty.

use std::io::{self, BufReader, Read};
use std::path::{Component, Path, PathBuf};

use anyhow::{Context as _, bail};
use clap::Args;

use crate::commands::backup::{FORMAT, MANIFEST, Manifest, SETTINGS};
use crate::commands::backup_crypt::{Opener, crypt_error};
use crate::commands::passphrase::{PassphraseArgs, Purpose, passphrase};
use porfiry_mesh::data_dir::{DB_FILE, DataDir, IDENTITY_FILE, SKILLS_DIR};
use porfiry_protocol::NodeKey;

/// Largest manifest read: 64 KiB (it is a few hundred bytes).
const MAX_MANIFEST_BYTES: u64 = 64 * 1024;

/// Flags of `porfiry restore` (the data dir is the global `--data-dir`).
#[derive(Debug, Clone, Args)]
pub struct RestoreArgs {
    /// The backup file `porfiry backup` wrote.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Where the passphrase comes from.
    #[command(flatten)]
    pub passphrase: PassphraseArgs,
}

/// `porfiry restore`: `dir` is the `--data-dir` given (required here: a
/// restore never lands in a default place by surprise).
pub fn restore(dir: Option<&Path>, args: &RestoreArgs) -> anyhow::Result<String> {
    let Some(dir) = dir else {
        bail!("restore needs --data-dir DIR: the (empty) folder to make the node in");
    };
    check_target(dir)?;
    let pass = passphrase(&args.passphrase, Purpose::Open)?;
    restore_into(&args.file, pass.as_bytes(), &DataDir::new(dir))
}

/// Refuses a target that holds anything.
fn check_target(dir: &Path) -> anyhow::Result<()> {
    if dir.join(IDENTITY_FILE).exists() {
        bail!(
            "{} already holds a node; restore into an empty folder",
            dir.display()
        );
    }
    if dir.exists() && std::fs::read_dir(dir)?.next().is_some() {
        bail!(
            "{} is not empty; restore into an empty folder",
            dir.display()
        );
    }
    Ok(())
}

/// Restores `file` (sealed with `pass`) into `dir`; returns the line to print.
pub fn restore_into(file: &Path, pass: &[u8], dir: &DataDir) -> anyhow::Result<String> {
    check_target(dir.root())?;
    let fail = |e: anyhow::Error| -> anyhow::Error {
        let reason = e
            .chain()
            .find_map(|c| {
                c.downcast_ref::<io::Error>()
                    .and_then(crypt_error)
                    .map(|c| c.to_string())
            })
            .unwrap_or_else(|| format!("{e:#}"));
        anyhow::anyhow!(
            "cannot restore {}: {reason}; nothing was written",
            file.display()
        )
    };
    // Pass 1: every byte authenticated, every name checked; nothing written.
    let manifest = walk(file, pass, None).map_err(fail)?;
    // Pass 2: unpack beside the target, check, rename into place.
    let root = dir.root();
    let parent = match root.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent)
        .with_context(|| format!("cannot create {}", parent.display()))?;
    let staging = tempfile::Builder::new()
        .prefix(".porfiry-restore-")
        .tempdir_in(&parent)
        .with_context(|| format!("cannot write in {}", parent.display()))?;
    // The data dir is the owner's alone, whatever the umask.
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(staging.path(), std::fs::Permissions::from_mode(0o700))?;
    walk(file, pass, Some(staging.path())).map_err(fail)?;
    let staged = DataDir::new(staging.path());
    let key = NodeKey::load(&staged.identity_path()).map_err(|e| fail(e.into()))?;
    if key.peer_id().to_string() != manifest.peer_id {
        return Err(fail(anyhow::anyhow!("its key does not match its manifest")));
    }
    let schema = {
        let store = porfiry_storage::Store::open(staged.db_path()).map_err(|e| fail(e.into()))?;
        store.schema_version().map_err(|e| fail(e.into()))?
    };
    if root.exists() {
        std::fs::remove_dir(root).with_context(|| format!("cannot replace {}", root.display()))?;
    }
    let staged_path = staging.keep();
    if let Err(e) = std::fs::rename(&staged_path, root) {
        let _ = std::fs::remove_dir_all(&staged_path);
        return Err(e)
            .with_context(|| format!("cannot move the restored node to {}", root.display()));
    }
    let settings = root.join(SETTINGS);
    let settings = if settings.exists() {
        format!(
            "; its settings file is {} (run it with --config, or copy it to {})",
            settings.display(),
            crate::commands::run_config::DEFAULT_CONFIG_PATH
        )
    } else {
        String::new()
    };
    Ok(format!(
        "restored node {} into {} (backup of {}, schema version {schema}){settings}",
        manifest.peer_id,
        root.display(),
        manifest.made_by
    ))
}

/// Reads the whole backup; with `into`, writes its files there. Returns
/// the manifest.
fn walk(file: &Path, pass: &[u8], into: Option<&Path>) -> anyhow::Result<Manifest> {
    let input =
        std::fs::File::open(file).with_context(|| format!("cannot open {}", file.display()))?;
    let opener = Opener::new(BufReader::new(input), pass)?;
    let mut archive = tar::Archive::new(opener);
    let mut manifest: Option<Manifest> = None;
    let (mut has_key, mut has_db) = (false, false);
    for entry in archive.entries()? {
        let mut entry = entry?;
        let name = entry.path()?.into_owned();
        let kind = entry.header().entry_type();
        if !kind.is_file() {
            bail!("the archive holds {} of an unexpected kind", name.display());
        }
        let allowed = name == Path::new(MANIFEST)
            || name == Path::new(SETTINGS)
            || name == Path::new(IDENTITY_FILE)
            || name == Path::new(DB_FILE)
            || (name.starts_with(SKILLS_DIR)
                && name.components().count() > 1
                && name.components().all(|c| matches!(c, Component::Normal(_))));
        if !allowed {
            bail!("the archive holds an unexpected name {}", name.display());
        }
        has_key |= name == Path::new(IDENTITY_FILE);
        has_db |= name == Path::new(DB_FILE);
        if name == Path::new(MANIFEST) {
            let mut text = String::new();
            (&mut entry)
                .take(MAX_MANIFEST_BYTES)
                .read_to_string(&mut text)?;
            let read: Manifest = serde_json::from_str(&text).context("its manifest")?;
            if read.format != FORMAT {
                bail!(
                    "backup format {} (this porfiry reads {FORMAT})",
                    read.format
                );
            }
            manifest = Some(read);
        }
        match into {
            None => {
                io::copy(&mut entry, &mut io::sink())?;
            }
            Some(root) => write_private(&root.join(&name), &mut entry)?,
        }
    }
    if !has_key || !has_db {
        bail!("the archive lacks the identity key or the database");
    }
    manifest.context("the archive has no manifest")
}

/// Writes one file with mode 0600 (folders 0700): the key and the node's
/// data are the owner's alone.
fn write_private(path: &Path, content: &mut impl Read) -> anyhow::Result<()> {
    use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
    if let Some(folder) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(folder)?;
    }
    let mut out = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    io::copy(content, &mut out)?;
    out.sync_all()?;
    Ok(())
}

#[cfg(test)]
#[path = "backup_tests.rs"]
mod tests;

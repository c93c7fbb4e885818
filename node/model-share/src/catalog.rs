//! What this node shares: its own registry rows whose endpoint is a local
//! file (`file:<path>`, what `porfiry model pull` and `llm add --file`
//! register, and the models `porfiry model teach` made), with each file's
//! size and SHA-256. Hashing a model of gigabytes takes seconds, so a hash
//! is kept per path while the file's size and modification time stay the
//! same.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use porfiry_storage::{ListQuery, LlmEntry, Store};
use sha2::{Digest, Sha256};

use super::MAX_LISTED_MODELS;
use super::list::ListedModel;
use super::transfer::safe_file_name;

/// The registry's prefix of a local file's endpoint (as the agent writes it).
pub const FILE_ENDPOINT_PREFIX: &str = "file:";

/// The buffer a file is hashed through: large enough that the hash, not
/// the read calls, is the cost.
const HASH_BUFFER_BYTES: usize = 1 << 20;

/// One shared file before it is hashed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedFile {
    /// Its registry name.
    pub name: String,
    /// Where it is.
    pub path: PathBuf,
    /// `model` or `taught`.
    pub kind: &'static str,
}

/// This node's own `file:` registry rows whose file exists and has a name
/// a friend can keep, by name, at most [`MAX_LISTED_MODELS`].
pub fn shared_files(store: &Store) -> Result<Vec<SharedFile>, porfiry_storage::StorageError> {
    let rows = store.list::<LlmEntry>(&ListQuery {
        limit: Some(porfiry_storage::limits::MAX_LIST_LIMIT),
        ..ListQuery::default()
    })?;
    let mut out: Vec<SharedFile> = rows
        .into_iter()
        .filter(|r| r.row.origin_author.is_none())
        .filter_map(|r| {
            let path = PathBuf::from(r.row.endpoint.trim().strip_prefix(FILE_ENDPOINT_PREFIX)?);
            let file = path.file_name()?.to_str()?;
            (safe_file_name(file) && path.is_file()).then(|| SharedFile {
                name: r.row.name.clone(),
                path: path.clone(),
                kind: if r.row.config.taught.is_some() {
                    "taught"
                } else {
                    "model"
                },
            })
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out.truncate(MAX_LISTED_MODELS);
    Ok(out)
}

/// The SHA-256 (hex) and size of the file at `path`.
pub fn hash_file(path: &Path) -> std::io::Result<(String, u64)> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; HASH_BUFFER_BYTES];
    let mut bytes = 0u64;
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        bytes += n as u64;
    }
    Ok((hex::encode(hasher.finalize()), bytes))
}

/// What a file looked like when it was hashed.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    bytes: u64,
    modified: Option<SystemTime>,
}

fn stamp(path: &Path) -> std::io::Result<Stamp> {
    let meta = std::fs::metadata(path)?;
    Ok(Stamp {
        bytes: meta.len(),
        modified: meta.modified().ok(),
    })
}

/// Hashes by path, kept while the file's size and time stay the same; at
/// most twice [`MAX_LISTED_MODELS`] entries (then it starts afresh).
#[derive(Debug, Clone, Default)]
pub struct HashCache {
    known: Arc<Mutex<HashMap<PathBuf, (Stamp, String)>>>,
}

impl HashCache {
    /// `file` as listed: its size and hash (hashed now unless known).
    /// Blocking: call it off the async threads.
    pub fn listed(&self, file: &SharedFile) -> std::io::Result<ListedModel> {
        let now = stamp(&file.path)?;
        let known = self
            .known
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&file.path)
            .filter(|(s, _)| *s == now)
            .map(|(_, h)| h.clone());
        let sha256 = match known {
            Some(h) => h,
            None => {
                let (h, _) = hash_file(&file.path)?;
                let mut map = self.known.lock().unwrap_or_else(PoisonError::into_inner);
                if map.len() >= 2 * MAX_LISTED_MODELS {
                    map.clear();
                }
                map.insert(file.path.clone(), (now.clone(), h.clone()));
                h
            }
        };
        Ok(ListedModel {
            name: file.name.clone(),
            // `shared_files` kept only files with a UTF-8 name.
            file: file
                .path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            bytes: now.bytes,
            sha256,
            kind: file.kind.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_file_rows_are_shared_and_urls_friends_rows_and_missing_files_are_not() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::create(tmp.path().join("n.db")).unwrap();
        let file = tmp.path().join("smol.gguf");
        std::fs::write(&file, b"abc").unwrap();
        let row = |name: &str, endpoint: String| LlmEntry {
            name: name.into(),
            endpoint,
            model: name.into(),
            ..Default::default()
        };
        store
            .add(&row("smol", format!("file:{}", file.display())), 1)
            .unwrap();
        store
            .add(
                &row("gone", format!("file:{}/gone.gguf", tmp.path().display())),
                1,
            )
            .unwrap();
        store
            .add(&row("server", "http://127.0.0.1:8080/v1".into()), 1)
            .unwrap();
        let shared = shared_files(&store).unwrap();
        assert_eq!(
            shared,
            [SharedFile {
                name: "smol".into(),
                path: file.clone(),
                kind: "model"
            }]
        );
        let cache = HashCache::default();
        let listed = cache.listed(&shared[0]).unwrap();
        // sha256("abc")
        assert_eq!(
            listed.sha256,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!((listed.bytes, listed.file.as_str()), (3, "smol.gguf"));
        // A changed file is hashed again.
        std::fs::write(&file, b"abcd").unwrap();
        let again = cache.listed(&shared[0]).unwrap();
        assert_eq!(again.bytes, 4);
        assert_ne!(again.sha256, listed.sha256);
    }
}

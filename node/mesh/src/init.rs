//! `porfiry init`: create the identity key and the database, seeded with
//! what the cognitive core starts from (system prompts, stagnation
//! strategies, thinking methods, emotions, thresholds:
//! [`crate::seed`]). Older nodes get the same seeds at their next
//! `run` or `think` ([`open_or_init`]); seeding never overwrites.

use std::fmt;

use porfiry_protocol::NodeKey;
use porfiry_storage::Store;

use crate::data_dir::DataDir;
use crate::seed::seed_core;
use porfiry_skills::Language;

/// Why `init` did not create a node.
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    /// An identity is already there; nothing was touched.
    #[error("{0} already exists: this data dir already holds a node (nothing was changed)")]
    IdentityExists(String),
    /// The data dir could not be created.
    #[error("cannot create data dir {path}: {source}")]
    DataDir {
        /// The directory.
        path: String,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// Writing the key failed.
    #[error(transparent)]
    Identity(#[from] porfiry_protocol::IdentityError),
    /// Creating the database failed.
    #[error(transparent)]
    Storage(#[from] porfiry_storage::StorageError),
    /// The identity is there but its database is not: refused rather than
    /// starting an empty one beside the lost one.
    #[error(
        "{path} is missing while this data dir holds a node's identity: restore the database \
         (`porfiry restore`), or move identity.key away to start a new node here"
    )]
    DatabaseMissing {
        /// The database file looked for.
        path: String,
    },
    /// The operating system gave no random bytes for the new key.
    #[error("the OS random source failed, so no key was made: {0}")]
    Randomness(getrandom::Error),
}

/// What `init` made.
#[derive(Debug)]
pub struct Initialized {
    /// The new node's peer id.
    pub peer_id: String,
    /// The schema version of the new database.
    pub schema_version: u32,
}

impl fmt::Display for Initialized {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "node id {} (schema version {})",
            self.peer_id, self.schema_version
        )
    }
}

/// Creates identity and database; refuses, touching nothing, if the
/// identity file exists.
pub fn init(dir: &DataDir, language: Language) -> Result<Initialized, InitError> {
    let key_path = dir.identity_path();
    if key_path.exists() {
        return Err(InitError::IdentityExists(key_path.display().to_string()));
    }
    std::fs::create_dir_all(dir.root()).map_err(|source| InitError::DataDir {
        path: dir.root().display().to_string(),
        source,
    })?;
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).map_err(InitError::Randomness)?;
    let store = Store::create(dir.db_path())?;
    seed_core(&store, language, crate::clock::now_ms())?;
    crate::language::set_node_language(&store, language, crate::clock::now_ms())?;
    let key = NodeKey::from_seed(seed);
    key.save(&key_path)?;
    Ok(Initialized {
        peer_id: key.peer_id().to_string(),
        schema_version: store.schema_version()?,
    })
}

/// Loads the node's key and store, creating both when this is a new node
/// (used by `run`).
pub fn open_or_init(dir: &DataDir) -> Result<(NodeKey, Store), InitError> {
    if !dir.identity_path().exists() {
        init(dir, Language::default())?;
    }
    let key = NodeKey::load(&dir.identity_path())?;
    // Opened, never created: an identity without its database is a node
    // whose file went missing, not a new node (a silent empty file beside
    // the lost one would look like a node that forgot everything).
    let store = Store::open(dir.db_path()).map_err(|e| match e {
        porfiry_storage::StorageError::Missing { path } => InitError::DatabaseMissing {
            path: path.display().to_string(),
        },
        e => InitError::Storage(e),
    })?;
    seed_core(&store, Language::default(), crate::clock::now_ms())?;
    Ok((key, store))
}

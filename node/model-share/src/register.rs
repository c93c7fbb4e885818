//! A pulled file in the puller's registry: a `file:` row under the name the
//! friend listed, the main model when the node has none — what `porfiry
//! model pull` does for a file from the Hub. A name already taken by
//! another row is left alone (the file is still kept).

use std::path::Path;

use porfiry_storage::{LlmEntry, StorageError, Store};

use super::catalog::FILE_ENDPOINT_PREFIX;

/// What registering did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Registered {
    /// A new row; `main` when it became the main model.
    Added {
        /// Whether it is the main model now.
        main: bool,
    },
    /// The same file is registered under that name already.
    AlreadyThere,
    /// Another row has that name; nothing was registered.
    NameTaken {
        /// That row's endpoint.
        endpoint: String,
    },
}

/// Registers the file at `path` as `name`, pulled from `friend`.
pub fn register_pulled(
    store: &Store,
    name: &str,
    path: &Path,
    friend: &str,
    now_ms: u64,
) -> Result<Registered, StorageError> {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    let endpoint = format!("{FILE_ENDPOINT_PREFIX}{}", absolute.display());
    store.transaction(|s| {
        if let Some(row) = s.llm_by_name(name)? {
            return Ok(if row.row.endpoint == endpoint {
                Registered::AlreadyThere
            } else {
                Registered::NameTaken {
                    endpoint: row.row.endpoint,
                }
            });
        }
        let main = s.llm_main()?.is_none();
        let id = s.add(
            &LlmEntry {
                name: name.to_owned(),
                endpoint,
                model: name.to_owned(),
                description: format!("pulled from friend {friend}"),
                ..Default::default()
            },
            now_ms,
        )?;
        if main {
            s.llm_select_main(id, now_ms)?;
        }
        Ok(Registered::Added { main })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pulled_file_is_registered_once_and_main_only_when_none_is() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::create(tmp.path().join("n.db")).unwrap();
        let a = tmp.path().join("a.gguf");
        assert_eq!(
            register_pulled(&store, "a", &a, "f", 1).unwrap(),
            Registered::Added { main: true }
        );
        assert_eq!(
            register_pulled(&store, "a", &a, "f", 2).unwrap(),
            Registered::AlreadyThere
        );
        assert!(matches!(
            register_pulled(&store, "a", &tmp.path().join("b.gguf"), "f", 3).unwrap(),
            Registered::NameTaken { .. }
        ));
        assert_eq!(
            register_pulled(&store, "b", &tmp.path().join("b.gguf"), "f", 4).unwrap(),
            Registered::Added { main: false }
        );
        assert_eq!(store.llm_main().unwrap().unwrap().row.name, "a");
    }
}

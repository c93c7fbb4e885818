//! Test helpers every node toolset's tests share: a real SQLite file in a
//! temporary directory behind the database actor and the [`StoreTools`]
//! over it, peer ids and a node handle on that database, a call context at
//! a chosen time, and reading an id or a `process_log` row back.

use std::sync::Arc;

use porfiry_protocol::NodeKey;
use porfiry_skills::{CallContext, Caller, Clock, Language, ZonedTime};
use porfiry_storage::{DB_FILE_NAME, ProcessEntry, Store, Stored};
use tempfile::TempDir;
use tokio::sync::{mpsc, watch};

use crate::StoreTools;
use porfiry_mesh::events::CoreEvents;
use porfiry_mesh::net::{Profile, StreamControl};
use porfiry_mesh::node::NodeHandle;
use porfiry_mesh::replication::LoopCommand;
use porfiry_storage::db::Db;

/// A fresh database in a temporary directory and the tools over it, no node.
pub fn store_tools(language: Language) -> (TempDir, StoreTools) {
    store_tools_with(language, |_| None)
}

/// Like [`store_tools`] with a node made on the same database by `node`.
pub fn store_tools_with(
    language: Language,
    node: impl FnOnce(&Db) -> Option<NodeHandle>,
) -> (TempDir, StoreTools) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::start(Store::create(dir.path().join(DB_FILE_NAME)).unwrap()).unwrap();
    let node = node(&db);
    let tools = StoreTools {
        db,
        language,
        events: CoreEvents::new(),
        node,
    };
    (dir, tools)
}

/// The peer id of the test node key made from `seed`.
pub fn peer(seed: u8) -> String {
    NodeKey::from_seed([seed; 32]).peer_id().to_string()
}

/// A phone node `key` over `db`: its commands to the replication loop go to
/// `commands`, `stop` stops it, its time comes from `clock`.
pub fn test_node(
    key: &NodeKey,
    db: &Db,
    commands: mpsc::Sender<LoopCommand>,
    stop: watch::Sender<bool>,
    clock: Arc<dyn Clock>,
) -> NodeHandle {
    let (_, listening) = watch::channel(Vec::new());
    NodeHandle::new(
        key,
        Profile::Phone,
        db.clone(),
        commands,
        stop,
        listening,
        clock,
        StreamControl::new(),
        CoreEvents::new(),
    )
}

/// A call by `caller` at `now_ms` (Unix ms, UTC).
pub fn ctx_as(caller: Caller, now_ms: i64, language: Language) -> CallContext {
    let at =
        time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(now_ms) * 1_000_000).unwrap();
    CallContext::new("test", caller, ZonedTime::new(at, "UTC"), language)
}

/// A core call at `now_ms`.
pub fn ctx_at(now_ms: i64, language: Language) -> CallContext {
    ctx_as(Caller::Core { tick: 1 }, now_ms, language)
}

/// The first id in a reply such as "process #12 (…) started".
pub fn id_in(text: &str) -> i64 {
    let after = text.split('#').nth(1).expect("an id in the reply");
    after
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap()
}

/// The `process_log` row `id`.
pub async fn process_row(tools: &StoreTools, id: i64) -> Stored<ProcessEntry> {
    tools
        .db
        .read(move |s| s.get::<ProcessEntry>(id))
        .await
        .unwrap()
        .unwrap()
}

/// A model source for tests that register the `llm` set but call no model:
/// every row is refused as unreachable. (The `llm_*` calls themselves are
/// tested in `porfiry-agent` through its real `RegistryModels`.)
pub struct NoModels;

impl crate::RowModels for NoModels {
    fn model(
        &self,
        entry: &porfiry_storage::LlmEntry,
    ) -> Result<Arc<dyn porfiry_skills::llm::Llm>, porfiry_skills::llm::LlmError> {
        Err(porfiry_skills::llm::LlmError::InvalidBaseUrl {
            url: entry.endpoint.clone(),
            reason: "no models in this test".to_owned(),
        })
    }
}

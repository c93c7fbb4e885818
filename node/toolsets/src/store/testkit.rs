//! A real node database in a temporary directory with every record set
//! registered, and calls made the way the core makes them (route, bind,
//! run) — for the record sets' tests.

use std::sync::Arc;

use porfiry_protocol::NodeKey;
use porfiry_skills::{CallContext, Caller, Language, SystemClock, ToolOutput, ToolsetRegistry};
use porfiry_storage::{LlmEntry, Store};
use tokio::sync::{mpsc, watch};

use crate::StoreTools;
use crate::test_support::{ctx_as, store_tools_with, test_node};
use porfiry_mesh::node::NodeHandle;
use porfiry_mesh::replication::LoopCommand;
use porfiry_storage::db::Db;

/// The time every test call is made at (Unix ms).
pub(crate) const NOW_MS: u64 = 1_800_000_000_000;

/// A database file, its actor and the registry of record sets over it.
pub(crate) struct Kit {
    /// Keeps the directory alive.
    pub(crate) dir: tempfile::TempDir,
    /// The actor the sets use.
    pub(crate) db: Db,
    /// What the sets were built from.
    pub(crate) deps: StoreTools,
    /// Every record set.
    pub(crate) registry: ToolsetRegistry,
}

impl Kit {
    /// A fresh database, sets speaking `lang`, no node.
    pub(crate) fn new(lang: Language) -> Kit {
        Kit::build(lang, |_| None)
    }

    /// Like [`Kit::new`] with a node made on the same database by `node`.
    pub(crate) fn build(lang: Language, node: impl FnOnce(&Db) -> Option<NodeHandle>) -> Kit {
        let (dir, deps) = store_tools_with(lang, node);
        let db = deps.db.clone();
        let mut registry = ToolsetRegistry::new();
        super::register_store_sets(&mut registry, &deps).unwrap();
        Kit {
            dir,
            db,
            deps,
            registry,
        }
    }

    /// Like [`Kit::new`] with a node on the same database; its commands to
    /// the replication loop arrive on the receiver (nobody else reads them).
    pub(crate) fn with_node(lang: Language) -> (Kit, mpsc::Receiver<LoopCommand>, NodeKey) {
        let key = NodeKey::from_seed([7; 32]);
        let (tx, rx) = mpsc::channel(16);
        let node_key = key.clone();
        let kit = Kit::build(lang, move |db| {
            let (stop, _) = watch::channel(false);
            let clock = Arc::new(SystemClock::utc());
            Some(test_node(&node_key, db, tx, stop, clock))
        });
        (kit, rx, key)
    }

    /// Registers a main model named `name`: rows the core writes name it.
    pub(crate) async fn main_model(&self, name: &str) {
        let entry = LlmEntry {
            name: name.into(),
            endpoint: "http://127.0.0.1:9/v1".into(),
            model: "m".into(),
            ..Default::default()
        };
        self.db
            .write(move |s| {
                let id = s.add(&entry, NOW_MS).unwrap();
                s.llm_select_main(id, NOW_MS).unwrap();
            })
            .await
            .unwrap();
    }

    /// The context of a call by `caller`.
    pub(crate) fn ctx_of(&self, caller: Caller) -> CallContext {
        ctx_as(caller, NOW_MS as i64, self.deps.language)
    }

    /// `TOOL_CALL: tool|raw` by the core; a call whose arguments do not bind
    /// fails with the registry's reason.
    pub(crate) async fn call(&self, tool: &str, raw: &str) -> ToolOutput {
        self.call_as(Caller::Core { tick: 1 }, tool, raw).await
    }

    /// The same call by `caller`.
    pub(crate) async fn call_as(&self, caller: Caller, tool: &str, raw: &str) -> ToolOutput {
        match self.registry.prepare(tool, raw) {
            Ok(p) => p.run(&self.ctx_of(caller)).await,
            Err(e) => ToolOutput::failed(e.to_string()),
        }
    }

    /// A call that must succeed; its reply.
    pub(crate) async fn ok(&self, tool: &str, raw: &str) -> String {
        let out = self.call(tool, raw).await;
        assert!(out.ok, "{tool}|{raw} failed: {}", out.text);
        out.text
    }

    /// A call that must fail; its reply.
    pub(crate) async fn fails(&self, tool: &str, raw: &str) -> String {
        let out = self.call(tool, raw).await;
        assert!(!out.ok, "{tool}|{raw} should fail but said: {}", out.text);
        out.text
    }

    /// Runs `f` on a read connection.
    pub(crate) async fn read<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Store) -> T + Send + 'static,
    ) -> T {
        self.db.read(f).await.unwrap()
    }
}

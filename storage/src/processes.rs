//! `process_log` (external commands the agent started, and their results)
//! and `agent_log` (one row per cognitive-core tick).

use rusqlite::types::Value;

use crate::error::{Result, StorageError};
use crate::query::{Filter, int_param};
use crate::record::{Stored, record};
use crate::store::Store;
use crate::values::ProcessStatus;

record! {
    /// One external process or command and its outcome.
    pub struct ProcessEntry in "process_log" search ["name", "result"] marks [Tagged] check check_process {
        /// What runs (command type or a human name).
        pub name: String,
        /// The `cmd_id` the LLM gave the command.
        pub cmd_id: Option<String>,
        /// The command as given (type, args, description).
        pub command: serde_json::Value as json,
        /// What the script loaded for the LLM (stdout digest, answer, error).
        pub result: Option<String>,
        /// State; `close` once the LLM has handled it.
        pub status: ProcessStatus,
        /// Higher is more urgent.
        pub priority: i64,
        /// Tags.
        pub tags: Vec<String> as tags,
        /// The LLM that started it.
        pub llm_id: Option<String>,
    }
}

fn check_process(p: &ProcessEntry) -> Result<()> {
    if p.name.trim().is_empty() {
        return Err(StorageError::invalid("process", "name is empty"));
    }
    Ok(())
}

record! {
    /// One tick of the cognitive core.
    pub struct TickRecord in "agent_log" search ["summary"] {
        /// Tick number, counting from 1.
        pub tick: i64,
        /// Message mode of the tick (`auto`, `manual`, `idle`).
        pub mode: String,
        /// The reply recorded for this tick, if one was.
        pub response_id: Option<i64>,
        /// Commands found in the reply.
        pub commands_total: u32,
        /// Commands that passed validation and ran.
        pub commands_executed: u32,
        /// How long the tick took.
        pub duration_ms: u64,
        /// One line on what happened.
        pub summary: String,
        /// The main LLM of the tick.
        pub llm_id: Option<String>,
        /// Why the tick failed (the model call's error), if it did.
        pub error: Option<String>,
        /// The prompt's estimated size in tokens.
        pub prompt_tokens: u32,
        /// Model calls made: main, evaluations and validators.
        pub model_calls: u32,
    }
}

impl Store {
    /// Sets a process's status ("process mark", or a script's update).
    pub fn process_set_status(&self, id: i64, status: ProcessStatus, now_ms: u64) -> Result<()> {
        self.set_columns::<ProcessEntry>(id, "status = ?", &[&status], now_ms)
    }

    /// Records a process's outcome: its status and result text together.
    pub fn process_finish(
        &self,
        id: i64,
        status: ProcessStatus,
        result: &str,
        now_ms: u64,
    ) -> Result<()> {
        self.set_columns::<ProcessEntry>(id, "status = ?, result = ?", &[&status, &result], now_ms)
    }

    /// Processes not yet closed, oldest first (context 2).
    pub fn processes_open(&self) -> Result<Vec<Stored<ProcessEntry>>> {
        let mut f = Filter::default();
        f.and("status <> 'close'", []);
        self.select::<ProcessEntry>(&f, "created, id", u32::MAX, 0)
    }

    /// Deletes closed processes last changed before `before_ms` (all closed
    /// ones with `None`): "process cleanup". Returns how many.
    pub fn processes_cleanup(&self, before_ms: Option<u64>) -> Result<usize> {
        let before = match before_ms {
            Some(t) => int_param("before_ms", t)?,
            None => Value::Integer(i64::MAX),
        };
        let n = self
            .conn
            .prepare_cached("DELETE FROM process_log WHERE status = 'close' AND updated < ?")?
            .execute([before])
            .map_err(|e| StorageError::from_write("process_log", e))?;
        Ok(n)
    }

    /// The latest tick, if any ran.
    pub fn last_tick(&self) -> Result<Option<Stored<TickRecord>>> {
        Ok(self
            .select::<TickRecord>(&Filter::default(), "tick DESC, id DESC", 1, 0)?
            .pop())
    }
}

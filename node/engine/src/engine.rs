//! [`Engine`]: the handle to one loaded GGUF model. [`Engine::open`] checks
//! the file's header, then starts the inference thread, which loads the model
//! and answers once it is ready (or with the load's error), so a bad file
//! stops the caller before anything else starts. Requests go to that thread
//! through a bounded queue: when it is full the caller is told "busy" at
//! once. An answer streams back as [`Delta`]s; dropping the stream stops the
//! decoding within one token.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{SyncSender, TrySendError};

use porfiry_skills::llm::{BoxFuture, Completion, Delta, DeltaStream, Llm, LlmError, ModelRequest};
use tokio::sync::mpsc;

use crate::gguf::{self, GgufError, GgufInfo};
use crate::options::{DELTA_BUFFER, EngineOptions};
use crate::stats::{Counters, EngineStats};

/// What an open engine runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelInfo {
    /// The GGUF file.
    pub path: PathBuf,
    /// Its header.
    pub gguf: GgufInfo,
    /// The context in tokens: the model's trained context, capped by the options.
    pub context: u32,
    /// CPU threads decoding.
    pub threads: usize,
    /// The chat template its prompts are formatted with, and why.
    pub template: crate::template_choice::TemplateChoice,
}

impl ModelInfo {
    /// The model's name: `general.name`, else the file's stem.
    pub fn label(&self) -> String {
        self.gguf.name.clone().unwrap_or_else(|| {
            self.path.file_stem().map_or_else(
                || self.path.display().to_string(),
                |s| s.to_string_lossy().into_owned(),
            )
        })
    }
}

/// Why an engine did not open. Each message is one line naming the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// The file is not a whole GGUF model.
    #[error(transparent)]
    Gguf(#[from] GgufError),
    /// No chat template could be chosen for it.
    #[error(transparent)]
    Template(#[from] crate::template_choice::TemplateError),
    /// This build was made without the `llama` feature.
    #[error(
        "model file {path}: this porfiry was built without the embedded engine (cargo feature \
         `engine`); use --llm-url with a llama.cpp or Ollama server instead"
    )]
    NotBuilt {
        /// The file asked for.
        path: PathBuf,
    },
    /// The model needs more memory than the system has free.
    #[error(
        "model file {path} needs about {needed_mb} MB of memory and only {available_mb} MB are \
         free; close other programs or use a smaller model"
    )]
    Memory {
        /// The file asked for.
        path: PathBuf,
        /// The file plus its KV cache, in MB.
        needed_mb: u64,
        /// `MemAvailable`, in MB.
        available_mb: u64,
    },
    /// llama.cpp could not load the model or make its context.
    #[error("model file {path} could not be loaded by llama.cpp: {detail}")]
    Load {
        /// The file asked for.
        path: PathBuf,
        /// What failed.
        detail: String,
    },
}

/// One request on its way to the inference thread.
#[cfg_attr(not(feature = "llama"), allow(dead_code))]
pub(crate) struct Job {
    pub(crate) request: ModelRequest,
    pub(crate) deltas: mpsc::Sender<Result<Delta, LlmError>>,
}

/// Texts to embed, and where their vectors (or why not) go.
#[cfg_attr(not(feature = "llama"), allow(dead_code))]
pub(crate) struct EmbedJob {
    pub(crate) texts: Vec<String>,
    pub(crate) reply: tokio::sync::oneshot::Sender<Result<Vec<Vec<f32>>, String>>,
}

/// What the inference thread is asked, in queue order.
#[cfg_attr(not(feature = "llama"), allow(dead_code))]
pub(crate) enum Work {
    /// An answer to stream.
    Answer(Job),
    /// Vectors of texts.
    Embed(EmbedJob),
}

/// A loaded model, shared as `Arc<dyn Llm>`. Dropping the last handle ends
/// the inference thread once its current answer ends, freeing the model.
pub struct Engine {
    jobs: SyncSender<Work>,
    counters: Arc<Counters>,
    info: ModelInfo,
    queue_depth: usize,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine").field("info", &self.info).finish()
    }
}

impl Engine {
    /// Checks `path`, loads it on a new inference thread and waits until it
    /// is ready. Blocks for the load (a second or so for a small model).
    pub fn open(path: &Path, options: &EngineOptions) -> Result<Self, EngineError> {
        let gguf = gguf::inspect(path)?;
        let template =
            crate::template_choice::choose_template(path, &gguf, options.chat_template.as_deref())?;
        check_memory(path, &gguf)?;
        let counters = Arc::new(Counters::default());
        #[cfg(feature = "llama")]
        {
            let (jobs, loaded) = crate::actor::spawn(
                path.to_owned(),
                options.clone(),
                &template,
                counters.clone(),
            )?;
            Ok(Self {
                jobs,
                counters,
                info: ModelInfo {
                    path: path.to_owned(),
                    gguf,
                    context: loaded.context,
                    threads: loaded.threads,
                    template,
                },
                queue_depth: options.queue_depth,
            })
        }
        #[cfg(not(feature = "llama"))]
        {
            let _ = (options, counters, gguf, template);
            Err(EngineError::NotBuilt {
                path: path.to_owned(),
            })
        }
    }

    /// What this engine runs.
    pub fn info(&self) -> &ModelInfo {
        &self.info
    }

    /// The counters now.
    pub fn stats(&self) -> EngineStats {
        self.counters.snapshot()
    }

    /// Blocks until `requests` requests have finished since the engine
    /// opened (cancelled ones included); returns the counters then.
    pub fn wait_for_requests(&self, requests: u64) -> EngineStats {
        self.counters.wait_for(requests)
    }

    fn enqueue(&self, request: &ModelRequest) -> Result<DeltaStream, LlmError> {
        let (tx, mut rx) = mpsc::channel(DELTA_BUFFER);
        let job = Job {
            request: request.clone(),
            deltas: tx,
        };
        self.send(Work::Answer(job))?;
        let stream = futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx));
        Ok(Box::pin(stream))
    }

    /// Queues `work`, or says at once that the queue is full or the thread gone.
    fn send(&self, work: Work) -> Result<(), LlmError> {
        match self.jobs.try_send(work) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(_)) => Err(LlmError::Busy {
                model: self.info.label(),
                waiting: self.queue_depth,
            }),
            Err(TrySendError::Disconnected(_)) => Err(self.stopped()),
        }
    }

    fn stopped(&self) -> LlmError {
        LlmError::Other(format!(
            "the embedded model {} has stopped (its inference thread ended)",
            self.info.label()
        ))
    }
}

impl Llm for Engine {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<Completion, LlmError>> {
        Box::pin(async move {
            let stream = self.enqueue(request)?;
            let (completion, done) = porfiry_skills::llm::completion::gather(stream).await?;
            if done {
                return Ok(completion);
            }
            Err(LlmError::Other(format!(
                "the embedded model {} stopped mid-answer",
                self.info.label()
            )))
        })
    }

    fn stream<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<DeltaStream, LlmError>> {
        Box::pin(async move { self.enqueue(request) })
    }

    fn embed<'a>(&'a self, texts: &'a [String]) -> BoxFuture<'a, Result<Vec<Vec<f32>>, LlmError>> {
        Box::pin(async move {
            if texts.is_empty() {
                return Ok(Vec::new());
            }
            let (reply, vectors) = tokio::sync::oneshot::channel();
            self.send(Work::Embed(EmbedJob {
                texts: texts.to_vec(),
                reply,
            }))?;
            match vectors.await {
                Ok(Ok(v)) => Ok(v),
                Ok(Err(why)) => Err(LlmError::Other(format!(
                    "the embedded model {}: {why}",
                    self.info.label()
                ))),
                Err(_) => Err(self.stopped()),
            }
        })
    }

    fn model_name(&self) -> String {
        self.info.label()
    }
}

/// Refuses a model that cannot fit in the memory the system has free now:
/// a clear error instead of the OOM killer. The file is counted whole
/// (llama.cpp maps it and touches every weight) plus a quarter for the KV
/// cache and compute buffers; where `/proc/meminfo` is not there (not Linux)
/// nothing is checked.
fn check_memory(path: &Path, gguf: &GgufInfo) -> Result<(), EngineError> {
    let Some(available) = available_bytes() else {
        return Ok(());
    };
    let needed = gguf.file_bytes.saturating_add(gguf.file_bytes / 4);
    if needed > available {
        return Err(EngineError::Memory {
            path: path.to_owned(),
            needed_mb: needed / 1_000_000,
            available_mb: available / 1_000_000,
        });
    }
    Ok(())
}

fn available_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    parse_mem_available(&text)
}

/// `MemAvailable` of a `/proc/meminfo` text, in bytes.
fn parse_mem_available(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb.saturating_mul(1024))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mem_available_is_read_in_bytes() {
        let text = "MemTotal:       24000000 kB\nMemAvailable:    1000 kB\n";
        assert_eq!(parse_mem_available(text), Some(1_024_000));
        assert_eq!(parse_mem_available("MemTotal: 5 kB\n"), None);
    }

    #[test]
    fn a_missing_file_fails_before_any_thread_starts() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gone.gguf");
        let err = Engine::open(&path, &EngineOptions::default()).unwrap_err();
        assert!(
            matches!(err, EngineError::Gguf(GgufError::Missing { .. })),
            "{err}"
        );
        assert!(err.to_string().contains("gone.gguf"), "{err}");
    }
}

//! How an engine is opened: threads, the context cap, the request queue's
//! depth, sampling. Each default is a named constant with its reason.

/// The context an engine gets when the flag sets none, capped again by the
/// model's trained context: the KV cache grows with it (a 135M model at 4096
/// tokens holds about 90 MB of cache; a 4B model several hundred MB), and the
/// seed's prompts (tool loop and core tick) fit in 4096 with room to answer.
pub const DEFAULT_CONTEXT_CAP: u32 = 4096;

/// Requests waiting behind the one being answered. A phone answers one
/// at a time; more waiting would only hold callers past their deadlines,
/// so the next caller is told "busy" at once instead.
pub const DEFAULT_QUEUE_DEPTH: usize = 4;

/// Prompt tokens decoded per `llama_decode` call: llama.cpp's own default
/// batch, which its CPU kernels are tuned for. Cancelling a request stops it
/// within one such batch while the prompt is read, within one token after.
pub const PROMPT_BATCH: u32 = 512;

/// Answer deltas buffered between the inference thread and the reader: a
/// terminal or HTTP client reads far faster than a CPU generates, so a few
/// suffice; a reader that stops reading holds the decoder back instead of
/// letting text pile up in memory.
pub const DELTA_BUFFER: usize = 16;

/// Settings of one engine.
#[derive(Debug, Clone, PartialEq)]
pub struct EngineOptions {
    /// CPU threads for decoding; `None`: every core the OS gives us.
    pub threads: Option<usize>,
    /// The most context tokens; the model's trained context caps it too.
    pub context_cap: u32,
    /// Requests that may wait while one is answered.
    pub queue_depth: usize,
    /// Sampling temperature; 0 picks the likeliest token every time
    /// (greedy: reproducible, and what small models follow tools best with).
    pub temperature: f32,
    /// Seed of the sampler when the temperature is above 0.
    pub seed: u32,
    /// `--chat-template`: a llama.cpp template name or a Jinja file that
    /// replaces the file's own template (or stands in for a missing one);
    /// `None`: the file's, else its architecture's
    /// ([`crate::template_choice`]).
    pub chat_template: Option<String>,
}

impl Default for EngineOptions {
    fn default() -> Self {
        Self {
            threads: None,
            context_cap: DEFAULT_CONTEXT_CAP,
            queue_depth: DEFAULT_QUEUE_DEPTH,
            temperature: 0.0,
            seed: 0x5EED,
            chat_template: None,
        }
    }
}

impl EngineOptions {
    /// The threads to decode with.
    pub fn thread_count(&self) -> usize {
        self.threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
            .max(1)
    }
}

//! One model in training: loaded (F32, not memory-mapped: the optimizer
//! writes the weights), one context, AdamW over the chosen tensors, and a
//! one-window dataset refilled each step — the caller owns the order, the
//! time limit and the checkpoints.
//!
//! With [`LossOn::Everything`] the window is the context's batch and its
//! micro-batch (so the attention's K and V get gradients, see llama.cpp's
//! `opt_init`): one optimizer call a step.
//!
//! **How a micro-batch is masked** ([`LossOn::Reply`]). llama.cpp scores
//! every label of a window and has no ignored label (a label row of zeros
//! still pushes the logits by their softmax). So the window runs in
//! micro-batches of [`REPLY_UBATCH`] tokens, each its own batch and so its
//! own optimizer call (the KV cache carries the earlier ones, as in a
//! decode), and the optimizer's settings are asked for at every call
//! (`mask::scheduled_params`): a micro-batch with a reply label gets the real
//! AdamW step, one without gets a call that changes nothing — the smallest
//! step size ggml allows (it asserts one above 0: times any Adam ratio it
//! falls below a weight's last bit), moments that keep their values
//! (β1 = β2 = the largest f32 below 1: they move by 6e-8 of themselves) and
//! no weight decay. Each micro-batch's loss is read after its call
//! (`mask::record_loss`), and a step reports the mean over the taught ones.

use std::cell::{Cell, RefCell};
use std::ffi::{CStr, c_void};
use std::path::{Path, PathBuf};

use llama_cpp_sys_2 as sys;

use crate::convert::{c_path, check_gguf};
use crate::mask::{
    MICRO_LOSSES, REPLY_UBATCH, Schedule, record_loss, scheduled_params, taught_mean,
};
use crate::pack::Window;
use crate::{LossOn, TrainError, TrainOptions, Trainable};

/// Which tensors train, read by the C filter during `llama_opt_init`.
struct Filter {
    /// The lowest layer that trains (0: all layers).
    min_layer: u32,
    /// Every tensor llama.cpp offers.
    all: bool,
    /// Parameters accepted so far.
    params: Cell<u64>,
}

/// A model being taught.
pub struct Trainer {
    path: PathBuf,
    model: *mut sys::llama_model,
    ctx: *mut sys::llama_context,
    dataset: sys::ggml_opt_dataset_t,
    result_train: sys::ggml_opt_result_t,
    result_eval: sys::ggml_opt_result_t,
    n_ctx: u32,
    /// Tokens a micro-batch (and an optimizer call) takes.
    n_ubatch: u32,
    n_layer: u32,
    loss_on: LossOn,
    // Read by llama.cpp through raw pointers for the context's life.
    filter: Box<Filter>,
    /// Read by `mask::scheduled_params` at every optimizer call, so a new step
    /// size here takes effect at the next step.
    schedule: Box<Schedule>,
}

// SAFETY: the Trainer owns its llama.cpp objects exclusively; llama.cpp
// keeps no thread-local state for them, so moving the whole Trainer to
// another thread is sound. It is not Sync: calls must not overlap.
unsafe impl Send for Trainer {}

impl Trainer {
    /// Loads the F32 model at `path` for training with `options`.
    pub fn open(path: &Path, options: &TrainOptions) -> Result<Self, TrainError> {
        check_gguf(path)?;
        crate::backend::init();
        let load_error = |detail: &str| TrainError::Load {
            path: path.to_owned(),
            detail: detail.to_owned(),
        };
        let c_file = c_path(path)?;
        // SAFETY: returns a plain struct of defaults.
        let mut model_params = unsafe { sys::llama_model_default_params() };
        model_params.n_gpu_layers = 0;
        model_params.load_mode = sys::LLAMA_LOAD_MODE_NONE;
        // SAFETY: the path is NUL-terminated; the params are valid.
        let model = unsafe { sys::llama_model_load_from_file(c_file.as_ptr(), model_params) };
        if model.is_null() {
            return Err(load_error(
                "the model did not load (is it a model llama.cpp supports?)",
            ));
        }
        // SAFETY: `model` is live.
        let n_layer = unsafe { sys::llama_model_n_layer(model) }.max(0) as u32;
        let n_ctx = window_tokens(options.n_ctx);
        let n_ubatch = match options.loss {
            LossOn::Everything => n_ctx,
            LossOn::Reply => REPLY_UBATCH.min(n_ctx),
        };
        // SAFETY: returns a plain struct of defaults.
        let mut context_params = unsafe { sys::llama_context_default_params() };
        context_params.n_ctx = n_ctx;
        // A batch of one micro-batch: an optimizer call per micro-batch.
        context_params.n_batch = n_ubatch;
        context_params.n_ubatch = n_ubatch;
        // Micro-batches read the earlier ones' K and V from the cache, and
        // the backward pass through an F16 cache needs an F16 outer
        // product the CPU backend lacks (ggml aborts scheduling the graph).
        context_params.type_k = sys::GGML_TYPE_F32;
        context_params.type_v = sys::GGML_TYPE_F32;
        context_params.n_seq_max = 1;
        context_params.n_threads = options.threads.max(1);
        context_params.n_threads_batch = options.threads.max(1);
        context_params.flash_attn_type = sys::LLAMA_FLASH_ATTN_TYPE_DISABLED;
        context_params.no_perf = true;
        // SAFETY: `model` is live and outlives the context (dropped first).
        let ctx = unsafe { sys::llama_init_from_model(model, context_params) };
        if ctx.is_null() {
            // SAFETY: the model is live and not used after.
            unsafe { sys::llama_model_free(model) };
            return Err(load_error("llama.cpp could not make a training context"));
        }
        // llama_opt_epoch computes without setting the CPU backend's thread
        // count (only llama_decode does, in graph_compute), so ggml's default
        // of 4 threads would run every step: one decode of one token sets
        // `options.threads` on the backend for good.
        let mut token = 0;
        // SAFETY: `ctx` is live; the batch borrows `token` for the call
        // (token 0 exists in every vocabulary); the memory is the context's.
        let decoded = unsafe {
            let rc = sys::llama_decode(ctx, sys::llama_batch_get_one(&mut token, 1));
            sys::llama_memory_clear(sys::llama_get_memory(ctx), true);
            rc
        };
        if decoded != 0 {
            // SAFETY: both are live and not used after; the context goes first.
            unsafe {
                sys::llama_free(ctx);
                sys::llama_model_free(model);
            }
            return Err(load_error("llama.cpp could not run the context"));
        }
        let (min_layer, all) = match options.trainable {
            Trainable::All => (0, true),
            Trainable::LastLayers(n) => (n_layer.saturating_sub(n.max(1)), false),
        };
        let filter = Box::new(Filter {
            min_layer,
            all,
            params: Cell::new(0),
        });
        // SAFETY: returns a plain struct.
        let mut teach = unsafe { sys::ggml_opt_get_default_optimizer_params(std::ptr::null_mut()) };
        teach.adamw.alpha = options.learning_rate;
        let schedule = Box::new(Schedule {
            teach: Cell::new(teach),
            teaches: RefCell::new(Vec::new()),
            next: Cell::new(0),
        });
        let opt_params = sys::llama_opt_params {
            n_ctx_train: 0,
            param_filter: Some(accept),
            param_filter_ud: std::ptr::from_ref::<Filter>(&filter) as *mut c_void,
            get_opt_pars: Some(scheduled_params),
            get_opt_pars_ud: std::ptr::from_ref::<Schedule>(&schedule) as *mut c_void,
            optimizer_type: sys::GGML_OPT_OPTIMIZER_TYPE_ADAMW,
        };
        // SAFETY: `ctx` and `model` are live; the filter and schedule
        // userdata are boxed and kept in the Trainer for the context's life.
        unsafe { sys::llama_opt_init(ctx, model, opt_params) };
        let n = i64::from(n_ctx);
        // SAFETY: plain constructors; freed in Drop.
        let (dataset, result_train, result_eval) = unsafe {
            (
                sys::ggml_opt_dataset_init(sys::GGML_TYPE_I32, sys::GGML_TYPE_I32, n, n, 1, 1),
                sys::ggml_opt_result_init(),
                sys::ggml_opt_result_init(),
            )
        };
        Ok(Self {
            path: path.to_owned(),
            model,
            ctx,
            dataset,
            result_train,
            result_eval,
            n_ctx,
            n_ubatch,
            n_layer,
            loss_on: options.loss,
            filter,
            schedule,
        })
    }

    /// Tokens a step trains on: what was asked, rounded up as llama.cpp
    /// rounds a context; windows hold one more.
    pub fn n_ctx(&self) -> u32 {
        self.n_ctx
    }

    /// Layers of the model.
    pub fn n_layer(&self) -> u32 {
        self.n_layer
    }

    /// Parameters that train.
    pub fn trainable_params(&self) -> u64 {
        self.filter.params.get()
    }

    fn vocab(&self) -> *const sys::llama_vocab {
        // SAFETY: the model is live for the Trainer's life.
        unsafe { sys::llama_model_get_vocab(self.model) }
    }

    /// The end-of-sequence token (end of turn where there is no EOS).
    pub fn eos(&self) -> i32 {
        // SAFETY: the vocab is live.
        let eos = unsafe { sys::llama_vocab_eos(self.vocab()) };
        if eos >= 0 {
            eos
        } else {
            // SAFETY: as above.
            unsafe { sys::llama_vocab_eot(self.vocab()) }.max(0)
        }
    }

    /// `text`'s tokens as the engine makes them: BOS where the model adds
    /// one, special tokens (`<|im_start|>`) read as such.
    pub fn tokenize(&self, text: &str) -> Result<Vec<i32>, TrainError> {
        let len = i32::try_from(text.len())
            .map_err(|_| TrainError::Input("a training text over 2 GB".into()))?;
        let mut tokens = vec![0i32; text.len() + 2];
        for _ in 0..2 {
            // SAFETY: `text` is valid for `len` bytes (llama_tokenize reads
            // no further); `tokens` has room for its length.
            let n = unsafe {
                sys::llama_tokenize(
                    self.vocab(),
                    text.as_ptr().cast(),
                    len,
                    tokens.as_mut_ptr(),
                    tokens.len() as i32,
                    true,
                    true,
                )
            };
            if n >= 0 {
                tokens.truncate(n as usize);
                return Ok(tokens);
            }
            tokens.resize(n.unsigned_abs() as usize, 0);
        }
        Err(TrainError::Input("a text could not be tokenised".into()))
    }

    /// AdamW's step size from the next step on (a schedule lowers it as a
    /// run goes).
    pub fn set_learning_rate(&mut self, learning_rate: f32) {
        let mut teach = self.schedule.teach.get();
        teach.adamw.alpha = learning_rate;
        self.schedule.teach.set(teach);
    }

    /// One AdamW step on `window` (`n_ctx + 1` tokens: inputs, and the
    /// labels one further): the mean loss of the labels taught (with
    /// [`LossOn::Reply`], of the micro-batches holding a reply's labels;
    /// of all, where none does — and then no weight moves).
    pub fn step(&mut self, window: &Window) -> Result<f32, TrainError> {
        self.run(window, true)
    }

    /// `window`'s loss, counted as [`Trainer::step`] counts it, without a
    /// step.
    pub fn loss(&mut self, window: &Window) -> Result<f32, TrainError> {
        self.run(window, false)
    }

    fn run(&mut self, window: &Window, train: bool) -> Result<f32, TrainError> {
        let n = self.n_ctx as usize;
        if window.tokens.len() != n + 1 || window.reply.len() != n {
            return Err(TrainError::Input(format!(
                "a window of {} tokens and {} label marks; this trainer takes {} and {n}",
                window.tokens.len(),
                window.reply.len(),
                n + 1
            )));
        }
        let teaches: Vec<bool> = match self.loss_on {
            LossOn::Everything => vec![true; n.div_ceil(self.n_ubatch as usize)],
            LossOn::Reply => window
                .reply
                .chunks(self.n_ubatch as usize)
                .map(|labels| labels.contains(&true))
                .collect(),
        };
        *self.schedule.teaches.borrow_mut() = teaches.clone();
        self.schedule.next.set(0);
        MICRO_LOSSES.with(|losses| losses.borrow_mut().clear());
        let window = window.tokens.as_slice();
        // SAFETY: the token count of the vocab is fixed for the model's life.
        let n_vocab = unsafe { sys::llama_vocab_n_tokens(self.vocab()) };
        if window.iter().any(|&t| t < 0 || t >= n_vocab) {
            return Err(TrainError::Input(
                "a token outside the model's vocabulary".into(),
            ));
        }
        // SAFETY: the dataset's data and labels are I32 tensors of `n`
        // elements (one datapoint) in host memory (a CPU buffer), written
        // here and read by llama_opt_epoch below, on this thread.
        unsafe {
            let data = (*sys::ggml_opt_dataset_data(self.dataset))
                .data
                .cast::<i32>();
            let labels = (*sys::ggml_opt_dataset_labels(self.dataset))
                .data
                .cast::<i32>();
            std::ptr::copy_nonoverlapping(window.as_ptr(), data, n);
            std::ptr::copy_nonoverlapping(window[1..].as_ptr(), labels, n);
            sys::ggml_opt_result_reset(self.result_train);
            sys::ggml_opt_result_reset(self.result_eval);
            sys::llama_opt_epoch(
                self.ctx,
                self.dataset,
                self.result_train,
                self.result_eval,
                i64::from(train),
                Some(record_loss),
                Some(record_loss),
            );
        }
        let losses = MICRO_LOSSES.with(RefCell::take);
        // opt_epoch_iter only logs when a batch cannot be set up; the result
        // is then short and its "loss" a 0.0 that would read as perfect.
        if losses.len() != teaches.len() {
            return Err(TrainError::Input(format!(
                "llama.cpp evaluated {} of a window's {} micro-batches (see its log)",
                losses.len(),
                teaches.len()
            )));
        }
        Ok(taught_mean(&losses, &teaches) as f32)
    }

    /// Writes the model as it is now (F32) to `path`, through `path.tmp`.
    pub fn save(&self, path: &Path) -> Result<(), TrainError> {
        let mut name = path.file_name().unwrap_or_default().to_os_string();
        name.push(".tmp");
        let tmp = path.with_file_name(name);
        let c_tmp = c_path(&tmp)?;
        // SAFETY: the model is live; the path is NUL-terminated.
        unsafe { sys::llama_model_save_to_file(self.model, c_tmp.as_ptr()) };
        let written = std::fs::metadata(&tmp).map_or(0, |m| m.len());
        if written == 0 {
            let _ = std::fs::remove_file(&tmp);
            return Err(TrainError::Write {
                path: path.to_owned(),
                detail: "llama.cpp wrote nothing (is the disk full?)".into(),
            });
        }
        std::fs::rename(&tmp, path).map_err(|e| TrainError::Write {
            path: path.to_owned(),
            detail: e.to_string(),
        })
    }

    /// The file it was loaded from.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Trainer {
    fn drop(&mut self) {
        // SAFETY: each object is live and freed once, the context before
        // the model it borrows.
        unsafe {
            sys::ggml_opt_result_free(self.result_train);
            sys::ggml_opt_result_free(self.result_eval);
            sys::ggml_opt_dataset_free(self.dataset);
            sys::llama_free(self.ctx);
            sys::llama_model_free(self.model);
        }
    }
}

/// llama.cpp pads every context to a multiple of this many tokens, and a
/// training window must be the whole context.
pub const CONTEXT_STEP: u32 = 256;

/// `asked` rounded up to a whole context.
pub fn window_tokens(asked: u32) -> u32 {
    asked.max(1).div_ceil(CONTEXT_STEP) * CONTEXT_STEP
}

/// The parameter filter llama.cpp calls per tensor: the top layers (by the
/// `blk.N.` name) and the output norm; never the output head or the token
/// embedding (tied in small models; llama.cpp does not train the latter).
unsafe extern "C" fn accept(tensor: *const sys::ggml_tensor, userdata: *mut c_void) -> bool {
    if tensor.is_null() || userdata.is_null() {
        return false;
    }
    // SAFETY: `userdata` is the Trainer's boxed Filter, alive during
    // llama_opt_init which alone calls this, on the same thread.
    let filter = unsafe { &*userdata.cast::<Filter>() };
    // SAFETY: llama.cpp passes a live tensor whose name is NUL-terminated
    // within its fixed-size array.
    let name = unsafe { CStr::from_ptr((*tensor).name.as_ptr()) }.to_string_lossy();
    let take = filter.all || wanted(&name, filter.min_layer);
    // llama.cpp skips these two after asking (llama_set_param): not counted.
    if take && name != "token_embd.weight" && name != "rope_freqs.weight" {
        // SAFETY: a live tensor.
        let count = unsafe { sys::ggml_nelements(tensor) };
        filter.params.set(filter.params.get() + count.max(0) as u64);
    }
    take
}

/// Whether a tensor named `name` trains when layers from `min_layer` do.
fn wanted(name: &str, min_layer: u32) -> bool {
    if name.starts_with("output_norm") {
        return true;
    }
    name.strip_prefix("blk.")
        .and_then(|rest| rest.split('.').next())
        .and_then(|layer| layer.parse::<u32>().ok())
        .is_some_and(|layer| layer >= min_layer)
}

#[cfg(test)]
mod tests {
    use super::{wanted, window_tokens};

    #[test]
    fn a_window_is_a_whole_padded_context() {
        assert_eq!(window_tokens(64), 256);
        assert_eq!(window_tokens(256), 256);
        assert_eq!(window_tokens(300), 512);
    }

    #[test]
    fn the_top_layers_and_the_output_norm_train_and_nothing_else() {
        assert!(wanted("blk.29.attn_q.weight", 22));
        assert!(wanted("blk.22.ffn_down.weight", 22));
        assert!(!wanted("blk.21.ffn_down.weight", 22));
        assert!(wanted("output_norm.weight", 22));
        assert!(!wanted("output.weight", 22));
        assert!(!wanted("token_embd.weight", 0));
        assert!(!wanted("blk.x.attn_q.weight", 0));
    }
}

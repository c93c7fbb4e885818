//! Teaching a GGUF model on this machine's CPU with llama.cpp's own
//! training API (`llama_opt_init` / `llama_opt_epoch` in the `llama.h` the
//! engine already links), through raw FFI: llama-cpp-2 wraps no training
//! call. Why this route and not LoRA or PEFT: `docs/architecture.md`,
//! "Teaching a model".
//!
//! - [`dequantize`]: a quantised file to F32, the only type llama.cpp's
//!   optimizer updates;
//! - [`Trainer`]: one model and one training context; [`Trainer::step`]
//!   is one AdamW step on one window of tokens, [`Trainer::loss`] the same
//!   window evaluated, [`Trainer::save`] the F32 model;
//! - [`quantize`] and [`restore_metadata`]: the result written back small,
//!   with what llama.cpp's saver leaves out (the chat template) or changes
//!   (the trained context) put back;
//! - [`pack`]: token sequences laid into windows, a reply's labels
//!   marked (pure);
//! - [`LossOn::Reply`]: the loss of the reply alone. `llama_opt_epoch`
//!   scores every label, so a window is run in micro-batches of
//!   [`REPLY_UBATCH`] tokens, one optimizer call each, and the calls on a
//!   micro-batch without a reply label are made no-ops (see
//!   `trainer.rs`, "How a micro-batch is masked").
//!
//! Only this crate writes `unsafe`; every block says why it is sound.

mod backend;
mod convert;
mod mask;
mod pack;
mod trainer;

use std::path::PathBuf;

pub use convert::{BaseMetadata, OutType, base_metadata, dequantize, quantize, restore_metadata};
pub use mask::REPLY_UBATCH;
pub use pack::{Text, Window, pack};
pub use trainer::{CONTEXT_STEP, Trainer, window_tokens};

/// Which tensors get gradients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trainable {
    /// Every tensor llama.cpp lets train (all but the token embedding).
    All,
    /// The top `n` layers and the output norm: no gradient flows below
    /// them, so a step costs less and the optimizer holds less.
    LastLayers(u32),
}

/// Which labels of a window the loss counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LossOn {
    /// Every token: llama.cpp's own loss. The node's prompt is 300–450 of
    /// a window's tokens and the reply 20–60, so most of the gradient
    /// teaches the prompt (measured: docs/benchmarks.md).
    Everything,
    /// The micro-batches that hold a reply's labels; the others move no
    /// weight. The attention's K and V projections get no gradient this
    /// way (llama.cpp computes them through the KV cache when a micro-batch
    /// is shorter than the window).
    Reply,
}

/// How to train.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrainOptions {
    /// CPU threads.
    pub threads: i32,
    /// Tokens per step (one window), rounded up to a multiple of
    /// [`CONTEXT_STEP`].
    pub n_ctx: u32,
    /// AdamW's learning rate.
    pub learning_rate: f32,
    /// Which tensors train.
    pub trainable: Trainable,
    /// Which labels the loss counts.
    pub loss: LossOn,
}

/// Why training could not go on. Each message is one line naming the file.
#[derive(Debug, thiserror::Error)]
pub enum TrainError {
    /// The file is missing or is no GGUF.
    #[error("model file {path}: {detail}")]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// llama.cpp could not load it or make a training context.
    #[error("model file {path} could not be loaded for training by llama.cpp: {detail}")]
    Load {
        /// The file.
        path: PathBuf,
        /// What failed.
        detail: String,
    },
    /// Converting (dequantising, quantising) failed.
    #[error("converting {from} into {to} failed (llama.cpp's quantizer said no; see the log)")]
    Convert {
        /// The input.
        from: PathBuf,
        /// The output.
        to: PathBuf,
    },
    /// Writing a file failed.
    #[error("cannot write {path}: {detail}")]
    Write {
        /// The file.
        path: PathBuf,
        /// What failed.
        detail: String,
    },
    /// A window or a text does not fit what the trainer was opened for.
    #[error("{0}")]
    Input(String),
}

//! Teaching the reply alone ([`crate::LossOn::Reply`]): which of a
//! window's optimizer calls teach, the AdamW settings that make the others
//! change nothing, and each micro-batch's loss, read through llama.cpp's
//! callbacks (`trainer.rs`, "How a micro-batch is masked", says why).

use std::cell::{Cell, RefCell};
use std::ffi::c_void;

use llama_cpp_sys_2 as sys;

/// Tokens in a micro-batch when only the reply is taught: a tool call is
/// 10–30 tokens and a plain answer 20–60, so a micro-batch this small holds
/// mostly reply labels; smaller would add optimizer calls (each a pass
/// over every trained weight and its two moments) for little gain.
pub const REPLY_UBATCH: u32 = 32;

/// What the optimizer does at each micro-batch of the window being run;
/// read by llama.cpp through [`scheduled_params`] at every optimizer call.
pub(crate) struct Schedule {
    /// AdamW's settings where a micro-batch teaches.
    pub(crate) teach: Cell<sys::ggml_opt_optimizer_params>,
    /// Per micro-batch of the window being run: does it teach?
    pub(crate) teaches: RefCell<Vec<bool>>,
    /// The index of the next optimizer call in the window.
    pub(crate) next: Cell<usize>,
}

thread_local! {
    /// Each micro-batch's loss in the window being run, in order, written
    /// by [`record_loss`] (llama.cpp's epoch callback takes no userdata;
    /// the epoch runs on the caller's thread).
    pub(crate) static MICRO_LOSSES: RefCell<Vec<f64>> = const { RefCell::new(Vec::new()) };
}

/// The mean of the micro-batches' `losses` that teach; of all where none
/// does.
pub(crate) fn taught_mean(losses: &[f64], teaches: &[bool]) -> f64 {
    let taught: Vec<f64> = losses
        .iter()
        .zip(teaches)
        .filter_map(|(&loss, &teach)| teach.then_some(loss))
        .collect();
    let counted = if taught.is_empty() { losses } else { &taught };
    counted.iter().sum::<f64>() / counted.len().max(1) as f64
}

/// AdamW's settings for an optimizer call that must change nothing
/// (`trainer.rs`'s module comment says why each value).
fn masked(teach: sys::ggml_opt_optimizer_params) -> sys::ggml_opt_optimizer_params {
    let mut masked = teach;
    masked.adamw.alpha = f32::MIN_POSITIVE;
    masked.adamw.beta1 = 1.0 - f32::EPSILON / 2.0;
    masked.adamw.beta2 = 1.0 - f32::EPSILON / 2.0;
    masked.adamw.wd = 0.0;
    masked
}

/// llama.cpp asks this for the optimizer's settings at each optimizer call
/// (one per micro-batch, in order): the real step where the micro-batch
/// teaches, [`masked`] where it does not.
pub(crate) unsafe extern "C" fn scheduled_params(
    userdata: *mut c_void,
) -> sys::ggml_opt_optimizer_params {
    if userdata.is_null() {
        // SAFETY: the defaults take no userdata.
        return unsafe { sys::ggml_opt_get_default_optimizer_params(std::ptr::null_mut()) };
    }
    // SAFETY: `userdata` is the Trainer's boxed Schedule, alive for the
    // context's life; llama.cpp calls this on the thread running the epoch,
    // while the Trainer is borrowed mutably by `run` and touches no field.
    let schedule = unsafe { &*userdata.cast::<Schedule>() };
    let index = schedule.next.get();
    schedule.next.set(index + 1);
    let teach = schedule.teach.get();
    if schedule
        .teaches
        .borrow()
        .get(index)
        .copied()
        .unwrap_or(true)
    {
        teach
    } else {
        masked(teach)
    }
}

/// llama.cpp's epoch callback, after each micro-batch: the result holds the
/// mean loss of the micro-batches so far, so this one's is the new sum less
/// the old.
pub(crate) unsafe extern "C" fn record_loss(
    _train: bool,
    _opt_ctx: sys::ggml_opt_context_t,
    _dataset: sys::ggml_opt_dataset_t,
    result: sys::ggml_opt_result_t,
    _ibatch: i64,
    _ibatch_max: i64,
    _t_start_us: i64,
) {
    if result.is_null() {
        return;
    }
    let mut mean = 0f64;
    // SAFETY: `result` is the live result llama.cpp just added to; the
    // uncertainty pointer may be null (the function checks).
    unsafe { sys::ggml_opt_result_loss(result, &mut mean, std::ptr::null_mut()) };
    MICRO_LOSSES.with(|losses| {
        let mut losses = losses.borrow_mut();
        let before: f64 = losses.iter().sum();
        let count = losses.len() as f64 + 1.0;
        losses.push(mean * count - before);
    });
}

#[cfg(test)]
mod tests {
    use super::{masked, taught_mean};

    #[test]
    fn a_step_reports_the_taught_micro_batches_loss() {
        assert_eq!(taught_mean(&[4.0, 2.0, 1.0], &[false, true, true]), 1.5);
        // None teaches: the mean of all, not a 0 that reads as perfect.
        assert_eq!(taught_mean(&[4.0, 2.0], &[false, false]), 3.0);
    }

    #[test]
    fn a_masked_call_moves_no_weight_and_keeps_the_moments() {
        // SAFETY: returns a plain struct.
        let teach =
            unsafe { llama_cpp_sys_2::ggml_opt_get_default_optimizer_params(std::ptr::null_mut()) };
        let m = masked(teach).adamw;
        // ggml's AdamW asserts these.
        assert!(m.alpha > 0.0 && m.beta1 < 1.0 && m.beta2 < 1.0 && m.wd == 0.0);
        // Its update, as ggml_compute_forward_opt_step_adamw_f32 computes
        // it, at the first call (the largest bias corrections), on a weight
        // of 1e-3 with a typical gradient: the weight and m do not change,
        // v by a part in 10^7.
        let (w, g, m0, v0, iter) = (1e-3f32, 1e-2f32, 1e-3f32, 1e-5f32, 1);
        let beta1h = 1.0 / (1.0 - m.beta1.powi(iter));
        let beta2h = 1.0 / (1.0 - m.beta2.powi(iter));
        let m1 = m0 * m.beta1 + g * (1.0 - m.beta1);
        let v1 = v0 * m.beta2 + g * g * (1.0 - m.beta2);
        let w1 =
            w * (1.0 - m.alpha * m.wd) - m.alpha * (m1 * beta1h) / ((v1 * beta2h).sqrt() + m.eps);
        assert_eq!(w1, w);
        assert!(
            (m1 - m0).abs() < 1e-9 && (v1 - v0).abs() / v0 < 1e-6,
            "{m1} {v1}"
        );
    }
}

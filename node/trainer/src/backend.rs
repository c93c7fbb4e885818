//! llama.cpp's process-wide start, once, with its log routed to `tracing`
//! (debug level: the training prints a line per tensor otherwise).

use std::ffi::{CStr, c_char, c_void};
use std::sync::Once;

use llama_cpp_sys_2 as sys;

static INIT: Once = Once::new();

/// Starts llama.cpp's backend (idempotent) and routes its log.
pub(crate) fn init() {
    INIT.call_once(|| {
        // SAFETY: llama_backend_init takes no arguments and may be called
        // before anything else; the Once makes it run once here (the
        // engine's llama-cpp-2 calls it too, which llama.cpp allows).
        unsafe { sys::llama_backend_init() };
        // SAFETY: `log` is an `extern "C"` fn with the callback's signature
        // that lives for the whole program; no user data is passed.
        unsafe { sys::llama_log_set(Some(log), std::ptr::null_mut()) };
    });
}

unsafe extern "C" fn log(_level: sys::ggml_log_level, text: *const c_char, _user: *mut c_void) {
    if text.is_null() {
        return;
    }
    // SAFETY: llama.cpp passes a NUL-terminated string valid for the call.
    let text = unsafe { CStr::from_ptr(text) };
    tracing::debug!(target: "llama.cpp", "{}", text.to_string_lossy().trim_end());
}

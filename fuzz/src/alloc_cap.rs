//! The allocation cap every target runs under: a global allocator that
//! counts the live heap bytes of the current thread. Under AFL++ (`cfg
//! fuzzing`) it refuses (returns null, so Rust aborts with "memory
//! allocation of N bytes failed") any allocation that would take them past
//! the limit [`with_limit`] set: a crash, with the input saved. In the
//! replay tests it lets the allocation happen and [`with_limit`] reports the
//! peak, which the test compares with the limit and names the input that
//! broke it. Either way "a decoder never allocates beyond its bound" is
//! checked on every input, not only "it does not panic". A single request
//! over [`HARD_MAX_BYTES`] is refused in both.
//!
//! The counters are thread-local (`const` cells, no destructor, so reading
//! them never allocates): the replay tests run targets on several threads at
//! once, each under its own limit. The decoders allocate and free on the
//! calling thread only.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

thread_local! {
    /// Heap bytes this thread holds now.
    static LIVE: Cell<usize> = const { Cell::new(0) };
    /// The most `LIVE` may reach; `usize::MAX` outside [`with_limit`].
    static LIMIT: Cell<usize> = const { Cell::new(usize::MAX) };
    /// The highest `LIVE` seen since the last [`with_limit`] began.
    static PEAK: Cell<usize> = const { Cell::new(0) };
}

/// Larger than any bound of ours: refused outright, so that a decoder
/// asking for a length it read from the input cannot touch gigabytes.
pub const HARD_MAX_BYTES: usize = 1 << 30;

/// The system allocator under the per-thread cap.
pub struct CappedAlloc;

/// Adds `size` to this thread's live bytes unless that is refused (see the
/// module doc).
fn take(size: usize) -> bool {
    if size > HARD_MAX_BYTES {
        return false;
    }
    LIVE.try_with(|live| {
        let now = live.get().saturating_add(size);
        if cfg!(fuzzing) && now > LIMIT.try_with(Cell::get).unwrap_or(usize::MAX) {
            return false;
        }
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
        true
    })
    .unwrap_or(true)
}

fn give(size: usize) {
    let _ = LIVE.try_with(|live| live.set(live.get().saturating_sub(size)));
}

// SAFETY: every method forwards to `System` with the caller's layout and
// pointer unchanged; the counting around it touches only thread-local cells.
unsafe impl GlobalAlloc for CappedAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !take(layout.size()) {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's layout, as `GlobalAlloc::alloc` requires.
        let p = unsafe { System.alloc(layout) };
        if p.is_null() {
            give(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if !take(layout.size()) {
            return std::ptr::null_mut();
        }
        // SAFETY: as in `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if p.is_null() {
            give(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        give(layout.size());
        // SAFETY: `ptr` came from `System` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let old = layout.size();
        if new_size > old && !take(new_size - old) {
            return std::ptr::null_mut();
        }
        // SAFETY: `ptr` came from `System` with `layout`; `new_size` is the
        // caller's, as `GlobalAlloc::realloc` requires.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if p.is_null() {
            if new_size > old {
                give(new_size - old);
            }
        } else if new_size < old {
            give(old - new_size);
        }
        p
    }
}

/// Runs `f` with this thread allowed at most `bytes` more heap than it holds
/// now; returns what `f` returned and the most it held above that at once.
pub fn with_limit<R>(bytes: usize, f: impl FnOnce() -> R) -> (R, usize) {
    let base = LIVE.with(Cell::get);
    let before = LIMIT.with(|l| l.replace(base.saturating_add(bytes)));
    let peak_before = PEAK.with(|p| p.replace(base));
    let out = f();
    LIMIT.with(|l| l.set(before));
    let peak = PEAK.with(|p| p.replace(peak_before.max(p.get())));
    (out, peak.saturating_sub(base))
}

//! A counting global allocator for tests that bound memory: the heap bytes each thread holds
//! and their peak, so a test sees only its own work (the test harness runs tests on several
//! threads at once). Included by a test file with `#[path = "common/heap.rs"] mod heap;`; it
//! installs itself as that test binary's global allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Counts the heap bytes each thread holds, and their peak, so a test sees only its own work
/// (the test harness runs tests on several threads at once).
struct PerThreadCounting;

thread_local! {
    static LIVE: Cell<usize> = const { Cell::new(0) };
    static PEAK: Cell<usize> = const { Cell::new(0) };
}

fn count(grow: usize, shrink: usize) {
    // `try_with`: during a thread's teardown its counters may be gone; those bytes are not ours.
    let _ = LIVE.try_with(|live| {
        let now = (live.get() + grow).saturating_sub(shrink);
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so the
// allocator contract holds exactly as it does for `System`. The additions only update
// const-initialised thread-local `Cell<usize>`s, which need no allocation and no destructor, and
// never touch the memory handed out.
unsafe impl GlobalAlloc for PerThreadCounting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size(), 0);
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(0, layout.size());
        System.dealloc(ptr, layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size(), 0);
        System.alloc_zeroed(layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size, layout.size());
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static ALLOCATOR: PerThreadCounting = PerThreadCounting;

/// The most heap this thread held at once, above what it held before, while `f` ran.
pub fn peak_heap<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(before));
    let out = f();
    (out, PEAK.with(Cell::get) - before)
}

/// The heap this thread holds after `f` ran beyond what it held before: what `f`'s result
/// keeps (when `f` frees all else it took).
#[allow(dead_code)]
pub fn held_heap<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = LIVE.with(Cell::get);
    let out = f();
    (out, LIVE.with(Cell::get).saturating_sub(before))
}

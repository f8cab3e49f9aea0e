//! What the CLI asks of its allocator, mimalloc (the binary's global allocator, `main.rs`):
//! to give freed memory back to the kernel at the points where holding it would raise a
//! command's peak, as converting a record of a million features does (the README's memory
//! bound). mimalloc otherwise keeps freed pages a while for reuse, which ordinary batches gain
//! from. Where mimalloc is not the global allocator (the library's tests), these calls only
//! tidy mimalloc's own empty heaps.

use std::os::raw::c_long;

/// mimalloc's `mi_option_purge_delay` (its place in `mi_option_e`, the same in versions 2 and
/// 3; the crate names no constant for it): milliseconds before freed memory is returned (1000
/// by default in mimalloc 3, the version the crate builds).
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Returns the memory freed so far that mimalloc still holds.
pub(crate) fn return_freed() {
    // SAFETY: `mi_collect` takes no pointer and has no precondition; any thread may call it.
    unsafe { libmimalloc_sys::mi_collect(true) };
}

/// From now on, memory freed is returned at once rather than after the purge delay.
pub(crate) fn return_freed_at_once() {
    // SAFETY: `mi_option_set` takes no pointer; setting an option any time is allowed (its
    // value is read where a purge is scheduled).
    unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, 0 as c_long) };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The option's number is mimalloc's purge delay: it has that option's default (unless
    /// the environment sets it; no neighbouring option's default is 1000), and takes the value
    /// set.
    #[test]
    fn the_purge_delay_option_is_the_one_set() {
        // SAFETY: as above; reading an option has no precondition.
        let before = unsafe { libmimalloc_sys::mi_option_get(PURGE_DELAY) };
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            assert_eq!(before, 1000);
        }
        return_freed_at_once();
        // SAFETY: as above.
        assert_eq!(unsafe { libmimalloc_sys::mi_option_get(PURGE_DELAY) }, 0);
        // SAFETY: as above; the test leaves the option as it found it.
        unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, before) };
        return_freed();
    }
}

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

/// While this lives, memory freed is returned at once rather than after the purge delay. The
/// delay is restored when it is dropped: the CLI also runs inside a Python process (the
/// wheel's `tfrec` command), whose later work should not pay for purging at once.
#[must_use = "the purge delay is restored when this is dropped"]
pub(crate) struct ReturnFreedAtOnce {
    delay_before: c_long,
}

impl ReturnFreedAtOnce {
    pub(crate) fn start() -> Self {
        // SAFETY: `mi_option_get` and `mi_option_set` take no pointer; reading or setting an
        // option any time is allowed (the delay is read where a purge is scheduled).
        let delay_before = unsafe { libmimalloc_sys::mi_option_get(PURGE_DELAY) };
        // SAFETY: as above.
        unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, 0) };
        ReturnFreedAtOnce { delay_before }
    }
}

impl Drop for ReturnFreedAtOnce {
    fn drop(&mut self) {
        // SAFETY: as in `start`.
        unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, self.delay_before) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn purge_delay() -> c_long {
        // SAFETY: reading an option has no precondition.
        unsafe { libmimalloc_sys::mi_option_get(PURGE_DELAY) }
    }

    /// The option's number is mimalloc's purge delay: it has that option's default (unless
    /// the environment sets it; no neighbouring option's default is 1000), is 0 while the
    /// guard lives, and is as before once it is dropped.
    #[test]
    fn the_purge_delay_is_zero_while_the_guard_lives() {
        let before = purge_delay();
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            assert_eq!(before, 1000);
        }
        let at_once = ReturnFreedAtOnce::start();
        assert_eq!(purge_delay(), 0);
        drop(at_once);
        assert_eq!(purge_delay(), before);
        return_freed();
    }
}

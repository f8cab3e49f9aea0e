//! Work spread over threads within one step of statistics: `map_on_threads`, which finishing
//! uses to make the features' statistics on the threads the run was given.

use std::sync::atomic::{AtomicUsize, Ordering};

/// `f` of every item, in order, computed on up to `threads` threads (scoped, each taking the
/// next item not yet taken).
pub(super) fn map_on_threads<T: Sync, R: Send>(items: &[T], threads: usize, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = threads.min(items.len());
    if threads <= 1 {
        return items.iter().map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let take = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(i) else { return done };
            done.push((i, f(item)));
        }
    };
    let mut done: Vec<(usize, R)> = std::thread::scope(|scope| {
        let others: Vec<_> = (1..threads).map(|_| scope.spawn(take)).collect();
        let mut done = take();
        for other in others {
            done.extend(other.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)));
        }
        done
    });
    done.sort_unstable_by_key(|&(i, _)| i);
    done.into_iter().map(|(_, r)| r).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mapping_on_threads_keeps_the_items_order() {
        let items: Vec<u64> = (0..1_000).collect();
        let want: Vec<u64> = items.iter().map(|i| i * i).collect();
        for threads in [0, 1, 2, 3, 8, 2_000] {
            assert_eq!(map_on_threads(&items, threads, |i| i * i), want, "{threads} threads");
        }
        assert!(map_on_threads(&[] as &[u64], 4, |i| *i).is_empty());
    }
}

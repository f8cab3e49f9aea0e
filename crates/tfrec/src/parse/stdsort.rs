//! `std::sort` exactly as GNU libstdc++ implements it (introsort: median-of-three quicksort,
//! heapsort past the depth limit, insertion sort below 16 elements), so that elements that
//! compare equal end up in the order TensorFlow's `tf.sparse.reorder` leaves them: its kernel
//! (`SparseTensor::Reorder`) sorts a permutation with `std::sort`, which is not stable, and
//! TensorFlow's Linux builds use libstdc++. Only the order of equal elements depends on this.
//!
//! Written from the algorithm's description in `bits/stl_algo.h` / `bits/stl_heap.h`; the
//! same steps, on slice indices instead of iterators.

const THRESHOLD: usize = 16;

/// Sorts `v` by `less` (a strict weak order) as libstdc++'s `std::sort` does.
pub(crate) fn sort<T: Copy>(v: &mut [T], less: &impl Fn(&T, &T) -> bool) {
    let n = v.len();
    if n < 2 {
        return;
    }
    let lg = (usize::BITS - 1 - n.leading_zeros()) as usize;
    introsort_loop(v, 0, n, lg * 2, less);
    final_insertion_sort(v, less);
}

fn introsort_loop<T: Copy>(
    v: &mut [T],
    first: usize,
    mut last: usize,
    mut depth: usize,
    less: &impl Fn(&T, &T) -> bool,
) {
    while last - first > THRESHOLD {
        if depth == 0 {
            heap_sort(&mut v[first..last], less);
            return;
        }
        depth -= 1;
        let cut = partition_pivot(v, first, last, less);
        introsort_loop(v, cut, last, depth, less);
        last = cut;
    }
}

fn partition_pivot<T: Copy>(v: &mut [T], first: usize, last: usize, less: &impl Fn(&T, &T) -> bool) -> usize {
    let mid = first + (last - first) / 2;
    move_median_to_first(v, first, first + 1, mid, last - 1, less);
    unguarded_partition(v, first + 1, last, first, less)
}

fn move_median_to_first<T: Copy>(
    v: &mut [T],
    result: usize,
    a: usize,
    b: usize,
    c: usize,
    less: &impl Fn(&T, &T) -> bool,
) {
    let pick = if less(&v[a], &v[b]) {
        if less(&v[b], &v[c]) {
            b
        } else if less(&v[a], &v[c]) {
            c
        } else {
            a
        }
    } else if less(&v[a], &v[c]) {
        a
    } else if less(&v[b], &v[c]) {
        c
    } else {
        b
    };
    v.swap(result, pick);
}

/// Hoare partition around `v[pivot]`; the sentinels of the median-of-three keep both scans in
/// bounds (as in libstdc++, which relies on them).
fn unguarded_partition<T: Copy>(
    v: &mut [T],
    mut first: usize,
    mut last: usize,
    pivot: usize,
    less: &impl Fn(&T, &T) -> bool,
) -> usize {
    loop {
        while less(&v[first], &v[pivot]) {
            first += 1;
        }
        last -= 1;
        while less(&v[pivot], &v[last]) {
            last -= 1;
        }
        if first >= last {
            return first;
        }
        v.swap(first, last);
        first += 1;
    }
}

fn final_insertion_sort<T: Copy>(v: &mut [T], less: &impl Fn(&T, &T) -> bool) {
    if v.len() > THRESHOLD {
        insertion_sort(&mut v[..THRESHOLD], less);
        for i in THRESHOLD..v.len() {
            unguarded_linear_insert(v, i, less);
        }
    } else {
        insertion_sort(v, less);
    }
}

fn insertion_sort<T: Copy>(v: &mut [T], less: &impl Fn(&T, &T) -> bool) {
    for i in 1..v.len() {
        if less(&v[i], &v[0]) {
            v[..=i].rotate_right(1);
        } else {
            unguarded_linear_insert(v, i, less);
        }
    }
}

fn unguarded_linear_insert<T: Copy>(v: &mut [T], mut last: usize, less: &impl Fn(&T, &T) -> bool) {
    let value = v[last];
    while last > 0 && less(&value, &v[last - 1]) {
        v[last] = v[last - 1];
        last -= 1;
    }
    v[last] = value;
}

/// `std::__partial_sort(first, last, last)`: make_heap, then sort_heap.
fn heap_sort<T: Copy>(v: &mut [T], less: &impl Fn(&T, &T) -> bool) {
    let len = v.len();
    if len >= 2 {
        let mut parent = (len - 2) / 2;
        loop {
            let value = v[parent];
            adjust_heap(v, parent, len, value, less);
            if parent == 0 {
                break;
            }
            parent -= 1;
        }
    }
    let mut last = len;
    while last > 1 {
        last -= 1;
        let value = v[last];
        v[last] = v[0];
        adjust_heap(&mut v[..last], 0, last, value, less);
    }
}

fn adjust_heap<T: Copy>(v: &mut [T], mut hole: usize, len: usize, value: T, less: &impl Fn(&T, &T) -> bool) {
    let top = hole;
    let mut second = hole;
    while second < len.saturating_sub(1) / 2 {
        second = 2 * (second + 1);
        if less(&v[second], &v[second - 1]) {
            second -= 1;
        }
        v[hole] = v[second];
        hole = second;
    }
    if len.is_multiple_of(2) && len >= 2 && second == (len - 2) / 2 {
        second = 2 * (second + 1);
        v[hole] = v[second - 1];
        hole = second - 1;
    }
    // push_heap
    let mut parent = hole.saturating_sub(1) / 2;
    while hole > top && less(&v[parent], &value) {
        v[hole] = v[parent];
        hole = parent;
        parent = hole.saturating_sub(1) / 2;
    }
    v[hole] = value;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_like_a_sort() {
        let mut seed = 12345u64;
        for n in [0usize, 1, 2, 5, 16, 17, 40, 300, 5000] {
            let mut v: Vec<(u32, usize)> = (0..n)
                .map(|i| {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    (((seed >> 33) % 7) as u32, i)
                })
                .collect();
            sort(&mut v, &|a, b| a.0 < b.0);
            assert!(v.windows(2).all(|w| w[0].0 <= w[1].0));
            let mut ids: Vec<usize> = v.iter().map(|x| x.1).collect();
            ids.sort_unstable();
            assert_eq!(ids, (0..n).collect::<Vec<_>>());
        }
        // Past the depth limit the heap sort runs; it sorts too.
        let mut v: Vec<u32> = (0..100).rev().collect();
        heap_sort(&mut v, &|a, b| a < b);
        assert_eq!(v, (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn small_inputs_keep_equal_elements_in_order() {
        // Below 17 elements libstdc++ only runs an insertion sort: stable.
        let mut v: Vec<(u8, usize)> = [3u8, 1, 3, 1, 2, 3, 1].iter().copied().zip(0..).collect();
        sort(&mut v, &|a, b| a.0 < b.0);
        assert_eq!(v.iter().map(|x| x.1).collect::<Vec<_>>(), vec![1, 3, 6, 4, 0, 2, 5]);
    }

    #[test]
    fn larger_inputs_move_equal_elements_as_introsort_does() {
        // 20 equal keys: the median-of-three swaps element 10 to the front, then the
        // partition swaps pairs from both ends; the final insertion sort keeps that order.
        let mut v: Vec<(u8, usize)> = (0..20).map(|i| (0u8, i)).collect();
        sort(&mut v, &|a, b| a.0 < b.0);
        let order: Vec<usize> = v.iter().map(|x| x.1).collect();
        assert_ne!(order, (0..20).collect::<Vec<_>>());
        assert_eq!(order[0], 10);
    }
}

//! Vectors of f64 reused by the evaluations of one thread: an evaluation at the anchor fills about
//! 12 MB of composed masses and profile sums, and fresh vectors of that size cost their page
//! faults (about a sixth of the evaluation).

use std::cell::RefCell;

/// Vectors kept per thread.
const KEPT: usize = 8;

thread_local! {
    static POOL: RefCell<Vec<Vec<f64>>> = const { RefCell::new(Vec::new()) };
}

/// A vector of `len` values left over from earlier use (zeros where it grew), for a caller that
/// writes every element before reading it (zeroing megabytes would cost time for nothing). It
/// reuses a returned vector's memory when there is one: the smallest that holds `len`, else the
/// largest (which grows).
pub(super) fn reuse(len: usize) -> Vec<f64> {
    let mut v = POOL
        .with(|p| {
            let mut p = p.borrow_mut();
            let fits = (0..p.len())
                .filter(|&i| p[i].capacity() >= len)
                .min_by_key(|&i| p[i].capacity());
            let pick = fits.or_else(|| (0..p.len()).max_by_key(|&i| p[i].capacity()));
            pick.map(|i| p.swap_remove(i))
        })
        .unwrap_or_default();
    v.truncate(len);
    v.resize(len, 0.0);
    v
}

/// Returns `v`'s memory to the pool (when the pool is full, the smallest vector is dropped).
pub(super) fn give_back(v: Vec<f64>) {
    if v.capacity() > 0 {
        POOL.with(|p| {
            let mut p = p.borrow_mut();
            p.push(v);
            if p.len() > KEPT
                && let Some(i) = (0..p.len()).min_by_key(|&i| p[i].capacity())
            {
                p.swap_remove(i);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn returned_memory_is_reused() {
        let mut v = reuse(1000);
        assert!(v.iter().all(|&x| x == 0.0), "fresh memory is zeros");
        v[3] = 1.0;
        let at = v.as_ptr();
        give_back(v);
        give_back(Vec::with_capacity(10));
        let w = reuse(500);
        assert_eq!(
            w.as_ptr(),
            at,
            "the smallest returned vector that holds 500"
        );
        assert_eq!((w.len(), w[3]), (500, 1.0), "left-over values");
        give_back(w);
        let grown = reuse(2000);
        assert_eq!(grown.len(), 2000);
        assert!(
            grown[500..].iter().all(|&x| x == 0.0),
            "zeros where it grew"
        );
    }
}

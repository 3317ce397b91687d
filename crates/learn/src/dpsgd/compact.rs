//! The training rows as DP-SGD reads them: `f32` values (half the bytes of `f64`, so a batch's
//! rows come from a matrix half the size), each row zero-padded to a multiple of [`LANES`] and
//! aligned to a cache line, with the norm ‖[x̃_i; 1]‖₂ of every stored row x̃_i computed once in
//! `f64`.
//!
//! Every later computation uses the stored values x̃ (exactly representable in `f64`), so the
//! clipping bound is about the vectors actually summed: the norms are the norms of x̃, accumulated
//! in `f64` (relative error ≤ (d + 2)·2^−53, far inside the clipping margin of
//! [`super::nets::clip_factor`]). Squares of `f32` values are < 2^256, so the norm never overflows.
//!
//! Rows that are mostly zeros (one-hot coded text columns: 20 of Adult's 102 values per row are
//! non-zero) are also stored sparse ([`SparseRows`]: the non-zero values of each row and their
//! columns), when at most [`SPARSE_DENSITY`] of the values are non-zero; the logistic kernel then
//! reads only those. The same stored `f32` values, so the same norms and the same clip bound.

use crate::error::{Result, invalid};
use ndarray::ArrayView2;

/// Values per SIMD chunk (16 `f32` = one 64-byte cache line).
pub(crate) const LANES: usize = 16;

/// The largest fraction of non-zero values at which the rows are also stored sparse.
pub(crate) const SPARSE_DENSITY: f64 = 0.35;

/// The rows' non-zero values (compressed sparse rows): row i's (column, value) pairs are
/// `entries[starts[i]..starts[i + 1]]`, columns ascending and < d; pairs are packed so that a
/// row is one contiguous read.
pub(crate) struct SparseRows {
    starts: Vec<usize>,
    entries: Vec<(u32, f32)>,
}

impl SparseRows {
    /// Row i's (column, value) pairs.
    #[inline]
    pub fn row(&self, i: usize) -> &[(u32, f32)] {
        &self.entries[self.starts[i]..self.starts[i + 1]]
    }

    /// A hint to bring row i's pairs into the cache ahead of use (no effect on results): every
    /// cache line they touch (8-byte pairs; a row of 14 pairs usually spans three lines).
    #[inline]
    pub fn prefetch(&self, i: usize) {
        #[cfg(target_arch = "x86_64")]
        if let Some(pairs) = self
            .starts
            .get(i..i + 2)
            .and_then(|s| self.entries.get(s[0]..s[1]))
        {
            // One pair per 64 bytes, and the last: every line the row touches.
            for pair in pairs.iter().step_by(8).chain(pairs.last()) {
                // SAFETY: prefetching is a hint and never faults; SSE is part of x86_64.
                unsafe {
                    std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                        (pair as *const (u32, f32)).cast::<i8>(),
                    )
                };
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = i;
    }
}

/// One cache line of a row.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([f32; LANES]);

/// The design matrix in `f32`, rows padded to `stride` values, with labels and row norms.
pub(crate) struct CompactRows<'a> {
    lines: Vec<Line>,
    /// Features per row.
    pub d: usize,
    /// Stored values per row: d rounded up to a multiple of [`LANES`].
    pub stride: usize,
    pub y: &'a [u32],
    /// ‖[x̃_i; 1]‖₂ per row, in `f64`.
    pub aug_norm: Vec<f64>,
    /// The same rows sparse, when at most [`SPARSE_DENSITY`] of the values are non-zero.
    pub sparse: Option<SparseRows>,
}

impl<'a> CompactRows<'a> {
    /// Stores `x` (finite, checked by the caller) in `f32`, rounding each value to nearest;
    /// refuses values beyond the `f32` range (|x| > 3.4·10³⁸), naming the row and column.
    pub fn new(x: ArrayView2<'_, f64>, y: &'a [u32]) -> Result<Self> {
        let (n, d) = x.dim();
        let stride = d.div_ceil(LANES).max(1) * LANES;
        let per_row = stride / LANES;
        let mut lines = vec![Line([0.0; LANES]); n * per_row];
        let mut aug_norm = Vec::with_capacity(n);
        for (i, row) in x.rows().into_iter().enumerate() {
            let out = &mut lines[i * per_row..(i + 1) * per_row];
            let mut sq = 1.0f64;
            for (j, &v) in row.iter().enumerate() {
                let s = v as f32;
                if !s.is_finite() {
                    return Err(invalid(
                        "features",
                        format!(
                            "value {v} at row {i}, column {j} is outside the f32 range DP-SGD \
                             stores features in (|x| ≤ 3.4e38)"
                        ),
                    ));
                }
                out[j / LANES].0[j % LANES] = s;
                sq += f64::from(s) * f64::from(s);
            }
            aug_norm.push(sq.sqrt());
        }
        let mut rows = CompactRows {
            lines,
            d,
            stride,
            y,
            aug_norm,
            sparse: None,
        };
        rows.sparse = rows.sparse_copy(n);
        Ok(rows)
    }

    /// The stored rows as [`SparseRows`] when few enough values are non-zero.
    fn sparse_copy(&self, n: usize) -> Option<SparseRows> {
        let d = self.d;
        let nonzero = (0..n)
            .map(|i| self.row(i)[..d].iter().filter(|v| **v != 0.0).count())
            .sum::<usize>();
        if d == 0 || nonzero as f64 > SPARSE_DENSITY * (n * d) as f64 || d > u32::MAX as usize {
            return None;
        }
        let mut sparse = SparseRows {
            starts: Vec::with_capacity(n + 1),
            entries: Vec::with_capacity(nonzero),
        };
        sparse.starts.push(0);
        for i in 0..n {
            for (j, &v) in self.row(i)[..d].iter().enumerate() {
                if v != 0.0 {
                    sparse.entries.push((j as u32, v));
                }
            }
            sparse.starts.push(sparse.entries.len());
        }
        Some(sparse)
    }

    /// Row i, `stride` values (zeros after the first d).
    #[inline]
    pub fn row(&self, i: usize) -> &[f32] {
        let per_row = self.stride / LANES;
        let lines = &self.lines[i * per_row..(i + 1) * per_row];
        // SAFETY: `Line` is `repr(C)` around `[f32; LANES]` with no padding (64 bytes, align 64),
        // so `per_row` consecutive lines are `stride` consecutive `f32`.
        unsafe { std::slice::from_raw_parts(lines.as_ptr().cast::<f32>(), self.stride) }
    }

    /// A hint to bring row i into the cache ahead of use (no effect on results).
    #[inline]
    pub fn prefetch(&self, i: usize) {
        #[cfg(target_arch = "x86_64")]
        {
            let per_row = self.stride / LANES;
            if let Some(lines) = self.lines.get(i * per_row..(i + 1) * per_row) {
                for line in lines {
                    // SAFETY: prefetching is a hint and never faults; SSE is part of x86_64.
                    unsafe {
                        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                            (line as *const Line).cast::<i8>(),
                        )
                    };
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = i;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn rows_are_padded_f32_with_their_norms() {
        let x = array![[3.0, 4.0, 0.1], [1e30, -2.0, 0.0]];
        let y = [0u32, 1];
        let r = CompactRows::new(x.view(), &y).unwrap();
        assert_eq!((r.aug_norm.len(), r.d, r.stride), (2, 3, 16));
        assert_eq!(&r.row(0)[..4], &[3.0, 4.0, 0.1f32, 0.0]);
        assert!(r.row(1)[3..].iter().all(|&v| v == 0.0));
        let want = (9.0 + 16.0 + f64::from(0.1f32).powi(2) + 1.0).sqrt();
        assert_eq!(r.aug_norm[0], want);
        assert_eq!(r.aug_norm[1], (f64::from(1e30f32).powi(2) + 5.0).sqrt());
        assert!(r.sparse.is_none(), "5 of 6 values are non-zero: dense only");
        let too_big = array![[1.0, 1e39]];
        let err = CompactRows::new(too_big.view(), &y[..1]).err().unwrap();
        assert!(err.to_string().contains("row 0, column 1"), "{err}");
    }

    #[test]
    fn mostly_zero_rows_are_also_stored_sparse_with_the_same_values() {
        let mut x = ndarray::Array2::<f64>::zeros((40, 30));
        for i in 0..40 {
            x[[i, i % 30]] = 1.0;
            x[[i, 29 - i % 7]] = 0.1 * i as f64 - 1.3;
        }
        let y = vec![0u32; 40];
        let r = CompactRows::new(x.view(), &y).unwrap();
        let sparse = r
            .sparse
            .as_ref()
            .expect("at most 2 of 30 values are non-zero");
        for i in 0..40 {
            let pairs = sparse.row(i);
            let mut dense = vec![0.0f32; r.stride];
            for &(j, v) in pairs {
                assert_ne!(v, 0.0);
                dense[j as usize] = v;
            }
            assert_eq!(dense, r.row(i), "row {i}");
            assert!(pairs.windows(2).all(|w| w[0].0 < w[1].0));
        }
    }
}

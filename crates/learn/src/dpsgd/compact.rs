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
//! columns, beside a record of the row's norm and label), when at most [`SPARSE_DENSITY`] of the
//! values are non-zero; the logistic kernel then reads only those. The same stored `f32` values,
//! so the same norms and the same clip bound.

use crate::error::{Result, invalid};
use ndarray::ArrayView2;

/// Values per SIMD chunk (16 `f32` = one 64-byte cache line).
pub(crate) const LANES: usize = 16;

/// The largest fraction of non-zero values at which the rows are also stored sparse.
pub(crate) const SPARSE_DENSITY: f64 = 0.35;

/// The rows' non-zero values (compressed sparse rows), with what the kernel needs of each row
/// beside them: row i's (column, value) pairs are `entries[meta[i].start..meta[i + 1].start]`,
/// columns ascending and < d, packed so that a row is one contiguous read; `meta[i]` also holds
/// its norm and label, so a row costs two scattered reads (its 16-byte record and its pairs)
/// instead of four.
pub(crate) struct SparseRows {
    /// One record per row, then one whose `start` ends the last row.
    meta: Vec<RowMeta>,
    entries: Vec<(u32, f32)>,
}

/// A sparse row's record: ‖[x̃_i; 1]‖₂ (as in [`CompactRows::aug_norm`]), the index of its first
/// pair, and its label.
#[derive(Clone, Copy)]
#[repr(C)]
struct RowMeta {
    aug_norm: f64,
    start: u32,
    y: u32,
}

/// One sparse row as the kernel reads it.
pub(crate) struct SparseRow<'s> {
    pub aug_norm: f64,
    pub y: u32,
    pub pairs: &'s [(u32, f32)],
}

/// A hint to bring the cache line holding `*p` closer (no effect on results).
#[inline(always)]
fn prefetch_line<T>(p: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint and never faults; SSE is part of x86_64.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            (p as *const T).cast::<i8>(),
        )
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

impl SparseRows {
    /// Row i.
    #[inline]
    pub fn row(&self, i: usize) -> SparseRow<'_> {
        let (m, end) = (self.meta[i], self.meta[i + 1].start);
        SparseRow {
            aug_norm: m.aug_norm,
            y: m.y,
            pairs: &self.entries[m.start as usize..end as usize],
        }
    }

    /// A hint to bring row i's record into the cache (its address needs no other read), so
    /// that a later [`SparseRows::prefetch_pairs`] of the row does not wait for it.
    #[inline]
    pub fn prefetch_record(&self, i: usize) {
        if let Some(m) = self.meta.get(i..i + 2) {
            prefetch_line(&m[0]);
            prefetch_line(&m[1]);
        }
    }

    /// A hint to bring every cache line of row i's pairs into the cache (8-byte pairs; a row
    /// of 14 pairs usually spans three lines). No effect on results.
    #[inline]
    pub fn prefetch_pairs(&self, i: usize) {
        if let Some(m) = self.meta.get(i..i + 2)
            && let Some(pairs) = self.entries.get(m[0].start as usize..m[1].start as usize)
        {
            // One pair per 64 bytes, and the last.
            for pair in pairs.iter().step_by(8).chain(pairs.last()) {
                prefetch_line(pair);
            }
        }
    }
}

/// One cache line of a row.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([f32; LANES]);

/// Consecutive lines as their `f32` values.
fn as_values_mut(lines: &mut [Line]) -> &mut [f32] {
    // SAFETY: `Line` is `repr(C)` around `[f32; LANES]` with no padding (64 bytes, align 64), so
    // the lines are `LANES · len` consecutive `f32`, borrowed mutably for the same lifetime.
    unsafe { std::slice::from_raw_parts_mut(lines.as_mut_ptr().cast::<f32>(), lines.len() * LANES) }
}

/// ‖[x; 1]‖₂ in `f64`: 1 + Σ x_j² in four partial sums (j mod 4, each in column order, added as
/// (s₀ + s₁) + (s₂ + s₃)), then the square root. Any order of the d + 1 additions keeps the
/// relative error bound of `nets::NORM_MARGIN`; four sums take a quarter of the dependent
/// additions of one.
fn augmented_norm(x: &[f32]) -> f64 {
    let mut acc = [1.0f64, 0.0, 0.0, 0.0];
    let mut chunks = x.chunks_exact(4);
    for c in &mut chunks {
        for (a, &v) in acc.iter_mut().zip(c) {
            *a += f64::from(v) * f64::from(v);
        }
    }
    for (a, &v) in acc.iter_mut().zip(chunks.remainder()) {
        *a += f64::from(v) * f64::from(v);
    }
    ((acc[0] + acc[1]) + (acc[2] + acc[3])).sqrt()
}

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
        let mut nonzero = 0usize;
        for (i, (row, out)) in x
            .rows()
            .into_iter()
            .zip(lines.chunks_exact_mut(per_row))
            .enumerate()
        {
            let out = &mut as_values_mut(out)[..d];
            // Without branches, so that the loop is vectorised: every value rounded to f32, its
            // finiteness and whether it is zero noted.
            let (mut finite, mut zeros) = (true, 0usize);
            for (o, &v) in out.iter_mut().zip(row.iter()) {
                let s = v as f32;
                finite &= s.is_finite();
                zeros += usize::from(s == 0.0);
                *o = s;
            }
            if !finite {
                let (j, v) = row
                    .iter()
                    .enumerate()
                    .find(|(_, v)| !(**v as f32).is_finite())
                    .expect("a value beyond the f32 range");
                return Err(invalid(
                    "features",
                    format!(
                        "value {v} at row {i}, column {j} is outside the f32 range DP-SGD \
                         stores features in (|x| ≤ 3.4e38)"
                    ),
                ));
            }
            nonzero += d - zeros;
            aug_norm.push(augmented_norm(out));
        }
        let mut rows = CompactRows {
            lines,
            d,
            stride,
            y,
            aug_norm,
            sparse: None,
        };
        rows.sparse = rows.sparse_copy(n, nonzero);
        Ok(rows)
    }

    /// The stored rows as [`SparseRows`] when few enough of their values (`nonzero` in all) are
    /// non-zero.
    fn sparse_copy(&self, n: usize, nonzero: usize) -> Option<SparseRows> {
        let d = self.d;
        if d == 0
            || nonzero as f64 > SPARSE_DENSITY * (n * d) as f64
            || d > u32::MAX as usize
            || nonzero > u32::MAX as usize
        {
            return None;
        }
        let mut sparse = SparseRows {
            meta: Vec::with_capacity(n + 1),
            entries: Vec::with_capacity(nonzero),
        };
        for i in 0..n {
            sparse.meta.push(RowMeta {
                aug_norm: self.aug_norm[i],
                // At most `nonzero` ≤ u32::MAX (checked above).
                start: sparse.entries.len() as u32,
                y: self.y[i],
            });
            for (j, &v) in self.row(i)[..d].iter().enumerate() {
                if v != 0.0 {
                    sparse.entries.push((j as u32, v));
                }
            }
        }
        sparse.meta.push(RowMeta {
            aug_norm: 0.0,
            start: sparse.entries.len() as u32,
            y: 0,
        });
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
        let per_row = self.stride / LANES;
        if let Some(lines) = self.lines.get(i * per_row..(i + 1) * per_row) {
            lines.iter().for_each(prefetch_line);
        }
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
        // Partial sums j mod 4 (the first holding the 1), added as (s₀ + s₁) + (s₂ + s₃).
        let want = ((1.0 + 9.0) + 16.0 + f64::from(0.1f32).powi(2)).sqrt();
        assert_eq!(r.aug_norm[0], want);
        assert_eq!(
            r.aug_norm[1],
            ((1.0 + f64::from(1e30f32).powi(2)) + 4.0).sqrt()
        );
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
        let y: Vec<u32> = (0..40).map(|i| i % 3).collect();
        let r = CompactRows::new(x.view(), &y).unwrap();
        let sparse = r
            .sparse
            .as_ref()
            .expect("at most 2 of 30 values are non-zero");
        for i in 0..40 {
            let row = sparse.row(i);
            assert_eq!((row.aug_norm, row.y), (r.aug_norm[i], r.y[i]), "row {i}");
            let pairs = row.pairs;
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

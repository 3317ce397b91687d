//! The inner loop of logistic DP-SGD: for each row of a batch, the scores w_k·x̃_i + b_k, the
//! residual p − e_y, the closed-form norm of the per-example gradient (p − e_y) ⊗ [x̃_i; 1],
//! namely ‖p − e_y‖·‖[x̃_i; 1]‖ (no per-example gradient is materialised), the clip factor, and
//! the clipped gradient added to the sum: `f32` rows, `f64` weights and `f64` accumulation.
//!
//! One batch loop, instantiated twice: with AVX2 intrinsics and in plain Rust; [`Isa::detect`]
//! picks one at run time (`is_x86_feature_detected!`). Both do the same multiplications and
//! additions in the same order (no fused multiply-add, the same reduction tree), so they compute
//! bit-identical results (tested). Rows stored sparse ([`super::compact::SparseRows`]) take a
//! third loop that reads only their non-zero values: the same terms, summed in another order.

use super::compact::{CompactRows, LANES};
use super::nets::clip_factor;
use crate::linalg::{sigmoid, softmax_in_place};

/// Rows fetched ahead of use (rows of a batch are scattered over the matrix).
const PREFETCH_AHEAD: usize = 4;

/// The instruction set the kernel runs with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Isa {
    Baseline,
    #[cfg(target_arch = "x86_64")]
    Avx2,
}

impl Isa {
    /// The widest instruction set this CPU has.
    pub fn detect() -> Isa {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                return Isa::Avx2;
            }
        }
        Isa::Baseline
    }
}

/// Logistic regression with `m` score rows over compact rows; weights padded to the row stride.
pub(crate) struct LogisticBatch<'r, 'a> {
    pub rows: &'r CompactRows<'a>,
    /// m × stride weights (zero past d).
    pub w: &'r [f64],
    /// m biases.
    pub b: &'r [f64],
    pub clip: f64,
}

/// Adds Σ_{i ∈ batch} clip(∇ℓ_i) to `sum_w` (m × stride) and `sum_b` (m); `r` is m scratch values.
pub(crate) fn logistic_clipped_sum(
    isa: Isa,
    lb: &LogisticBatch<'_, '_>,
    batch: &[usize],
    sum_w: &mut [f64],
    sum_b: &mut [f64],
    r: &mut [f64],
) {
    let m = lb.b.len();
    assert!(
        lb.w.len() == m * lb.rows.stride && sum_w.len() == lb.w.len() && sum_b.len() == m,
        "kernel buffers match the layout"
    );
    assert_eq!(r.len(), m, "one scratch value per score row");
    if let Some(sparse) = &lb.rows.sparse {
        return logistic_sparse(lb, sparse, batch, sum_w, sum_b);
    }
    // SAFETY: the lane functions read and write whole chunks of `stride` values, which the
    // assertions above and `CompactRows::row` guarantee; `Isa::detect` returned the vector
    // variants only when the CPU has their features.
    unsafe {
        match isa {
            Isa::Baseline => logistic_baseline(lb, batch, sum_w, sum_b, r),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => logistic_avx2(lb, batch, sum_w, sum_b, r),
        }
    }
}

/// The residual p − e_y of a row whose scores are in `r` (in place), and its clip factor for
/// a row of augmented norm `aug_norm`; `None` when the residual is not finite (only possible from
/// non-finite weights: the row then contributes nothing).
#[inline(always)]
fn residual_clip(r: &mut [f64], y: u32, clip: f64, aug_norm: f64) -> Option<f64> {
    let residual_norm = if r.len() == 1 {
        r[0] = sigmoid(r[0]) - f64::from(y);
        r[0].abs()
    } else {
        softmax_in_place(r);
        r[y as usize] -= 1.0;
        r.iter().map(|v| v * v).sum::<f64>().sqrt()
    };
    residual_norm
        .is_finite()
        .then(|| clip_factor(clip, residual_norm * aug_norm))
}

/// Score values (rows × score rows) per chunk of the sparse loop: few enough that a chunk's rows
/// (≈ 130 bytes each on Adult) are still in the L1 cache when they are added.
const CHUNK_VALUES: usize = 64;

/// Rows whose records are fetched ahead of use, before their pairs are ([`PREFETCH_AHEAD`]).
const RECORDS_AHEAD: usize = 2 * PREFETCH_AHEAD;

/// The batch loop over sparse rows, in chunks of rows and three passes per chunk: the scores of
/// every row from its non-zero values, then every row's residual and clip factor, then the
/// clipped gradients added at the rows' non-zero columns (and the bias). Each row's terms and the
/// order in which rows are added are those of a row-at-a-time loop, so the passes change no bit
/// of the result; they only let the processor overlap rows (the scores of one row do not wait
/// for the previous row's exponential and division).
fn logistic_sparse(
    lb: &LogisticBatch<'_, '_>,
    sparse: &super::compact::SparseRows,
    batch: &[usize],
    sum_w: &mut [f64],
    sum_b: &mut [f64],
) {
    let (stride, m) = (lb.rows.stride, lb.b.len());
    let per_chunk = (CHUNK_VALUES / m).max(1);
    // Row t of a chunk: its m scores, then residuals, then the clipped coefficients c·r_k.
    let mut coef = vec![0.0; per_chunk * m];
    let mut finite = vec![false; per_chunk];
    for (c, chunk) in batch.chunks(per_chunk).enumerate() {
        for (t, &i) in chunk.iter().enumerate() {
            let at = c * per_chunk + t;
            if let Some(&ahead) = batch.get(at + RECORDS_AHEAD) {
                sparse.prefetch_record(ahead);
            }
            if let Some(&ahead) = batch.get(at + PREFETCH_AHEAD) {
                sparse.prefetch_pairs(ahead);
            }
            let pairs = sparse.row(i).pairs;
            for (k, rk) in coef[t * m..(t + 1) * m].iter_mut().enumerate() {
                *rk = sparse_dot(&lb.w[k * stride..(k + 1) * stride], pairs) + lb.b[k];
            }
        }
        for (t, &i) in chunk.iter().enumerate() {
            let row = sparse.row(i);
            let r = &mut coef[t * m..(t + 1) * m];
            finite[t] = match residual_clip(r, row.y, lb.clip, row.aug_norm) {
                Some(c) => {
                    r.iter_mut().for_each(|rk| *rk *= c);
                    true
                }
                // The row contributes nothing.
                None => false,
            };
        }
        for (t, &i) in chunk.iter().enumerate() {
            if !finite[t] {
                continue;
            }
            let pairs = sparse.row(i).pairs;
            for (k, &a) in coef[t * m..(t + 1) * m].iter().enumerate() {
                let sum = &mut sum_w[k * stride..(k + 1) * stride];
                for &(j, v) in pairs {
                    // SAFETY: every column is < d ≤ stride = sum.len() (`SparseRows`' invariant).
                    unsafe { *sum.get_unchecked_mut(j as usize) += a * f64::from(v) };
                }
                sum_b[k] += a;
            }
        }
    }
}

/// Σ w_j·x_j over a sparse row's (column, value) pairs, in two partial sums (even and odd pairs)
/// to halve the chain of dependent additions.
#[inline(always)]
fn sparse_dot(w: &[f64], pairs: &[(u32, f32)]) -> f64 {
    let (mut even, mut odd) = (0.0, 0.0);
    let mut chunks = pairs.chunks_exact(2);
    for c in &mut chunks {
        // SAFETY: every column is < d ≤ stride = w.len() (`SparseRows`' invariant).
        unsafe {
            even += w.get_unchecked(c[0].0 as usize) * f64::from(c[0].1);
            odd += w.get_unchecked(c[1].0 as usize) * f64::from(c[1].1);
        }
    }
    for &(j, v) in chunks.remainder() {
        even += w[j as usize] * f64::from(v);
    }
    even + odd
}

/// The batch loop, instantiated once per instruction set with that set's lane functions.
macro_rules! logistic_kernel {
    ($(#[$attr:meta])* $name:ident, $dot:path, $axpy:path) => {
        $(#[$attr])*
        unsafe fn $name(
            lb: &LogisticBatch<'_, '_>,
            batch: &[usize],
            sum_w: &mut [f64],
            sum_b: &mut [f64],
            r: &mut [f64],
        ) {
            let rows = lb.rows;
            let stride = rows.stride;
            for (t, &i) in batch.iter().enumerate() {
                if let Some(&ahead) = batch.get(t + PREFETCH_AHEAD) {
                    rows.prefetch(ahead);
                }
                let x = rows.row(i);
                for (k, rk) in r.iter_mut().enumerate() {
                    // SAFETY: the caller's layout (see `logistic_clipped_sum`).
                    *rk = unsafe { $dot(&lb.w[k * stride..(k + 1) * stride], x) } + lb.b[k];
                }
                let Some(c) = residual_clip(r, rows.y[i], lb.clip, rows.aug_norm[i]) else {
                    continue;
                };
                for (k, &rk) in r.iter().enumerate() {
                    let a = c * rk;
                    // SAFETY: as above.
                    unsafe { $axpy(a, x, &mut sum_w[k * stride..(k + 1) * stride]) };
                    sum_b[k] += a;
                }
            }
        }
    };
}

logistic_kernel!(logistic_baseline, dot_baseline, axpy_baseline);
#[cfg(target_arch = "x86_64")]
logistic_kernel!(
    #[target_feature(enable = "avx2")]
    logistic_avx2,
    x86::dot_avx2,
    x86::axpy_avx2
);

/// The fixed pairwise reduction of the [`LANES`] per-lane sums (the same on every instruction set).
#[inline(always)]
fn reduce(mut acc: [f64; LANES]) -> f64 {
    let mut width = LANES;
    while width > 1 {
        width /= 2;
        for j in 0..width {
            acc[j] += acc[j + width];
        }
    }
    acc[0]
}

/// Σ_j w_j·x_j over whole chunks of [`LANES`] values, in `f64`, one accumulator per lane, then
/// [`reduce`]. (`unsafe` only to share the signature of the vector versions.)
#[inline(always)]
unsafe fn dot_baseline(w: &[f64], x: &[f32]) -> f64 {
    let mut acc = [0.0f64; LANES];
    for (wc, xc) in w.chunks_exact(LANES).zip(x.chunks_exact(LANES)) {
        for j in 0..LANES {
            acc[j] += wc[j] * f64::from(xc[j]);
        }
    }
    reduce(acc)
}

/// y ← y + a·x over whole chunks of [`LANES`] values, in `f64`.
#[inline(always)]
unsafe fn axpy_baseline(a: f64, x: &[f32], y: &mut [f64]) {
    for (yc, xc) in y.chunks_exact_mut(LANES).zip(x.chunks_exact(LANES)) {
        for j in 0..LANES {
            yc[j] += a * f64::from(xc[j]);
        }
    }
}

/// The lane functions with AVX2 (4 `f64` lanes): per lane the same multiply, then add, in the same
/// order as the baseline, so the results are bit-identical. (AVX-512 intrinsics need Rust 1.89;
/// the workspace supports 1.88.)
#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{LANES, reduce};
    use std::arch::x86_64::*;

    /// Requires `w.len() == x.len()`, a multiple of [`LANES`].
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) unsafe fn dot_avx2(w: &[f64], x: &[f32]) -> f64 {
        debug_assert!(w.len() == x.len() && x.len().is_multiple_of(LANES));
        let mut acc = [_mm256_setzero_pd(); 4];
        for c in (0..x.len()).step_by(LANES) {
            for (q, a) in acc.iter_mut().enumerate() {
                // SAFETY: c + 4q + 4 ≤ x.len() = w.len().
                unsafe {
                    let xv = _mm256_cvtps_pd(_mm_loadu_ps(x.as_ptr().add(c + 4 * q)));
                    let wv = _mm256_loadu_pd(w.as_ptr().add(c + 4 * q));
                    *a = _mm256_add_pd(*a, _mm256_mul_pd(wv, xv));
                }
            }
        }
        let mut lanes = [0.0f64; LANES];
        for (q, a) in acc.iter().enumerate() {
            // SAFETY: 4q + 4 ≤ LANES.
            unsafe { _mm256_storeu_pd(lanes.as_mut_ptr().add(4 * q), *a) };
        }
        reduce(lanes)
    }

    /// Requires `y.len() == x.len()`, a multiple of [`LANES`].
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) unsafe fn axpy_avx2(a: f64, x: &[f32], y: &mut [f64]) {
        debug_assert!(y.len() == x.len() && x.len().is_multiple_of(LANES));
        let av = _mm256_set1_pd(a);
        for c in (0..x.len()).step_by(4) {
            // SAFETY: c + 4 ≤ x.len() = y.len().
            unsafe {
                let xv = _mm256_cvtps_pd(_mm_loadu_ps(x.as_ptr().add(c)));
                let p = y.as_mut_ptr().add(c);
                _mm256_storeu_pd(p, _mm256_add_pd(_mm256_loadu_pd(p), _mm256_mul_pd(av, xv)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::blobs;

    #[test]
    fn every_instruction_set_gives_the_baseline_bits() {
        let mut isas = vec![Isa::Baseline];
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                isas.push(Isa::Avx2);
            }
        }
        for k in [2usize, 4] {
            let (x, y) = blobs(300, 37, k, 1.0, 5);
            let rows = CompactRows::new(x.view(), &y).unwrap();
            let m = if k == 2 { 1 } else { k };
            let w: Vec<f64> = (0..m * rows.stride)
                .map(|j| {
                    if j % rows.stride < 37 {
                        (j as f64 * 0.7).sin()
                    } else {
                        0.0
                    }
                })
                .collect();
            let b: Vec<f64> = (0..m).map(|j| 0.1 * j as f64).collect();
            let lb = LogisticBatch {
                rows: &rows,
                w: &w,
                b: &b,
                clip: 0.8,
            };
            let batch: Vec<usize> = (0..300).filter(|i| i % 3 != 1).collect();
            let run = |isa| {
                let mut sw = vec![0.0; m * rows.stride];
                let mut sb = vec![0.0; m];
                logistic_clipped_sum(isa, &lb, &batch, &mut sw, &mut sb, &mut vec![0.0; m]);
                (sw, sb)
            };
            let want = run(Isa::Baseline);
            for &isa in &isas {
                assert_eq!(run(isa), want, "{isa:?}, {k} classes");
            }
            assert!(want.0.iter().any(|&v| v != 0.0));
        }
    }

    /// The clipped sum of `batch` from zero: (weights' sums, biases' sums).
    fn batch_sum(lb: &LogisticBatch<'_, '_>, batch: &[usize]) -> (Vec<f64>, Vec<f64>) {
        let m = lb.b.len();
        let (mut sw, mut sb) = (vec![0.0; m * lb.rows.stride], vec![0.0; m]);
        let r = &mut vec![0.0; m];
        logistic_clipped_sum(Isa::detect(), lb, batch, &mut sw, &mut sb, r);
        (sw, sb)
    }

    /// Weights (m × stride, zero past column d) and m biases for the sparse-loop tests.
    fn test_weights(m: usize, stride: usize, d: usize) -> (Vec<f64>, Vec<f64>) {
        let w = (0..m * stride)
            .map(|j| {
                if j % stride < d {
                    (j as f64 * 0.3).cos()
                } else {
                    0.0
                }
            })
            .collect();
        (w, (0..m).map(|j| 0.2 - 0.1 * j as f64).collect())
    }

    #[test]
    fn the_chunked_sparse_loop_adds_rows_as_one_at_a_time_calls_do() {
        // The three passes per chunk must not change the order of any addition: one call over a
        // batch of several chunks (64 rows for m = 1, 21 for m = 3) equals the same rows added
        // by one call each, bit for bit, including a row whose weights make it non-finite.
        let n = 700;
        let mut x = ndarray::Array2::<f64>::zeros((n, 60));
        let y: Vec<u32> = (0..n).map(|i| (i % 3) as u32).collect();
        for i in 0..n {
            x[[i, i % 50]] = 1.0;
            x[[i, 50 + (i * 7) % 9]] = (i as f64 * 0.37).sin() * 3.0;
            x[[i, 59]] = 0.5;
        }
        let rows = CompactRows::new(x.view(), &y).unwrap();
        assert!(rows.sparse.is_some());
        let stride = rows.stride;
        for m in [1usize, 3] {
            let (mut w, b) = test_weights(m, stride, 60);
            // Column 7 only occurs in rows 7, 57, …: a NaN weight makes their residuals NaN.
            w[7] = f64::NAN;
            let lb = LogisticBatch {
                rows: &rows,
                w: &w,
                b: &b,
                clip: 0.9,
            };
            let batch: Vec<usize> = (0..n).filter(|i| i % 5 != 2).collect();
            let (sw, sb) = batch_sum(&lb, &batch);
            let (mut one_w, mut one_b) = (vec![0.0; m * stride], vec![0.0; m]);
            for &i in &batch {
                let r = &mut vec![0.0; m];
                logistic_clipped_sum(Isa::detect(), &lb, &[i], &mut one_w, &mut one_b, r);
            }
            assert_eq!((&sw, &sb), (&one_w, &one_b), "{m} score rows");
            assert!(sw.iter().all(|v| v.is_finite()) && sw.iter().any(|&v| v != 0.0));
        }
    }

    #[test]
    fn the_sparse_loop_sums_the_dense_loops_terms() {
        // One-hot blocks plus one numeric column: 3 of 41 values non-zero per row.
        let n = 500;
        let mut x = ndarray::Array2::<f64>::zeros((n, 41));
        let y: Vec<u32> = (0..n).map(|i| (i % 3 == 0) as u32).collect();
        for i in 0..n {
            x[[i, i % 20]] = 1.0;
            x[[i, 20 + (i * 7) % 20]] = 1.0;
            x[[i, 40]] = (i as f64 * 0.37).sin() * 3.0;
        }
        for m in [1usize, 3] {
            let sparse_rows = CompactRows::new(x.view(), &y).unwrap();
            assert!(sparse_rows.sparse.is_some());
            let mut dense_rows = CompactRows::new(x.view(), &y).unwrap();
            dense_rows.sparse = None;
            let stride = dense_rows.stride;
            let (w, b) = test_weights(m, stride, 41);
            let batch: Vec<usize> = (0..n).filter(|i| i % 4 != 2).collect();
            let run = |rows: &CompactRows<'_>| {
                let lb = LogisticBatch {
                    rows,
                    w: &w,
                    b: &b,
                    clip: 0.9,
                };
                batch_sum(&lb, &batch)
            };
            let (dense, sparse) = (run(&dense_rows), run(&sparse_rows));
            // The same terms in another order: each sum of ≤ 375 terms of size ≤ 0.9·3 agrees
            // to within a few hundred ulps of its magnitude (here 1e-9 absolute is ample).
            for (a, b) in dense
                .0
                .iter()
                .chain(&dense.1)
                .zip(sparse.0.iter().chain(&sparse.1))
            {
                assert!((a - b).abs() <= 1e-9, "{a} against {b} ({m} score rows)");
            }
            assert!(dense.0.iter().any(|&v| v != 0.0));
        }
    }
}

//! The inner loop of logistic DP-SGD: for each row of a batch, the scores w_k·x̃_i + b_k, the
//! residual p − e_y, the closed-form norm of the per-example gradient (p − e_y) ⊗ [x̃_i; 1],
//! namely ‖p − e_y‖·‖[x̃_i; 1]‖ (no per-example gradient is materialised), the clip factor, and
//! the clipped gradient added to the sum: `f32` rows, `f64` weights and `f64` accumulation.
//!
//! One body, compiled three times: for AVX-512, for AVX2 and for the baseline instruction set;
//! [`Isa::detect`] picks one at run time (`is_x86_feature_detected!`). The body never reassociates
//! a floating-point operation and Rust does not fuse multiply-adds on its own, so the three
//! versions compute bit-identical results (tested).

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
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

impl Isa {
    /// The widest instruction set this CPU has.
    pub fn detect() -> Isa {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                return Isa::Avx512;
            }
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
    match isa {
        Isa::Baseline => logistic_body(lb, batch, sum_w, sum_b, r),
        // SAFETY: `Isa::detect` returned these only when the CPU has the features.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => unsafe { logistic_avx2(lb, batch, sum_w, sum_b, r) },
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => unsafe { logistic_avx512(lb, batch, sum_w, sum_b, r) },
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn logistic_avx2(
    lb: &LogisticBatch<'_, '_>,
    batch: &[usize],
    sum_w: &mut [f64],
    sum_b: &mut [f64],
    r: &mut [f64],
) {
    logistic_body(lb, batch, sum_w, sum_b, r)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn logistic_avx512(
    lb: &LogisticBatch<'_, '_>,
    batch: &[usize],
    sum_w: &mut [f64],
    sum_b: &mut [f64],
    r: &mut [f64],
) {
    logistic_body(lb, batch, sum_w, sum_b, r)
}

#[inline(always)]
fn logistic_body(
    lb: &LogisticBatch<'_, '_>,
    batch: &[usize],
    sum_w: &mut [f64],
    sum_b: &mut [f64],
    r: &mut [f64],
) {
    let rows = lb.rows;
    let stride = rows.stride;
    let m = lb.b.len();
    for (t, &i) in batch.iter().enumerate() {
        if let Some(&ahead) = batch.get(t + PREFETCH_AHEAD) {
            rows.prefetch(ahead);
        }
        let x = rows.row(i);
        for (k, rk) in r.iter_mut().enumerate() {
            *rk = dot_lanes(&lb.w[k * stride..(k + 1) * stride], x) + lb.b[k];
        }
        let y = rows.y[i];
        let residual_norm = if m == 1 {
            r[0] = sigmoid(r[0]) - f64::from(y);
            r[0].abs()
        } else {
            softmax_in_place(r);
            r[y as usize] -= 1.0;
            r.iter().map(|v| v * v).sum::<f64>().sqrt()
        };
        // A non-finite residual (only possible from non-finite weights) contributes nothing.
        if !residual_norm.is_finite() {
            continue;
        }
        let c = clip_factor(lb.clip, residual_norm * rows.aug_norm[i]);
        for (k, &rk) in r.iter().enumerate() {
            let a = c * rk;
            axpy_lanes(a, x, &mut sum_w[k * stride..(k + 1) * stride]);
            sum_b[k] += a;
        }
    }
}

/// Σ_j w_j·x_j over whole chunks of [`LANES`] values, in `f64`, with one accumulator per lane and
/// a fixed pairwise reduction (the same order on every instruction set).
#[inline(always)]
fn dot_lanes(w: &[f64], x: &[f32]) -> f64 {
    let mut acc = [0.0f64; LANES];
    for (wc, xc) in w.chunks_exact(LANES).zip(x.chunks_exact(LANES)) {
        for j in 0..LANES {
            acc[j] += wc[j] * f64::from(xc[j]);
        }
    }
    let mut width = LANES;
    while width > 1 {
        width /= 2;
        for j in 0..width {
            acc[j] += acc[j + width];
        }
    }
    acc[0]
}

/// y ← y + a·x over whole chunks of [`LANES`] values, in `f64`.
#[inline(always)]
fn axpy_lanes(a: f64, x: &[f32], y: &mut [f64]) {
    for (yc, xc) in y.chunks_exact_mut(LANES).zip(x.chunks_exact(LANES)) {
        for j in 0..LANES {
            yc[j] += a * f64::from(xc[j]);
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
            if std::arch::is_x86_feature_detected!("avx512f") {
                isas.push(Isa::Avx512);
            }
        }
        for k in [2usize, 4] {
            let (x, y) = blobs(300, 37, k, 1.0, 5);
            let rows = CompactRows::new(x.view(), &y).unwrap();
            let m = if k == 2 { 1 } else { k };
            let w: Vec<f64> = (0..m * rows.stride)
                .map(|j| if j % rows.stride < 37 { (j as f64 * 0.7).sin() } else { 0.0 })
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
}

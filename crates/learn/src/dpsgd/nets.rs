//! The models DP-SGD trains, each with a vectorised "sum of clipped per-example gradients" over a
//! batch (no per-example model copies) and a per-example reference used by the tests.
//!
//! Clipping is Opacus's flat clipping: g_i ← g_i · min(1, C / (‖g_i‖₂ + 10⁻⁶)) (Ghoukasian & Asoodeh's DP-SGD base classifier),
//! with a relative margin of 2^−30 on the computed norm so that the bound holds in floating point
//! ([`clip_factor`]). Features are the `f32` rows of [`CompactRows`]; all arithmetic is `f64`.
//! Both models are built from linear layers, whose per-example gradient is an outer product
//! δ_i ⊗ [a_i; 1]; its norm is ‖δ_i‖·‖[a_i; 1]‖, so the norms need no materialised gradients and
//! the clipped sum is Σ_i c_i δ_i ⊗ [a_i; 1], a matrix product for the MLP and a fused
//! dot-and-axpy pass over the rows for logistic regression.

use super::compact::CompactRows;
use super::kernels::{Isa, LogisticBatch, logistic_clipped_sum};
#[cfg(test)]
use crate::linalg::{dot, softplus};
use crate::linalg::{sigmoid, softmax_in_place};
use ndarray::{Array2, ArrayView2, Axis, s};

/// Opacus's guard in the clipping factor.
pub(crate) const CLIP_EPS: f64 = 1e-6;

/// Relative safety margin on a computed norm: the clip factor divides by N·(1 + 2^−30) rather
/// than N, so that the clipped vector actually added to the sum has ℓ2 norm ≤ C in floating
/// point. The computed N is ‖g‖ up to a relative error ≤ (d + 4)·2^−53 (a sum of d + 1 squares in
/// `f64`, a square root and a product), the factor and the products c·r·x̃_j add three more
/// roundings; 2^−30 covers all of them for every d < 2^20.
const NORM_MARGIN: f64 = 1.0 + 1.0 / (1u64 << 30) as f64;

/// The clip factor min(1, C/(N·(1 + 2^−30) + 10⁻⁶)) for a per-example gradient of computed
/// norm N (Opacus's factor, with the margin of [`NORM_MARGIN`]).
#[inline]
pub(crate) fn clip_factor(clip: f64, norm: f64) -> f64 {
    (clip / (norm * NORM_MARGIN + CLIP_EPS)).min(1.0)
}

/// A differentiable classifier on a fixed training set, shared by the threads of a run: each
/// thread passes its own scratch space.
pub(crate) trait Net: Sync {
    fn n_params(&self) -> usize;
    /// `sum += Σ_{i ∈ batch} clip(∇ℓ_i(params))`; `work` is the calling thread's scratch space
    /// (any length and contents on entry).
    fn clipped_grad_sum(
        &self,
        params: &[f64],
        batch: &[usize],
        clip: f64,
        sum: &mut [f64],
        work: &mut Vec<f64>,
    );
    /// ∇ℓ_i(params), one example (reference implementation for tests).
    #[cfg(test)]
    fn example_grad(&self, params: &[f64], i: usize) -> Vec<f64>;
    /// ℓ_i(params) (finite differences in tests).
    #[cfg(test)]
    fn example_loss(&self, params: &[f64], i: usize) -> f64;
}

/// Row i's first d stored values, in `f64`.
fn row_f64<'r>(rows: &'r CompactRows<'_>, i: usize) -> impl Iterator<Item = f64> + 'r {
    rows.row(i)[..rows.d].iter().map(|&v| f64::from(v))
}

/// Logistic regression on the flat layout of [`crate::LogisticModel`]: `m` blocks `[w (d), b]`,
/// m = 1 (binary, sigmoid) or K (softmax). Per-example gradient (p_i − e_{y_i}) ⊗ [x̃_i; 1],
/// summed by [`logistic_clipped_sum`].
pub(crate) struct LogisticNet<'a> {
    pub rows: CompactRows<'a>,
    pub m: usize,
    isa: Isa,
}

impl<'a> LogisticNet<'a> {
    pub fn new(rows: CompactRows<'a>, m: usize) -> Self {
        LogisticNet {
            rows,
            m,
            isa: Isa::detect(),
        }
    }

    /// Scores w_k·x̃_i + b_k for row i (reference for tests).
    #[cfg(test)]
    fn scores(&self, params: &[f64], i: usize) -> Vec<f64> {
        let d = self.rows.d;
        let x: Vec<f64> = row_f64(&self.rows, i).collect();
        params
            .chunks_exact(d + 1)
            .map(|blk| dot(&blk[..d], &x) + blk[d])
            .collect()
    }
}

impl Net for LogisticNet<'_> {
    fn n_params(&self) -> usize {
        self.m * (self.rows.d + 1)
    }

    fn clipped_grad_sum(
        &self,
        params: &[f64],
        batch: &[usize],
        clip: f64,
        sum: &mut [f64],
        work: &mut Vec<f64>,
    ) {
        let (d, stride, m) = (self.rows.d, self.rows.stride, self.m);
        // The work space: weights padded to the row stride (zero past d), biases, their sums,
        // and m scratch values.
        let len = m * stride;
        work.clear();
        work.resize(2 * len + 3 * m, 0.0);
        let (w, rest) = work.split_at_mut(len);
        let (sum_w, rest) = rest.split_at_mut(len);
        let (b, rest) = rest.split_at_mut(m);
        let (sum_b, scratch) = rest.split_at_mut(m);
        for (k, blk) in params.chunks_exact(d + 1).enumerate() {
            w[k * stride..k * stride + d].copy_from_slice(&blk[..d]);
            b[k] = blk[d];
        }
        let lb = LogisticBatch {
            rows: &self.rows,
            w,
            b,
            clip,
        };
        logistic_clipped_sum(self.isa, &lb, batch, sum_w, sum_b, scratch);
        for (k, blk) in sum.chunks_exact_mut(d + 1).enumerate() {
            for (s, g) in blk[..d].iter_mut().zip(&sum_w[k * stride..]) {
                *s += g;
            }
            blk[d] += sum_b[k];
        }
    }

    #[cfg(test)]
    fn example_grad(&self, params: &[f64], i: usize) -> Vec<f64> {
        let mut r = self.scores(params, i);
        let y = self.rows.y[i] as usize;
        if self.m == 1 {
            r[0] = sigmoid(r[0]) - y as f64;
        } else {
            softmax_in_place(&mut r);
            r[y] -= 1.0;
        }
        let x: Vec<f64> = row_f64(&self.rows, i).collect();
        r.iter()
            .flat_map(|rk| x.iter().map(move |xj| rk * xj).chain(std::iter::once(*rk)))
            .collect()
    }

    #[cfg(test)]
    fn example_loss(&self, params: &[f64], i: usize) -> f64 {
        let mut z = self.scores(params, i);
        let y = self.rows.y[i] as usize;
        if self.m == 1 {
            softplus(z[0]) - y as f64 * z[0]
        } else {
            let zy = z[y];
            softmax_in_place(&mut z) - zy
        }
    }
}

/// One hidden layer of `h` ReLU units, then a sigmoid (binary) or softmax output:
/// params = W₁ (h blocks `[w (d), b]`) then W₂ (m blocks `[w (h), b]`).
pub(crate) struct MlpNet<'a> {
    pub rows: CompactRows<'a>,
    pub h: usize,
    pub m: usize,
}

/// The two layers of an MLP parameter vector as views.
pub(crate) fn mlp_layers(
    params: &[f64],
    d: usize,
    h: usize,
    m: usize,
) -> (ArrayView2<'_, f64>, ArrayView2<'_, f64>) {
    let (p1, p2) = params.split_at(h * (d + 1));
    (
        ArrayView2::from_shape((h, d + 1), p1).expect("layer 1 layout"),
        ArrayView2::from_shape((m, h + 1), p2).expect("layer 2 layout"),
    )
}

/// a·Wᵀ + b for a layer stored as rows `[w, b]`.
pub(crate) fn affine(a: ArrayView2<'_, f64>, layer: ArrayView2<'_, f64>) -> Array2<f64> {
    let k = layer.ncols() - 1;
    let mut z = a.dot(&layer.slice(s![.., ..k]).t());
    z += &layer.column(k);
    crate::logistic::standard(z)
}

/// Output scores → residuals p − e_y in place (m = 1: sigmoid; else softmax).
fn residuals_in_place(z: &mut Array2<f64>, y: impl Iterator<Item = u32>) {
    for (mut zi, yi) in z.rows_mut().into_iter().zip(y) {
        if zi.len() == 1 {
            zi[0] = sigmoid(zi[0]) - f64::from(yi);
        } else {
            softmax_in_place(zi.as_slice_mut().expect("standard layout"));
            zi[yi as usize] -= 1.0;
        }
    }
}

impl MlpNet<'_> {
    /// Forward and backward pass on the rows `batch`: (inputs, hidden activations, output
    /// residuals R, hidden deltas Δ).
    fn backprop(
        &self,
        params: &[f64],
        batch: &[usize],
    ) -> (Array2<f64>, Array2<f64>, Array2<f64>, Array2<f64>) {
        let d = self.rows.d;
        let (l1, l2) = mlp_layers(params, d, self.h, self.m);
        let mut xb = Array2::zeros((batch.len(), d));
        for (mut row, &i) in xb.rows_mut().into_iter().zip(batch) {
            for (o, v) in row.iter_mut().zip(row_f64(&self.rows, i)) {
                *o = v;
            }
        }
        let pre = affine(xb.view(), l1);
        let hid = pre.mapv(|v| v.max(0.0));
        let mut r = affine(hid.view(), l2);
        residuals_in_place(&mut r, batch.iter().map(|&i| self.rows.y[i]));
        let mut delta = r.dot(&l2.slice(s![.., ..self.h]));
        delta.zip_mut_with(&pre, |g, &p| {
            if p <= 0.0 {
                *g = 0.0
            }
        });
        (xb, hid, r, delta)
    }
}

/// `sum_block += Aᵀ·[B 1]` for a layer block stored as rows `[w, b]`.
fn add_outer(sum_block: &mut [f64], a: &Array2<f64>, b: &Array2<f64>) {
    let k = b.ncols();
    let mut view =
        ndarray::ArrayViewMut2::from_shape((a.ncols(), k + 1), sum_block).expect("block layout");
    let prod = a.t().dot(b);
    view.slice_mut(s![.., ..k]).scaled_add(1.0, &prod);
    let col = a.sum_axis(Axis(0));
    view.column_mut(k).scaled_add(1.0, &col);
}

impl Net for MlpNet<'_> {
    fn n_params(&self) -> usize {
        self.h * (self.rows.d + 1) + self.m * (self.h + 1)
    }

    fn clipped_grad_sum(
        &self,
        params: &[f64],
        batch: &[usize],
        clip: f64,
        sum: &mut [f64],
        _work: &mut Vec<f64>,
    ) {
        if batch.is_empty() {
            return;
        }
        let (xb, hid, mut r, mut delta) = self.backprop(params, batch);
        // ‖g_i‖² = ‖R_i‖² (‖h_i‖² + 1) + ‖Δ_i‖² (‖x_i‖² + 1).
        for (k, &i) in batch.iter().enumerate() {
            let (ri, hi, di) = (r.row(k), hid.row(k), delta.row(k));
            let norm2 =
                ri.dot(&ri) * (hi.dot(&hi) + 1.0) + di.dot(&di) * self.rows.aug_norm[i].powi(2);
            let c = clip_factor(clip, norm2.sqrt());
            r.row_mut(k).mapv_inplace(|v| v * c);
            delta.row_mut(k).mapv_inplace(|v| v * c);
        }
        let (s1, s2) = sum.split_at_mut(self.h * (self.rows.d + 1));
        add_outer(s1, &delta, &xb);
        add_outer(s2, &r, &hid);
    }

    #[cfg(test)]
    fn example_grad(&self, params: &[f64], i: usize) -> Vec<f64> {
        let mut g = vec![0.0; self.n_params()];
        let (xb, hid, r, delta) = self.backprop(params, &[i]);
        let (s1, s2) = g.split_at_mut(self.h * (self.rows.d + 1));
        add_outer(s1, &delta, &xb);
        add_outer(s2, &r, &hid);
        g
    }

    #[cfg(test)]
    fn example_loss(&self, params: &[f64], i: usize) -> f64 {
        let d = self.rows.d;
        let (l1, l2) = mlp_layers(params, d, self.h, self.m);
        let xi: Vec<f64> = row_f64(&self.rows, i).collect();
        let x = ArrayView2::from_shape((1, d), &xi[..]).expect("row");
        let hid = affine(x, l1).mapv(|v| v.max(0.0));
        let z: ndarray::Array1<f64> = affine(hid.view(), l2).row(0).to_owned();
        let y = self.rows.y[i] as usize;
        if self.m == 1 {
            softplus(z[0]) - y as f64 * z[0]
        } else {
            let mut v = z.to_vec();
            softmax_in_place(&mut v) - z[y]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{blobs, fd_grad};

    fn params(n: usize, seed: f64) -> Vec<f64> {
        (0..n)
            .map(|j| 0.4 * ((j as f64 + seed) * 1.3).sin())
            .collect()
    }

    fn check_net(net: &dyn Net, label: &str) {
        let p = params(net.n_params(), 0.5);
        for i in 0..5 {
            let g = net.example_grad(&p, i);
            let fd = fd_grad(|t| net.example_loss(t, i), &p, 1e-6);
            // Central differences, h = 1e-6: truncation O(h²) and rounding O(ε/h) ≈ 1e-10.
            // (ReLU kinks: the fixed parameters keep pre-activations away from 0 by far more
            // than h·‖x‖ on these rows.)
            for (j, (a, b)) in g.iter().zip(&fd).enumerate() {
                assert!(
                    (a - b).abs() < 1e-7,
                    "{label} row {i} param {j}: {a} vs {b}"
                );
            }
        }
        // The vectorised clipped sum equals the naive per-example loop, for a clip that binds
        // on some rows and not on others.
        let batch = [0usize, 2, 3, 7, 9, 11];
        let norms: Vec<f64> = batch
            .iter()
            .map(|&i| {
                net.example_grad(&p, i)
                    .iter()
                    .map(|v| v * v)
                    .sum::<f64>()
                    .sqrt()
            })
            .collect();
        let mut sorted = norms.clone();
        sorted.sort_by(f64::total_cmp);
        let clip = sorted[sorted.len() / 2];
        let mut want = vec![0.0; net.n_params()];
        for (&i, n) in batch.iter().zip(&norms) {
            let c = clip_factor(clip, *n);
            for (w, g) in want.iter_mut().zip(net.example_grad(&p, i)) {
                *w += c * g;
            }
        }
        let mut got = vec![0.0; net.n_params()];
        net.clipped_grad_sum(&p, &batch, clip, &mut got, &mut Vec::new());
        for (a, b) in got.iter().zip(&want) {
            assert!((a - b).abs() < 1e-12, "{label}: {a} vs {b}");
        }
    }

    #[test]
    fn per_example_gradients_match_finite_differences_and_clip_correctly() {
        for k in [2usize, 3] {
            let (x, y) = blobs(12, 4, k, 1.0, 3);
            let m = if k == 2 { 1 } else { k };
            let rows = || CompactRows::new(x.view(), &y).unwrap();
            check_net(&LogisticNet::new(rows(), m), "logistic");
            check_net(
                &MlpNet {
                    rows: rows(),
                    h: 5,
                    m,
                },
                "mlp",
            );
        }
    }

    /// Adversarial rows: per-coordinate magnitudes from 10⁻³⁰ to the largest `f32`, random signs,
    /// rows of nothing but `f32::MAX`, and tiny rows. Every clipped per-example gradient, summed
    /// alone, must have ℓ2 norm ≤ C as computed in `f64` (the computed norm is within
    /// (d + 2)·2^−53 of the true one, far inside the 2^−30 margin, so a true norm ≤ C(1 − 2^−31)
    /// passes and a clip that overshoots by more than that fails).
    #[test]
    fn clipped_gradients_stay_within_the_clip_for_huge_rows() {
        use dpfair_privacy::Noise;
        use rand::Rng;
        let mut rng = Noise::seeded(12);
        let (n, d) = (600usize, 37usize);
        let mut x = ndarray::Array2::<f64>::zeros((n, d));
        for (i, mut row) in x.rows_mut().into_iter().enumerate() {
            for v in row.iter_mut() {
                let e = -30.0 + 68.5 * (rng.next_u32() as f64 / u32::MAX as f64);
                let sign = if rng.next_u32() & 1 == 0 { 1.0 } else { -1.0 };
                *v = sign * 10f64.powf(e).min(f64::from(f32::MAX));
                if i % 50 == 0 {
                    *v = f64::from(f32::MAX);
                }
                if i % 50 == 1 {
                    *v *= 1e-30;
                }
            }
        }
        for k in [2usize, 3] {
            let y: Vec<u32> = (0..n as u32).map(|i| i % k as u32).collect();
            let m = if k == 2 { 1 } else { k };
            let rows = || CompactRows::new(x.view(), &y).unwrap();
            let logistic = LogisticNet::new(rows(), m);
            let mlp = MlpNet {
                rows: rows(),
                h: 5,
                m,
            };
            let nets: [(&dyn Net, &str); 2] = [(&logistic, "logistic"), (&mlp, "mlp")];
            for (net, label) in nets {
                let p = params(net.n_params(), 1.5);
                for clip in [1e-3, 1.5, 1e3] {
                    let mut worst = 0.0f64;
                    for i in 0..n {
                        let mut sum = vec![0.0; net.n_params()];
                        net.clipped_grad_sum(&p, &[i], clip, &mut sum, &mut Vec::new());
                        let norm = sum.iter().map(|v| v * v).sum::<f64>().sqrt();
                        assert!(
                            norm <= clip,
                            "{label}, {k} classes, row {i}: {norm} > {clip}"
                        );
                        worst = worst.max(norm / clip);
                    }
                    // The clip binds on these rows: the largest contribution is at the bound.
                    assert!(worst > 0.999, "{label}: largest ‖g‖/C = {worst}");
                }
            }
        }
    }
}

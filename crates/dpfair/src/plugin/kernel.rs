//! The paper's kernel and bandwidth (Xue & Yu, Assumption 2 and §5; the authors' bandwidth cross-validation).
//!
//! * Kernel: the unnormalised Gaussian `K(u) = exp(−‖u‖²/2)`, `K_h(u) = h^{−d} K(u/h)`,
//!   `C_K = sup K = K(0) = 1` (§5 of the paper, "Gaussian kernel (C_K = 1)"; the `(2π)^{−d/2}`
//!   normaliser cancels in `η̃ = numerator / denominator`).
//! * Exact kernel sums `Σ_i w_i K((X_i − x)/h)`, batched and parallel, for the non-private
//!   references (bandwidth cross-validation, checks of the random-feature approximation).
//! * Bandwidth: a public rule (strict mode: uses only `n`, `d`, `ε`, never the data), a fixed
//!   value, or the authors' 3-fold cross-validation on the training data (non-private, `docs/deviations.md#fdp-fair-unaccounted-leaks-in-the-experiments`).

use crate::plugin::error::{Error, Result, invalid};
use crate::plugin::exp::exp_in_place;
use crate::plugin::split::permutation;
use ndarray::{Array2, ArrayView2, Axis};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// `K(u) = exp(−‖u‖²/2)` for `‖u‖² = sq_norm` ([`crate::plugin::exp::exp`]: the value the
/// vectorised kernel sums compute, bit for bit).
pub fn gaussian_kernel(sq_norm: f64) -> f64 {
    crate::plugin::exp::exp(-0.5 * sq_norm)
}

/// How the bandwidth `h` is chosen.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "rule", rename_all = "kebab-case")]
pub enum Bandwidth {
    /// A value fixed in advance (public).
    Fixed { h: f64 },
    /// [`public_rule`]: a function of the public `n`, `d`, `ε` only (strict default).
    #[default]
    Public,
    /// The authors' procedure (`cv_select_h`): `folds`-fold cross-validation of the
    /// pooled non-private Nadaraya–Watson classifier on the training data. Reads private data
    /// without noise: allowed only with `--accounting paper`, which records it as a
    /// non-private step.
    CrossValidated { grid: Vec<f64>, folds: usize },
}

impl Bandwidth {
    /// The synthetic-experiment grid of the code, `{0.10, 0.15, …, 0.35}`, 3 folds.
    pub fn paper_cv() -> Self {
        Bandwidth::CrossValidated {
            grid: vec![0.10, 0.15, 0.20, 0.25, 0.30, 0.35],
            folds: 3,
        }
    }

    /// Whether choosing `h` reads the private data.
    pub fn reads_data(&self) -> bool {
        matches!(self, Bandwidth::CrossValidated { .. })
    }
}

/// Lower and upper clamp of the public rule.
pub const PUBLIC_RULE_RANGE: (f64, f64) = (0.05, 0.5);

/// Public bandwidth rule from the rate-optimal order of Theorem 6 (automatically-fair regime):
/// `h = max{ n^{−1/(2β+d)}, (n ε)^{−1/(β+d)} }` (the second term is `(n²ε²)^{−1/(2β+2d)}`),
/// clamped to [`PUBLIC_RULE_RANGE`], with smoothness β = 1 (Lipschitz `η`, the conservative
/// choice: on the synthetic design, whose `η` is a steep arctan, β = 2 gives h ≈ 0.25 at n = 4,500
/// and a test error 0.03 above h ≈ 0.12; see BENCHMARKS.md). It reads only the public training
/// size `n`, the dimension and the budget (Theorem 6's tuning; `docs/deviations.md#fdp-fair-unaccounted-leaks-in-the-experiments`).
pub fn public_rule(n: usize, d: usize, epsilon: f64) -> f64 {
    const BETA: f64 = 1.0;
    let n = n.max(1) as f64;
    let d = d as f64;
    let statistical = n.powf(-1.0 / (2.0 * BETA + d));
    let private = if epsilon.is_finite() {
        (n * epsilon).powf(-1.0 / (BETA + d))
    } else {
        0.0
    };
    statistical
        .max(private)
        .clamp(PUBLIC_RULE_RANGE.0, PUBLIC_RULE_RANGE.1)
}

fn sq_dist(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum()
}

/// Appends `−½·(‖r − x‖²·inv)` for every row `r` of `rows` (`m` rows of `x.len()` values, one
/// after another) to `out`: the kernel sums' exponents. Bit for bit [`sq_dist`]'s sum (terms added
/// left to right; its start, ±0, leaves the first square unchanged), with the dimension fixed at
/// compile time for the small dimensions of the papers' designs (no loop over it per pair).
fn push_exponents(rows: &[f64], m: usize, x: &[f64], inv: f64, out: &mut Vec<f64>) {
    fn fixed<const D: usize>(rows: &[f64], x: &[f64], inv: f64, out: &mut Vec<f64>) {
        let x: [f64; D] = x.try_into().expect("dimension D");
        out.extend(rows.chunks_exact(D).map(|r| {
            let mut s = (r[0] - x[0]) * (r[0] - x[0]);
            for k in 1..D {
                s += (r[k] - x[k]) * (r[k] - x[k]);
            }
            -0.5 * (s * inv)
        }));
    }
    match x.len() {
        1 => fixed::<1>(rows, x, inv, out),
        2 => fixed::<2>(rows, x, inv, out),
        3 => fixed::<3>(rows, x, inv, out),
        4 => fixed::<4>(rows, x, inv, out),
        0 => out.extend(std::iter::repeat_n(-0.5 * (sq_dist(&[], x) * inv), m)),
        d => out.extend(rows.chunks_exact(d).map(|r| -0.5 * (sq_dist(r, x) * inv))),
    }
}

/// Evaluation points whose kernel sums [`kernel_sums_by_cell`] advances together.
const EVAL_BLOCK: usize = 8;

/// Exact kernel sums: `out[j][c] = Σ_{i : cell[i] = c} K((X_i − x_j)/h)` (unscaled kernel, no
/// `h^{−d}`), for `c < n_cells`. `O(n·m·d)`, parallel over evaluation points.
pub fn kernel_sums_by_cell(
    train: ArrayView2<f64>,
    cell: &[usize],
    n_cells: usize,
    eval: ArrayView2<f64>,
    h: f64,
) -> Result<Array2<f64>> {
    if train.ncols() != eval.ncols() {
        return Err(invalid(
            "features",
            format!(
                "training points have {} columns, evaluation points {}",
                train.ncols(),
                eval.ncols()
            ),
        ));
    }
    if cell.len() != train.nrows() {
        return Err(invalid(
            "cell",
            format!("{} labels for {} rows", cell.len(), train.nrows()),
        ));
    }
    if !(h.is_finite() && h > 0.0) {
        return Err(invalid(
            "bandwidth",
            format!("must be finite and > 0, got {h}"),
        ));
    }
    let train = train.as_standard_layout().into_owned();
    let inv = 1.0 / (h * h);
    // Feature rows repeat in real data (Adult's three features take ≈ 3,900 distinct values in
    // 48,842 rows): the kernel is computed once per pair of distinct rows and each distinct
    // evaluation point is summed once, over the training rows in their order, so every sum is
    // the direct double loop's, bit for bit.
    let (train_id, train_rows) = distinct_rows(train.view());
    let (eval_id, eval_rows) = distinct_rows(eval);
    let distinct_train: Vec<f64> = train_rows
        .iter()
        .flat_map(|&i| train.row(i).to_vec())
        .collect();
    // Distinct evaluation points go in blocks of `EVAL_BLOCK`: one pass over the training rows
    // advances all of a block's sums (the same additions, in the same order, for each point).
    let sums: Vec<Vec<f64>> = eval_rows
        .par_chunks(EVAL_BLOCK)
        .flat_map_iter(|block| {
            // `kernels[id][b]`: the kernel of distinct training row `id` at the block's point
            // `b` (every value the one `exp` gives its argument, whatever the slice around it).
            let m = train_rows.len();
            let mut exponents = Vec::with_capacity(m);
            let mut kernels = vec![[0.0f64; EVAL_BLOCK]; m];
            for (b, &j) in block.iter().enumerate() {
                let x = eval.row(j).to_vec();
                exponents.clear();
                push_exponents(&distinct_train, m, &x, inv, &mut exponents);
                kernels
                    .iter_mut()
                    .zip(&exponents)
                    .for_each(|(row, &v)| row[b] = v);
            }
            exp_in_place(kernels.as_flattened_mut());
            // One slot per cell, and a last one for the rows of no cell (branch-free).
            let mut acc = vec![[0.0f64; EVAL_BLOCK]; n_cells + 1];
            for (&c, &id) in cell.iter().zip(&train_id) {
                let (a, k) = (&mut acc[c.min(n_cells)], &kernels[id]);
                for b in 0..EVAL_BLOCK {
                    a[b] += k[b];
                }
            }
            (0..block.len()).map(move |b| acc[..n_cells].iter().map(|a| a[b]).collect::<Vec<f64>>())
        })
        .collect();
    let mut out = Array2::<f64>::zeros((eval.nrows(), n_cells));
    for (mut row, &id) in out.axis_iter_mut(Axis(0)).zip(&eval_id) {
        row.iter_mut().zip(&sums[id]).for_each(|(o, s)| *o = *s);
    }
    Ok(out)
}

/// The distinct rows of `x` (bitwise equal features): each row's index among them, and the
/// first row of each, in order of appearance.
fn distinct_rows(x: ArrayView2<f64>) -> (Vec<usize>, Vec<usize>) {
    let mut seen: HashMap<Vec<u64>, usize> = HashMap::new();
    let mut first = Vec::new();
    let ids = x
        .outer_iter()
        .enumerate()
        .map(|(i, r)| {
            let key: Vec<u64> = r.iter().map(|v| v.to_bits()).collect();
            *seen.entry(key).or_insert_with(|| {
                first.push(i);
                first.len() - 1
            })
        })
        .collect();
    (ids, first)
}

/// Rows of [`out_of_fold_sums`]'s outer loop taken together: their sums over the rows after the
/// block advance in `OUTER_BLOCK` independent lanes, each still in increasing order.
const OUTER_BLOCK: usize = 8;

/// For every row `j`, `Σ_{i : fold[i] ≠ fold[j], y_i = c} K((X_i − X_j)/h)` for `c ∈ {0, 1}`:
/// the kernel sums of [`cross_validate`]'s held-out rows over the other folds' rows, as
/// [`kernel_sums_by_cell`] computes them (from 0, over the training rows in increasing order,
/// the same products) but with each pair's kernel computed once for both of its rows
/// (`K` and the squared distance are symmetric bit for bit: `(a − b)² = (b − a)²`).
///
/// Every row's sum receives its terms in increasing order of the other row: the rows before it
/// while they are the outer row, then the rows after it as the outer row. The outer rows go in
/// blocks of [`OUTER_BLOCK`]: the pairs inside a block first, in row-major order, then the rows
/// after the block, each receiving the block's terms in order while the block's own sums advance
/// side by side. Branch-free: a pair in the same fold, or a label other than 0/1 (which counts in
/// no cell, as in `kernel_sums_by_cell`), adds `+0.0`, which leaves a sum of non-negative terms
/// unchanged bit for bit.
fn out_of_fold_sums(x: ArrayView2<f64>, y: &[u8], fold: &[usize], h: f64) -> Result<Vec<[f64; 2]>> {
    if !(h.is_finite() && h > 0.0) {
        return Err(invalid(
            "bandwidth",
            format!("must be finite and > 0, got {h}"),
        ));
    }
    let inv = 1.0 / (h * h);
    let n = x.nrows();
    let d = x.ncols();
    let all = x.to_slice().expect("standard layout");
    let rows: Vec<&[f64]> = if d == 0 {
        vec![&[]; n]
    } else {
        all.chunks_exact(d).collect()
    };
    // Label weights: 1.0 in the row's own cell, 0.0 in the other (both 0.0 outside {0, 1}).
    let weights = |c: u8| -> Vec<f64> { y.iter().map(|&l| f64::from(u8::from(l == c))).collect() };
    let (w0, w1) = (weights(0), weights(1));
    let (mut s0, mut s1) = (vec![0.0f64; n], vec![0.0f64; n]);
    // `kernels[b]`: row `start + b`'s kernels with every row after it, exponentiated together.
    let mut kernels: Vec<Vec<f64>> = (0..OUTER_BLOCK).map(|_| Vec::with_capacity(n)).collect();
    for start in (0..n).step_by(OUTER_BLOCK) {
        let end = (start + OUTER_BLOCK).min(n);
        for (b, k) in kernels.iter_mut().enumerate().take(end - start) {
            k.clear();
            push_exponents(
                &all[(start + b + 1) * d..],
                n - start - b - 1,
                rows[start + b],
                inv,
                k,
            );
            exp_in_place(k);
        }
        // Pairs inside the block, row-major.
        for i in start..end {
            for j in i + 1..end {
                let k = if fold[i] == fold[j] {
                    0.0
                } else {
                    kernels[i - start][j - i - 1]
                };
                s0[j] += k * w0[i];
                s1[j] += k * w1[i];
                s0[i] += k * w0[j];
                s1[i] += k * w1[j];
            }
        }
        // The rows after the block.
        let lanes = end - start;
        let mut own = [[0.0f64; 2]; OUTER_BLOCK];
        let mut outer = [(0usize, 0.0f64, 0.0f64); OUTER_BLOCK];
        for b in 0..lanes {
            own[b] = [s0[start + b], s1[start + b]];
            outer[b] = (fold[start + b], w0[start + b], w1[start + b]);
        }
        for j in end..n {
            let (fj, (mut t0, mut t1)) = (fold[j], (s0[j], s1[j]));
            for b in 0..lanes {
                let (fi, wi0, wi1) = outer[b];
                let k = kernels[b][j - start - b - 1];
                let k = if fi == fj { 0.0 } else { k };
                t0 += k * wi0;
                t1 += k * wi1;
                own[b][0] += k * w0[j];
                own[b][1] += k * w1[j];
            }
            s0[j] = t0;
            s1[j] = t1;
        }
        for b in 0..lanes {
            [s0[start + b], s1[start + b]] = own[b];
        }
    }
    Ok(s0.into_iter().zip(s1).map(|(a, b)| [a, b]).collect())
}

/// The authors' bandwidth cross-validation (`cv_select_h`): random fold labels (a
/// balanced assignment shuffled with `seed`); for each `h` and fold, the pooled (group-blind)
/// Nadaraya–Watson `η̂ = S_1/(S_0+S_1)` from the other folds (training mean of `Y` where
/// `S_0+S_1 ≤ 1e−12`), prediction `1{η̂ ≥ 1/2}`, validation error; the `h` with the smallest mean
/// error wins (first on ties). **Non-private** (`docs/deviations.md#fdp-fair-unaccounted-leaks-in-the-experiments`).
pub fn cross_validate(
    x: ArrayView2<f64>,
    y: &[u8],
    grid: &[f64],
    folds: usize,
    seed: u64,
) -> Result<f64> {
    if grid.is_empty() {
        return Err(invalid("bandwidth.grid", "empty grid"));
    }
    if folds < 2 || folds > x.nrows() {
        return Err(invalid(
            "bandwidth.folds",
            format!("need 2 ≤ folds ≤ n, got {folds}"),
        ));
    }
    if y.len() != x.nrows() {
        return Err(Error::InvalidData(format!(
            "{} labels for {} rows",
            y.len(),
            x.nrows()
        )));
    }
    let n = x.nrows();
    // `sample(rep(1:folds, length.out = n))`: a balanced assignment in random order.
    let fold: Vec<usize> = permutation(n, seed)
        .into_iter()
        .map(|i| i % folds)
        .collect();
    // Rows that rarely repeat (continuous features): every pair's kernel once, for both rows
    // (`out_of_fold_sums`); repeated rows (real data): the per-fold sums with their memo of
    // distinct rows. Both are the same sums, bit for bit.
    let x = x.as_standard_layout();
    let symmetric = if distinct_rows(x.view()).1.len() * 2 > n {
        grid.par_iter()
            .map(|&h| out_of_fold_sums(x.view(), y, &fold, h))
            .collect::<Result<Vec<_>>>()?
    } else {
        Vec::new()
    };
    let mut best = (f64::INFINITY, grid[0]);
    for (g, &h) in grid.iter().enumerate() {
        let mut err_sum = 0.0;
        for f in 0..folds {
            let train_rows: Vec<usize> = (0..n).filter(|&i| fold[i] != f).collect();
            let val_rows: Vec<usize> = (0..n).filter(|&i| fold[i] == f).collect();
            let cells: Vec<usize> = train_rows.iter().map(|&i| y[i] as usize).collect();
            let mean_y = cells.iter().sum::<usize>() as f64 / cells.len().max(1) as f64;
            let s = match symmetric.get(g) {
                Some(all) => {
                    Array2::from_shape_fn((val_rows.len(), 2), |(j, c)| all[val_rows[j]][c])
                }
                None => {
                    let xt = x.select(Axis(0), &train_rows);
                    let xv = x.select(Axis(0), &val_rows);
                    kernel_sums_by_cell(xt.view(), &cells, 2, xv.view(), h)?
                }
            };
            let wrong = val_rows
                .iter()
                .enumerate()
                .filter(|&(j, &i)| {
                    let den = s[[j, 0]] + s[[j, 1]];
                    let eta = if den <= 1e-12 {
                        mean_y
                    } else {
                        s[[j, 1]] / den
                    };
                    u8::from(eta >= 0.5) != y[i]
                })
                .count();
            err_sum += wrong as f64 / val_rows.len().max(1) as f64;
        }
        let err = err_sum / folds as f64;
        if err < best.0 {
            best = (err, h);
        }
    }
    Ok(best.1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn public_rule_uses_rates_and_clamps() {
        // n = 4500, d = 2, ε = 1: n^{−1/4} = 0.1219 beats (nε)^{−1/3} = 0.0606.
        assert!((public_rule(4500, 2, 1.0) - 4500f64.powf(-0.25)).abs() < 1e-12);
        // ε = 0.01: (nε)^{−1/3} = 45^{−1/3} = 0.2811 dominates.
        assert!((public_rule(4500, 2, 0.01) - 45f64.powf(-1.0 / 3.0)).abs() < 1e-12);
        // Tiny budget: the privacy term dominates and is clamped at 0.5.
        assert_eq!(public_rule(100, 2, 0.01), 0.5);
        assert_eq!(public_rule(10_000_000_000, 1, f64::INFINITY), 0.05);
    }

    /// The fixed-dimension exponents are `sq_dist`'s, bit for bit, in every dimension.
    #[test]
    fn exponents_equal_the_generic_squared_distance_bit_for_bit() {
        for d in 0..7 {
            let rows: Vec<f64> = (0..5 * d)
                .map(|i| ((i * 37) % 11) as f64 / 7.3 - 0.4)
                .collect();
            let x: Vec<f64> = (0..d).map(|k| 0.1 + k as f64 / 3.0).collect();
            let mut out = Vec::new();
            push_exponents(&rows, 5, &x, 1.0 / 0.09, &mut out);
            assert_eq!(out.len(), 5, "d = {d}");
            for (i, v) in out.iter().enumerate() {
                let r = &rows[i * d..(i + 1) * d];
                let want = -0.5 * (sq_dist(r, &x) * (1.0 / 0.09));
                assert_eq!(v.to_bits(), want.to_bits(), "d = {d}, row {i}");
            }
        }
    }

    #[test]
    fn kernel_sums_match_a_direct_loop() {
        let t = array![[0.1, 0.1], [0.2, 0.4], [0.9, 0.8]];
        let e = array![[0.0, 0.0], [0.5, 0.5]];
        let s = kernel_sums_by_cell(t.view(), &[0, 1, 1], 2, e.view(), 0.3).unwrap();
        for j in 0..2 {
            let mut want = [0.0; 2];
            for (i, c) in [0usize, 1, 1].iter().enumerate() {
                let d2 = (t[[i, 0]] - e[[j, 0]]).powi(2) + (t[[i, 1]] - e[[j, 1]]).powi(2);
                want[*c] += (-d2 / (2.0 * 0.09)).exp();
            }
            assert!((s[[j, 0]] - want[0]).abs() < 1e-12 && (s[[j, 1]] - want[1]).abs() < 1e-12);
        }
    }

    /// With repeated rows (the memo's case) every sum is the direct loop's, bit for bit.
    #[test]
    fn kernel_sums_with_repeated_rows_equal_the_direct_loop_exactly() {
        let t = Array2::from_shape_fn((40, 2), |(i, k)| ((i * (k + 3)) % 7) as f64 / 7.0);
        let e = Array2::from_shape_fn((15, 2), |(j, k)| ((j * (k + 2)) % 5) as f64 / 5.0);
        let cell: Vec<usize> = (0..40).map(|i| i % 3).collect();
        let s = kernel_sums_by_cell(t.view(), &cell, 2, e.view(), 0.3).unwrap();
        for j in 0..15 {
            let mut want = [0.0; 2];
            for i in 0..40 {
                if cell[i] < 2 {
                    let d2 = sq_dist(t.row(i).as_slice().unwrap(), e.row(j).as_slice().unwrap());
                    want[cell[i]] += gaussian_kernel(d2 * (1.0 / (0.3 * 0.3)));
                }
            }
            assert_eq!(
                [s[[j, 0]].to_bits(), s[[j, 1]].to_bits()],
                want.map(f64::to_bits)
            );
        }
    }

    /// The symmetric out-of-fold sums (continuous features) are the per-fold sums of
    /// `kernel_sums_by_cell`, bit for bit, for every row and both labels.
    #[test]
    fn out_of_fold_sums_equal_the_per_fold_sums_bit_for_bit() {
        // 123 rows: a last block shorter than `OUTER_BLOCK`; labels 0, 1 and 2 (in no cell).
        let n = 123;
        assert_ne!(n % OUTER_BLOCK, 0);
        let x = Array2::from_shape_fn((n, 2), |(i, k)| ((i * 37 + k * 11) % 101) as f64 / 97.0);
        let y: Vec<u8> = (0..n).map(|i| (i % 5 % 3) as u8).collect();
        let fold: Vec<usize> = permutation(n, 4).into_iter().map(|i| i % 3).collect();
        for h in [0.1, 0.35] {
            let all = out_of_fold_sums(x.view(), &y, &fold, h).unwrap();
            for f in 0..3 {
                let train: Vec<usize> = (0..n).filter(|&i| fold[i] != f).collect();
                let val: Vec<usize> = (0..n).filter(|&i| fold[i] == f).collect();
                let cells: Vec<usize> = train.iter().map(|&i| y[i] as usize).collect();
                let xt = x.select(Axis(0), &train);
                let xv = x.select(Axis(0), &val);
                let s = kernel_sums_by_cell(xt.view(), &cells, 2, xv.view(), h).unwrap();
                for (j, &row) in val.iter().enumerate() {
                    for c in 0..2 {
                        assert_eq!(all[row][c].to_bits(), s[[j, c]].to_bits(), "row {row}");
                    }
                }
            }
        }
        assert!(out_of_fold_sums(x.view(), &y, &fold, 0.0).is_err());
    }

    #[test]
    fn cross_validation_prefers_a_small_bandwidth_for_a_sharp_boundary() {
        // y = 1{x > 0.5} without noise: the smallest bandwidth classifies best.
        let n = 300;
        let x = Array2::from_shape_fn((n, 1), |(i, _)| (i as f64 + 0.5) / n as f64);
        let y: Vec<u8> = (0..n).map(|i| u8::from(x[[i, 0]] > 0.5)).collect();
        let h = cross_validate(x.view(), &y, &[0.02, 0.6, 1.5], 3, 1).unwrap();
        assert_eq!(h, 0.02);
        assert!(cross_validate(x.view(), &y, &[], 3, 1).is_err());
        assert!(cross_validate(x.view(), &y, &[0.1], 1, 1).is_err());
    }
}

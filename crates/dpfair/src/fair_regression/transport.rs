//! One-dimensional discrete optimal transport on the bin grid (Xian et al., Algorithm 1, lines 14–17), in
//! **bin-index units**: PMFs on `0..k`, cost `(j − ℓ)²`.
//!
//! * [`cdf`], [`ks`]: CDFs and the Kolmogorov–Smirnov distance `max_j |F_p(j) − F_q(j)|` (Xian et al., the KS distance).
//! * [`monotone_coupling`]: the unique optimal coupling for the strictly convex cost (Lemma B.9):
//!   `π(j,ℓ) = max(0, min(F_p(j), F_q(ℓ)) − max(F_p(j−1), F_q(ℓ−1)))`.
//! * [`quantile_average`]: the α = 0 closed form of the fixed-support barycenter (Xian et al., Algorithm 1, line 14): the
//!   `w`-weighted average of the groups' quantile functions, rounded to the nearest bin.

use serde::{Deserialize, Serialize};

/// The CDF `F(j) = Σ_{ℓ≤j} p(ℓ)`, with the last entry set to exactly 1 (the PMFs here are
/// probability vectors up to rounding, and exact end points keep the couplings' marginals exact).
pub fn cdf(p: &[f64]) -> Vec<f64> {
    let mut acc = 0.0;
    let mut f: Vec<f64> = p
        .iter()
        .map(|&x| {
            acc += x;
            acc
        })
        .collect();
    if let Some(last) = f.last_mut() {
        *last = 1.0;
    }
    f
}

/// PMF from a CDF: `p(j) = F(j) − F(j−1)`, `F(−1) = 0`.
pub fn pmf_from_cdf(f: &[f64]) -> Vec<f64> {
    let mut prev = 0.0;
    f.iter()
        .map(|&x| {
            let d = x - prev;
            prev = x;
            d
        })
        .collect()
}

/// Kolmogorov–Smirnov distance between two PMFs on the same grid (Xian et al., the KS distance).
pub fn ks(p: &[f64], q: &[f64]) -> f64 {
    ks_cdf(&cdf(p), &cdf(q))
}

/// Kolmogorov–Smirnov distance between two CDFs on the same grid.
pub fn ks_cdf(fp: &[f64], fq: &[f64]) -> f64 {
    fp.iter()
        .zip(fq)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max)
}

/// The largest pairwise KS distance among PMFs: `Δ_SP` of a known discrete output law (Xian et al., the KS distance).
pub fn max_pairwise_ks(pmfs: &[Vec<f64>]) -> f64 {
    let cdfs: Vec<Vec<f64>> = pmfs.iter().map(|p| cdf(p)).collect();
    max_pairwise_ks_cdf(&cdfs)
}

/// The largest pairwise KS distance among CDFs: `max_j (max_a F_a(j) − min_a F_a(j))`.
pub fn max_pairwise_ks_cdf(cdfs: &[Vec<f64>]) -> f64 {
    let k = cdfs.first().map_or(0, Vec::len);
    (0..k)
        .map(|j| {
            let (lo, hi) = cdfs
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), f| {
                    (lo.min(f[j]), hi.max(f[j]))
                });
            hi - lo
        })
        .fold(0.0, f64::max)
}

/// A sparse coupling: entries `(j, ℓ, mass)`, sorted by `j` then `ℓ`, positive masses only.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Coupling {
    pub k: usize,
    pub entries: Vec<(u32, u32, f64)>,
}

impl Coupling {
    /// Transport cost in index units: `Σ (j − ℓ)² π(j,ℓ)`.
    pub fn cost(&self) -> f64 {
        self.entries
            .iter()
            .map(|&(j, l, m)| {
                let d = j as f64 - l as f64;
                d * d * m
            })
            .sum()
    }

    /// Row sums (the first marginal).
    pub fn row_sums(&self) -> Vec<f64> {
        let mut r = vec![0.0; self.k];
        for &(j, _, m) in &self.entries {
            r[j as usize] += m;
        }
        r
    }

    /// Column sums (the second marginal).
    pub fn col_sums(&self) -> Vec<f64> {
        let mut c = vec![0.0; self.k];
        for &(_, l, m) in &self.entries {
            c[l as usize] += m;
        }
        c
    }

    /// No crossing (Lemma B.9): `π(i,ℓ) > 0` and `π(i',ℓ') > 0` with `i < i'` imply `ℓ ≤ ℓ'`.
    pub fn is_monotone(&self) -> bool {
        self.entries
            .windows(2)
            .all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1 || w[0].0 == w[1].0 && w[0].1 < w[1].1)
    }
}

/// The monotone (north-west-corner, quantile) coupling of two CDFs on `0..k` (Lemma B.9): the
/// unique optimal transport for the cost `(j − ℓ)²`. Both CDFs must be nondecreasing and end at
/// exactly one. Entry `(j, ℓ)` is the length of the overlap of the quantile intervals
/// `(F_p(j−1), F_p(j)]` and `(F_q(ℓ−1), F_q(ℓ)]`; there are at most `2k − 1` entries.
pub fn monotone_coupling(fp: &[f64], fq: &[f64]) -> Coupling {
    let k = fp.len();
    debug_assert_eq!(k, fq.len());
    let mut entries = Vec::with_capacity(2 * k);
    let (mut j, mut l) = (0usize, 0usize);
    while j < k && l < k {
        let lo = f64::max(
            if j == 0 { 0.0 } else { fp[j - 1] },
            if l == 0 { 0.0 } else { fq[l - 1] },
        );
        let hi = f64::min(fp[j], fq[l]);
        if hi > lo {
            entries.push((j as u32, l as u32, hi - lo));
        }
        match fp[j].partial_cmp(&fq[l]) {
            Some(std::cmp::Ordering::Less) => j += 1,
            Some(std::cmp::Ordering::Greater) => l += 1,
            _ => {
                j += 1;
                l += 1;
            }
        }
    }
    Coupling { k, entries }
}

/// `W_2²(p, q)` in index units, through the monotone coupling.
pub fn w2_squared(p: &[f64], q: &[f64]) -> f64 {
    monotone_coupling(&cdf(p), &cdf(q)).cost()
}

/// The α = 0 closed form (Xian et al., Algorithm 1, line 14): with `W = Σ_a w_a` and `Q_a` the quantile function of
/// group a's CDF in index units, the fixed-support barycenter has quantile function
/// `round(Σ_a (w_a/W) Q_a(u))`. Computed by merging the breakpoints of all CDFs: on each interval
/// between consecutive breakpoints every `Q_a` is constant. Returns the barycenter's PMF.
/// Rounding ties (the average exactly half-way) cost the same either way; they go up.
pub fn quantile_average(cdfs: &[Vec<f64>], w: &[f64]) -> Vec<f64> {
    let k = cdfs.first().map_or(0, Vec::len);
    let total: f64 = w.iter().sum();
    let mut q = vec![0.0; k];
    let mut idx = vec![0usize; cdfs.len()];
    let mut u = 0.0;
    loop {
        // Current quantile index of each group: the first bin whose CDF exceeds u.
        for (a, f) in cdfs.iter().enumerate() {
            while idx[a] + 1 < k && f[idx[a]] <= u {
                idx[a] += 1;
            }
        }
        let next = cdfs
            .iter()
            .zip(&idx)
            .map(|(f, &j)| f[j])
            .fold(f64::INFINITY, f64::min)
            .min(1.0);
        if next > u {
            let avg: f64 = idx
                .iter()
                .zip(w)
                .map(|(&j, &wa)| wa * j as f64)
                .sum::<f64>()
                / total;
            let r = (avg.round() as usize).min(k - 1);
            q[r] += next - u;
        }
        // Every CDF ends at exactly 1, so `next > u` until the last interval.
        if next >= 1.0 || next <= u {
            break;
        }
        u = next;
    }
    q
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotone_coupling_has_exact_marginals_and_no_crossing() {
        let p = [0.5, 0.25, 0.25];
        let q = [0.0, 0.75, 0.25];
        let c = monotone_coupling(&cdf(&p), &cdf(&q));
        assert!(c.is_monotone());
        for (a, b) in c.row_sums().iter().zip(p) {
            assert!((a - b).abs() < 1e-15);
        }
        for (a, b) in c.col_sums().iter().zip(q) {
            assert!((a - b).abs() < 1e-15);
        }
        // `docs/reference-values.md#fair-regression`: π_0 at α = 0 = [[0,0.5,0],[0,0.25,0],[0,0,0.25]], cost 0.5·1 = 0.5.
        assert_eq!(c.entries, vec![(0, 1, 0.5), (1, 1, 0.25), (2, 2, 0.25)]);
        assert!((c.cost() - 0.5).abs() < 1e-15);
    }

    #[test]
    fn ks_by_hand() {
        assert!((ks(&[0.5, 0.25, 0.25], &[0.0, 0.0, 1.0]) - 0.75).abs() < 1e-15);
        assert_eq!(ks(&[0.2, 0.8], &[0.2, 0.8]), 0.0);
    }

    #[test]
    fn quantile_average_of_worked_example() {
        // `docs/reference-values.md#fair-regression`: w = [2/3, 1/3], p_0 = [0.5, 0.25, 0.25], p_1 = [0, 0, 1] → q = [0, 0.75, 0.25].
        let q = quantile_average(
            &[cdf(&[0.5, 0.25, 0.25]), cdf(&[0.0, 0.0, 1.0])],
            &[2.0 / 3.0, 1.0 / 3.0],
        );
        assert!((q[0]).abs() < 1e-15 && (q[1] - 0.75).abs() < 1e-15 && (q[2] - 0.25).abs() < 1e-15);
    }
}

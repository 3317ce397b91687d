//! The baselines the reproduction compares with (Chzhen et al. (2020), as the authors' repository re-implements it; the authors' notebooks): no post-processing (the scores
//! themselves), binning only (α = ∞, ε = ∞: every score to its bin's midpoint), and the
//! non-private quantile averaging of Chzhen et al. (2020), exact statistical parity.

use super::FairRegressionError;
use super::histogram::Grid;
use rand::{Rng, RngExt};
use rand_distr::Distribution;
use serde::{Deserialize, Serialize};

/// Binning only: `h(y)`, each score mapped to its bin's midpoint (Xian et al., Algorithm 1, lines 2–3).
pub fn binning(grid: &Grid, scores: &[f64]) -> Vec<f64> {
    scores.iter().map(|&y| grid.midpoint(grid.bin(y))).collect()
}

/// Tie-breaking jitter as the authors' code adds it: `N(0, ε_mach²)` with ε_mach ≈ 2.2e-16 (so,
/// after rounding, scores move by at most an ulp and only part of the ties are broken; matching
/// this matters on data with many ties, such as Law School GPAs). Non-private baseline: the
/// simulation-only sampler of `rand_distr` is fine here.
fn jitter<R: Rng + ?Sized>(rng: &mut R, x: f64) -> f64 {
    let z: f64 = rand_distr::StandardNormal.sample(rng);
    x + f64::EPSILON * z
}

/// Chzhen, Denis, Hebiri, Oneto, Pontil (2020), "Fair regression with Wasserstein barycenters":
/// the plug-in α = 0 post-processor, as the authors' repository re-implements it (Chzhen et al. 2020).
/// Non-private: it stores the training scores.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QuantileAveraging {
    /// Empirical group proportions (0 for a declared group absent from the data).
    pub weights: Vec<f64>,
    /// Per group, the sorted first half of its (shuffled, jittered) scores: the CDF estimate.
    calibration: Vec<Vec<f64>>,
    /// Per group, the sorted second half: the quantile estimate.
    quantiles: Vec<Vec<f64>>,
}

impl QuantileAveraging {
    /// Fit on scores with group codes in `0..m`: shuffle each group's scores, split them into halves
    /// (the first ⌈n_a/2⌉ for the CDF, the rest for the quantiles), sort each. Every group present
    /// must have at least 2 rows.
    pub fn fit<R: Rng + ?Sized>(
        scores: &[f64],
        groups: &[u32],
        m: usize,
        rng: &mut R,
    ) -> Result<Self, FairRegressionError> {
        if scores.len() != groups.len() || scores.is_empty() {
            return Err(FairRegressionError::invalid(
                "scores",
                format!("{} scores for {} group codes", scores.len(), groups.len()),
            ));
        }
        let mut by_group = vec![Vec::new(); m];
        for (i, (&y, &a)) in scores.iter().zip(groups).enumerate() {
            if y.is_nan() {
                return Err(FairRegressionError::invalid(
                    "scores",
                    format!("row {i} is NaN"),
                ));
            }
            by_group
                .get_mut(a as usize)
                .ok_or_else(|| {
                    FairRegressionError::invalid("groups", format!("row {i}: code {a} ≥ {m}"))
                })?
                .push(jitter(rng, y));
        }
        let n = scores.len() as f64;
        let weights = by_group.iter().map(|g| g.len() as f64 / n).collect();
        let (mut calibration, mut quantiles) = (Vec::new(), Vec::new());
        for (a, mut g) in by_group.into_iter().enumerate() {
            if g.len() == 1 {
                return Err(FairRegressionError::invalid(
                    "groups",
                    format!("group {a} has a single row; quantile averaging needs two"),
                ));
            }
            for i in (1..g.len()).rev() {
                g.swap(i, rng.random_range(0..=i));
            }
            let mut q = g.split_off(g.len().div_ceil(2));
            g.sort_by(f64::total_cmp);
            q.sort_by(f64::total_cmp);
            calibration.push(g);
            quantiles.push(q);
        }
        Ok(QuantileAveraging {
            weights,
            calibration,
            quantiles,
        })
    }

    /// `Σ_b w_b · Q̂_b(F̂_a(x))`: the rank u of x among group a's calibration half, then every
    /// group's quantile at u (index `max(⌈u·n_b⌉ − 1, 0)`), averaged with the group proportions.
    pub fn predict<R: Rng + ?Sized>(
        &self,
        scores: &[f64],
        groups: &[u32],
        rng: &mut R,
    ) -> Result<Vec<f64>, FairRegressionError> {
        scores
            .iter()
            .zip(groups)
            .enumerate()
            .map(|(i, (&x, &a))| {
                let cal = self
                    .calibration
                    .get(a as usize)
                    .filter(|c| !c.is_empty())
                    .ok_or_else(|| {
                        FairRegressionError::invalid(
                            "groups",
                            format!("row {i}: group {a} had no training rows"),
                        )
                    })?;
                let x = jitter(rng, x);
                let u = cal.partition_point(|&v| v < x) as f64 / cal.len() as f64;
                Ok(self
                    .quantiles
                    .iter()
                    .zip(&self.weights)
                    .filter(|(q, _)| !q.is_empty())
                    .map(|(q, w)| {
                        let idx = ((u * q.len() as f64).ceil() as usize).saturating_sub(1);
                        w * q[idx.min(q.len() - 1)]
                    })
                    .sum())
            })
            .collect()
    }
}
